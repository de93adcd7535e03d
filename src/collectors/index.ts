/**
 * The collectors besides discovery, one under each name: the set the runner is handed. Per-site ones
 * (`perSite`): `fetch` asks the API client (bound to the collector's name; HTTP lives there),
 * `collect` is a pure function from the validated response to samples, and `requestsPerSite` says what
 * one run costs per site. Account-level ones walk resources of their own (the DNS zones, for
 * certificates). `createCollectors` makes a fresh set for each runner, since some remember things
 * between runs.
 */
import { backupsCollector } from "./backupsCollector.js";
import { CertificateCollector } from "./certificateScan.js";
import { domainsCollector } from "./domains.js";
import { GitCollector } from "./gitCollector.js";
import { performanceCollector } from "./performance.js";
import { securityCollector } from "./security.js";
import { statisticsCollector } from "./statistics.js";
import { TrafficCollector } from "./traffic.js";
import type { CollectorEnv, CollectorSet } from "./types.js";
import { usageCollector } from "./usage.js";

export function createCollectors(env: CollectorEnv): CollectorSet {
  return {
    traffic: new TrafficCollector({ ...env.traffic, now: env.now }),
    statistics: statisticsCollector(env.statistics.periods),
    usage: usageCollector,
    performance: performanceCollector(env.performance.strategies),
    security: securityCollector,
    domains: domainsCollector,
    backups: backupsCollector,
    git: new GitCollector(env),
    certificates: new CertificateCollector(env),
  };
}
