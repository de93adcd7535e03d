/**
 * Rate limits and the request budget: the rate-limit headers the platform sent, the requests per
 * second this account's size plans under the schedules (the daemon's own planning, for the site
 * count the listing gave), and how many sites api.maxRequestsPerSecond covers.
 */
import type { ProbeAnswer } from "../api/probe.js";
import type { Site } from "../api/schemas.js";
import { createCollectors } from "../collectors/index.js";
import { UNKEPT_TRAFFIC_STATE } from "../collectors/trafficState.js";
import { durationMs } from "../config/duration.js";
import { quietShare } from "../collectors/changeBackoff.js";
import { BACKING_OFF_COLLECTORS, type BackingOffCollector, type Config } from "../config/schema.js";
import { SiteDiscovery } from "../discovery/discovery.js";
import { backoffSettings, trafficPollingSettings } from "../scheduling/collection.js";
import { coverageOf, coverageSentence, coverageWays, type Coverage } from "../scheduling/coverage.js";
import { collectorSources, makePlan } from "../scheduling/plan.js";
import type { Finding } from "./types.js";

const RATE_LIMIT_HEADER = /^(x-)?rate-?limit|^retry-after$/i;

const isBackingOff = (name: string): name is BackingOffCollector =>
  (BACKING_OFF_COLLECTORS as readonly string[]).includes(name);

/** Requests per second this many sites plan: the collectors' schedules and the log streams' idle floor. */
export function plannedFor(
  config: Config,
  sites: number,
): { total: number; perSite: number; bySource: Record<string, number>; coverage: Coverage } {
  const fake = Array.from(
    { length: sites },
    (_, i) => ({ id: i + 1, name: `site-${i + 1}`, state: "live", tags: [] }) as Site,
  );
  const backoff = backoffSettings(config.collectors);
  const collectors = createCollectors({
    now: Date.now,
    concurrency: 1,
    traffic: {
      polling: trafficPollingSettings(config.collectors.traffic),
      state: UNKEPT_TRAFFIC_STATE,
    },
    performance: config.collectors.performance,
    statistics: config.collectors.statistics,
    backoff,
  });
  const costs = [
    {
      name: "inventory" as const,
      plannedRequestsPerRun: SiteDiscovery.requestsPerListing(fake.length),
      schedule: config.collectors.inventory.schedule,
    },
    ...Object.values(collectors)
      .filter((c) => config.collectors[c.name].enabled)
      .map((c) => ({
        name: c.name,
        // The steady state: traffic polls idle and non-live sites less often than every run; quiet sites
        // are asked at their collectors' maxInterval, as quiet log streams at logs.maxPollInterval.
        plannedRequestsPerRun:
          (c.plannedRequestsPerRun?.(fake) ?? c.requestsPerRun(fake)) *
          (isBackingOff(c.name) ? quietShare(backoff[c.name]) : 1),
        schedule: config.collectors[c.name].schedule,
      })),
  ];
  const sources = collectorSources(costs);
  if (config.logs.enabled) {
    // Quiet streams: each read once per logs.maxPollInterval; with webhooks, activity logs (the
    // account's one more) once per logs.activityPollInterval besides their events.
    const { streams: kinds, maxPollInterval, activityPollInterval } = config.logs;
    const activity = kinds.includes("activity") ? sites + 1 : 0;
    const others = sites * kinds.filter((k) => k !== "activity").length;
    const pollSeconds = durationMs(maxPollInterval) / 1000;
    const activitySeconds = config.webhooks.enabled
      ? Math.max(pollSeconds, durationMs(activityPollInterval) / 1000)
      : pollSeconds;
    sources.push({ source: "logs", requestsPerSecond: others / pollSeconds + activity / activitySeconds });
  }
  const plan = makePlan(sources, config.api.maxRequestsPerSecond);
  const coverage = coverageOf(sources, sites, config.api.maxRequestsPerSecond);
  return {
    total: plan.total,
    perSite: coverage.perSite,
    coverage,
    bySource: Object.fromEntries(
      sources.map((s) => [s.source, Math.round(s.requestsPerSecond * 1000) / 1000]),
    ),
  };
}

export function budgetFindings(
  config: Config,
  answers: readonly ProbeAnswer[],
  siteCount: number | undefined,
): Finding[] {
  const headers = new Map<string, string>();
  for (const a of answers) {
    for (const [name, value] of Object.entries(a.headers)) {
      if (RATE_LIMIT_HEADER.test(name) && value !== undefined) headers.set(name, String(value));
    }
  }
  const findings: Finding[] = [
    {
      id: "rate-limit-headers",
      section: "budget",
      title: "Rate-limit headers",
      verdict: "pass",
      summary:
        headers.size > 0
          ? `the platform sent ${[...headers].map(([k, v]) => `${k}: ${v}`).join(", ")}`
          : "the platform sent no rate-limit headers (its limits are not documented; api.maxRequestsPerSecond is the exporter's own)",
      details: Object.fromEntries(headers),
    },
  ];
  if (siteCount === undefined) return findings;
  const budget = config.api.maxRequestsPerSecond;
  const plan = plannedFor(config, siteCount);
  const c = plan.coverage;
  const covers = c.covers;
  const fits = plan.total <= budget;
  findings.push({
    id: "budget",
    section: "budget",
    title: "Planned requests against api.maxRequestsPerSecond",
    verdict: !fits ? "fail" : c.tight ? "warn" : "pass",
    summary: `${siteCount} sites (before filters) plan ${plan.total.toFixed(2)} requests/s against a budget of ${budget}/s; ${coverageSentence(c, siteCount, "listed")}`,
    ...(c.tight ? { fix: coverageWays(c, config.sites.shard.count) } : {}),
    details: { plannedRequestsPerSecond: plan.bySource, perSite: plan.perSite, sitesCovered: covers },
  });
  return findings;
}
