import type { UsageReportEntry } from "../api/schemas.js";
import type { Sample } from "../metrics/sample.js";
import { sampleFor, type SiteRef } from "../metrics/siteSample.js";
import { perSite } from "./perSite.js";

/** Fields named *_in_gigabytes hold binary gibibytes. */
const GIB = 1024 ** 3;

function startOf(entry: UsageReportEntry): number {
  const t = Date.parse(entry.billing_cycle.start_date);
  return Number.isNaN(t) ? -Infinity : t;
}

/** The latest billing cycle, whatever the order of the list. */
export function latestCycle(entries: readonly UsageReportEntry[]): UsageReportEntry | undefined {
  let best: UsageReportEntry | undefined;
  for (const e of entries) if (!best || startOf(e) > startOf(best)) best = e;
  return best;
}

export function collectUsage(site: SiteRef, entries: readonly UsageReportEntry[]): Sample[] {
  const latest = latestCycle(entries);
  if (!latest) return [];
  const s = latest.billing_cycle.site;
  return [
    // *_in_gigabytes are binary gibibytes. Not rounded: a daily average has fractions of a byte,
    // and a product with a power of two is exact, so the value is the platform's to the last bit.
    sampleFor(
      site,
      "sitehost_site_usage_storage_daily_average_bytes",
      {},
      s.daily_average_storage_usage_in_gigabytes * GIB,
    ),
    sampleFor(site, "sitehost_site_usage_daily_average_visits", {}, s.daily_average_visits),
  ];
}

/** The `usage` collector: the latest billing cycle's usage report, one request per site. */
export const usageCollector = perSite<UsageReportEntry[], "usage">({
  name: "usage",
  requestsPerSite: 1,
  fetch: async (api, site, signal) => (await api.usageReport({ id: site.id }, { signal })).items,
  collect: (site, input) => collectUsage(site, input),
});
