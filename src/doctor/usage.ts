/**
 * Which endpoints each collector, log stream and the webhook receiver use: what doctor asks once each,
 * and whom a failing endpoint concerns. A test runs every collector against a recording API and
 * fails when this table and the collectors disagree.
 */
import type { EndpointName } from "../api/endpoints.js";
import type { LogStream } from "../api/schemas.js";
import type { CollectorName, Config } from "../config/schema.js";

export const COLLECTOR_ENDPOINTS: Record<CollectorName, readonly EndpointName[]> = {
  inventory: ["sites", "account", "phpVersions"],
  traffic: ["trafficMetrics"],
  statistics: ["statistics"],
  usage: ["usageReport"],
  performance: ["performanceReport"],
  security: ["pluginAlerts", "themeAlerts"],
  domains: ["domains"],
  backups: ["backups", "ondemandBackups", "restores"],
  git: ["gitHistory", "gitConfig"],
  access: ["cmsUsers"],
  certificates: ["zones", "zoneRecords", "recordSsl"],
};

export const STREAM_ENDPOINTS: Record<LogStream, readonly EndpointName[]> = {
  php: ["phpLogs"],
  server: ["serverLogs"],
  activity: ["siteActivity", "accountActivity"],
};

/** Site refreshes after webhook events. */
export const WEBHOOK_ENDPOINTS: readonly EndpointName[] = ["site"];

/** Each endpoint the configuration uses, with who uses it (`collectors.traffic`, `logs.streams: php`, …). */
export function endpointsInUse(config: Config): Map<EndpointName, string[]> {
  const users = new Map<EndpointName, string[]>();
  const add = (names: readonly EndpointName[], who: string) => {
    for (const name of names) users.set(name, [...(users.get(name) ?? []), who]);
  };
  for (const [collector, names] of Object.entries(COLLECTOR_ENDPOINTS) as Array<
    [CollectorName, EndpointName[]]
  >) {
    // Discovery runs whatever its `enabled` says: without the site list nothing runs.
    if (collector === "inventory" || config.collectors[collector].enabled)
      add(names, `collectors.${collector}`);
  }
  if (config.logs.enabled) {
    for (const stream of config.logs.streams) add(STREAM_ENDPOINTS[stream], `logs.streams: ${stream}`);
  }
  if (config.webhooks.enabled) add(WEBHOOK_ENDPOINTS, "webhooks");
  return users;
}
