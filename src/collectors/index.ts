/**
 * The per-site collectors: `fetch` asks the API client (HTTP lives there),
 * `collect` is a pure function from the validated response to samples.
 */
import type {
  BackupEntry,
  Domain,
  MetricsResult,
  PerformanceReport,
  Site,
  Statistics,
  UsageReportEntry,
} from "../api/schemas.js";
import type { SecurityAlertGroup, SitehostApi } from "../api/types.js";
import type { CollectorName } from "../config/schema.js";
import type { Sample } from "../metrics/sample.js";
import { collectBackups } from "./backups.js";
import { collectDomains } from "./domains.js";
import { collectPerformance } from "./performance.js";
import { collectSecurity } from "./security.js";
import { collectStatistics } from "./statistics.js";
import { collectTraffic, TRAFFIC_QUERY } from "./traffic.js";
import { collectUsage } from "./usage.js";

export interface SiteCollector<Input = unknown> {
  name: Exclude<CollectorName, "inventory">;
  fetch(api: SitehostApi, site: Site, signal?: AbortSignal): Promise<Input>;
  collect(site: Site, input: Input, nowMs: number): Sample[];
}

const define = <I>(c: SiteCollector<I>): SiteCollector<unknown> => c as unknown as SiteCollector<unknown>;

export const SITE_COLLECTORS: readonly SiteCollector[] = [
  define<MetricsResult>({
    name: "traffic",
    fetch: (api, site, signal) => api.getTrafficMetrics(site.id, TRAFFIC_QUERY, { signal }),
    collect: (site, input) => collectTraffic(site, input),
  }),
  define<Statistics>({
    name: "statistics",
    fetch: (api, site, signal) => api.getStatistics(site.id, { signal }),
    collect: (site, input) => collectStatistics(site, input),
  }),
  define<UsageReportEntry[]>({
    name: "usage",
    fetch: async (api, site, signal) => (await api.getUsageReport(site.id, { signal })).items,
    collect: (site, input) => collectUsage(site, input),
  }),
  define<PerformanceReport>({
    name: "performance",
    fetch: (api, site, signal) => api.getLatestPerformanceReport(site.id, { signal }),
    collect: (site, input) => collectPerformance(site, input),
  }),
  define<{ plugins: SecurityAlertGroup[]; themes: SecurityAlertGroup[] }>({
    name: "security",
    fetch: async (api, site, signal) => {
      const [plugins, themes] = await Promise.all([
        api.getSecurityAlerts(site.id, "plugins", { signal }),
        api.getSecurityAlerts(site.id, "themes", { signal }),
      ]);
      return { plugins: plugins.items, themes: themes.items };
    },
    collect: (site, input) => [
      ...collectSecurity(site, "plugin", input.plugins),
      ...collectSecurity(site, "theme", input.themes),
    ],
  }),
  define<Domain[]>({
    name: "domains",
    fetch: async (api, site, signal) => (await api.getDomains(site.id, { signal })).items,
    collect: (site, input) => collectDomains(site, input),
  }),
  define<BackupEntry[]>({
    name: "backups",
    fetch: async (api, site, signal) => (await api.getBackups(site.id, { signal })).items,
    collect: (site, input) => collectBackups(site, input),
  }),
];

/** API requests one run of a collector makes per site (for the request-budget docs and benchmark). */
export const REQUESTS_PER_SITE: Record<string, number> = {
  traffic: 1,
  statistics: 1,
  usage: 1,
  performance: 1,
  security: 2,
  domains: 1,
  backups: 1,
};
