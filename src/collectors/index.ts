/**
 * The per-site collectors: `fetch` asks the API client (HTTP lives there), `collect` is a pure
 * function from the validated response to samples, and `requestsPerSite` says what one run costs per
 * site (the request budget is planned from it).
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
import type { SitehostApi } from "../api/types.js";
import type { CollectorName } from "../config/schema.js";
import type { Sample } from "../metrics/sample.js";
import { collectBackups } from "./backups.js";
import { collectDomains } from "./domains.js";
import { collectPerformance } from "./performance.js";
import { collectSecurity, type SecurityAlertGroup } from "./security.js";
import { collectStatistics } from "./statistics.js";
import { collectTraffic, TRAFFIC_QUERY } from "./traffic.js";
import { collectUsage } from "./usage.js";

export interface SiteCollector<Input = unknown> {
  name: Exclude<CollectorName, "inventory">;
  /** API requests one run makes per site. */
  requestsPerSite: number;
  fetch(api: SitehostApi, site: Site, signal?: AbortSignal): Promise<Input>;
  collect(site: Site, input: Input, nowMs: number): Sample[];
}

const define = <I>(c: SiteCollector<I>): SiteCollector<unknown> => c as unknown as SiteCollector<unknown>;

export const SITE_COLLECTORS: readonly SiteCollector[] = [
  define<MetricsResult>({
    name: "traffic",
    requestsPerSite: 1,
    fetch: (api, site, signal) =>
      api.trafficMetrics({ id: site.id, query: TRAFFIC_QUERY }, { signal, source: "traffic" }),
    collect: (site, input) => collectTraffic(site, input),
  }),
  define<Statistics>({
    name: "statistics",
    requestsPerSite: 1,
    fetch: (api, site, signal) => api.statistics({ id: site.id }, { signal, source: "statistics" }),
    collect: (site, input) => collectStatistics(site, input),
  }),
  define<UsageReportEntry[]>({
    name: "usage",
    requestsPerSite: 1,
    fetch: async (api, site, signal) =>
      (await api.usageReport({ id: site.id }, { signal, source: "usage" })).items,
    collect: (site, input) => collectUsage(site, input),
  }),
  define<PerformanceReport>({
    name: "performance",
    requestsPerSite: 1,
    fetch: (api, site, signal) => api.performanceReport({ id: site.id }, { signal, source: "performance" }),
    collect: (site, input) => collectPerformance(site, input),
  }),
  define<{ plugins: SecurityAlertGroup[]; themes: SecurityAlertGroup[] }>({
    name: "security",
    requestsPerSite: 2,
    fetch: async (api, site, signal) => {
      const opts = { signal, source: "security" };
      const [plugins, themes] = await Promise.all([
        api.pluginAlerts({ id: site.id }, opts),
        api.themeAlerts({ id: site.id }, opts),
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
    requestsPerSite: 1,
    fetch: async (api, site, signal) =>
      (await api.domains({ id: site.id }, { signal, source: "domains" })).items,
    collect: (site, input) => collectDomains(site, input),
  }),
  define<BackupEntry[]>({
    name: "backups",
    requestsPerSite: 1,
    fetch: async (api, site, signal) =>
      (await api.backups({ id: site.id }, { signal, source: "backups" })).items,
    collect: (site, input) => collectBackups(site, input),
  }),
];
