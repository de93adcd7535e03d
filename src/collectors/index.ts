/**
 * The collectors besides discovery. Per-site ones: `fetch` asks the API client (HTTP lives there),
 * `collect` is a pure function from the validated response to samples, and `requestsPerSite` says
 * what one run costs per site. Account-level ones walk resources of their own (the DNS zones, for
 * certificates). `createCollectors` makes a fresh set for each runner, since some remember things
 * between runs.
 */
import { ApiHttpError } from "../api/errors.js";
import type {
  BackupEntry,
  Domain,
  MetricsResult,
  OndemandBackup,
  PerformanceReport,
  Restore,
  Site,
  Statistics,
  UsageReportEntry,
} from "../api/schemas.js";
import type { SourcedApi } from "../api/sourced.js";
import type { Sample } from "../metrics/sample.js";
import { collectBackups } from "./backups.js";
import { CertificateCollector } from "./certificateScan.js";
import { collectDomains } from "./domains.js";
import { GitCollector } from "./gitCollector.js";
import { collectOndemandBackups } from "./ondemand.js";
import { collectPerformance } from "./performance.js";
import { collectRestores } from "./restores.js";
import { collectSecurity, type SecurityAlertGroup } from "./security.js";
import { collectStatistics } from "./statistics.js";
import { collectTraffic, TRAFFIC_QUERY } from "./traffic.js";
import type { CollectorEnv, CollectorSet, CollectorSetName, SiteCollector } from "./types.js";
import { collectUsage } from "./usage.js";

/** Restores read per run: the newest page (they are rare; this covers months). */
export const RESTORES_PAGE_SIZE = 50;

/** A per-site collector without memory: it costs `requestsPerSite` for every selected site. */
function perSite<I, N extends CollectorSetName>(
  c: Omit<SiteCollector<I>, "scope" | "requestsPerRun" | "name"> & { name: N },
): SiteCollector<I> & { name: N } {
  return { ...c, scope: "site", requestsPerRun: (sites) => sites.length * c.requestsPerSite };
}

/** A listing the platform may answer 404 for when the site has none of it: then it is empty. */
async function emptyOn404<T>(request: Promise<{ items: T[] }>): Promise<T[]> {
  try {
    return (await request).items;
  } catch (err) {
    if (err instanceof ApiHttpError && err.status === 404) return [];
    throw err;
  }
}

export interface BackupsInput {
  automatic: BackupEntry[];
  ondemand: OndemandBackup[];
  restores: Restore[];
}

async function fetchBackups(api: SourcedApi, site: Site, signal: AbortSignal): Promise<BackupsInput> {
  const opts = { signal };
  // The automatic listing decides whether the site is there (its 404 goes to the runner's check).
  const [automatic, ondemand, restores] = await Promise.all([
    api.backups({ id: site.id }, opts),
    emptyOn404(api.ondemandBackups({ id: site.id }, opts)),
    emptyOn404(api.restores({ id: site.id, page: 1, perPage: RESTORES_PAGE_SIZE }, opts)),
  ]);
  return { automatic: automatic.items, ondemand, restores };
}

export function createCollectors(env: CollectorEnv): CollectorSet {
  return {
    traffic: perSite<MetricsResult, "traffic">({
      name: "traffic",
      requestsPerSite: 1,
      fetch: (api, site, signal) => api.trafficMetrics({ id: site.id, query: TRAFFIC_QUERY }, { signal }),
      collect: (site, input) => collectTraffic(site, input),
    }),
    statistics: perSite<Statistics, "statistics">({
      name: "statistics",
      requestsPerSite: 1,
      fetch: (api, site, signal) => api.statistics({ id: site.id }, { signal }),
      collect: (site, input) => collectStatistics(site, input),
    }),
    usage: perSite<UsageReportEntry[], "usage">({
      name: "usage",
      requestsPerSite: 1,
      fetch: async (api, site, signal) => (await api.usageReport({ id: site.id }, { signal })).items,
      collect: (site, input) => collectUsage(site, input),
    }),
    performance: perSite<PerformanceReport, "performance">({
      name: "performance",
      requestsPerSite: 1,
      fetch: (api, site, signal) => api.performanceReport({ id: site.id }, { signal }),
      collect: (site, input) => collectPerformance(site, input),
    }),
    security: perSite<{ plugins: SecurityAlertGroup[]; themes: SecurityAlertGroup[] }, "security">({
      name: "security",
      requestsPerSite: 2,
      fetch: async (api, site, signal) => {
        const opts = { signal };
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
    domains: perSite<Domain[], "domains">({
      name: "domains",
      requestsPerSite: 1,
      fetch: async (api, site, signal) => (await api.domains({ id: site.id }, { signal })).items,
      collect: (site, input) => collectDomains(site, input),
    }),
    backups: perSite<BackupsInput, "backups">({
      name: "backups",
      requestsPerSite: 3,
      fetch: fetchBackups,
      collect: (site, input): Sample[] => [
        ...collectBackups(site, input.automatic),
        ...collectOndemandBackups(site, input.ondemand),
        ...collectRestores(site, input.restores),
      ],
    }),
    git: new GitCollector(env),
    certificates: new CertificateCollector(env),
  };
}
