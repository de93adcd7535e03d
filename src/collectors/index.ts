/**
 * The collectors besides discovery, one under each name: the set the runner is handed. Per-site ones
 * (`perSite`): `fetch` asks the API client (bound to the collector's name; HTTP lives there),
 * `collect` is a pure function from the validated response to samples, and `requestsPerSite` says what
 * one run costs per site. Account-level ones walk resources of their own (the DNS zones, for
 * certificates). `createCollectors` makes a fresh set for each runner, since some remember things
 * between runs.
 */
import type { BackingOffCollector } from "../config/schema.js";
import { backingOff } from "./backingOff.js";
import { backupsCollector } from "./backupsCollector.js";
import type { ChangeBackoffSettings } from "./changeBackoff.js";
import { CertificateCollector } from "./certificateScan.js";
import { domainsCollector } from "./domains.js";
import { AccessCollector } from "./access.js";
import { GitCollector } from "./gitCollector.js";
import { performanceCollector } from "./performance.js";
import { securityCollector } from "./security.js";
import { statisticsCollector } from "./statistics.js";
import { TrafficCollector } from "./traffic.js";
import type { CollectorEnv, CollectorSet } from "./types.js";
import { usageCollector } from "./usage.js";

/** No backing off: every site at every run. */
const EVERY_RUN: ChangeBackoffSettings = { runEveryMs: 0, maxIntervalMs: 0 };

export function createCollectors(env: CollectorEnv): CollectorSet {
  const backoff = (name: BackingOffCollector) => env.backoff?.[name] ?? EVERY_RUN;
  return {
    traffic: new TrafficCollector({ ...env.traffic, now: env.now }),
    statistics: statisticsCollector(env.statistics.periods),
    usage: usageCollector,
    performance: performanceCollector(env.performance.strategies),
    security: backingOff(securityCollector, backoff("security"), env.now),
    domains: backingOff(domainsCollector, backoff("domains"), env.now),
    backups: backingOff(backupsCollector, backoff("backups"), env.now),
    git: backingOff(new GitCollector(env), backoff("git"), env.now),
    certificates: new CertificateCollector(env, backoff("certificates")),
    access: backingOff(new AccessCollector(), backoff("access"), env.now),
  };
}

/** Ask again at the next run about a site (undefined: every site) whose answers may have changed. */
export function wakeCollectors(
  set: CollectorSet,
  names: readonly BackingOffCollector[],
  siteId: number | undefined,
): void {
  for (const name of names) set[name].wake(siteId);
}
