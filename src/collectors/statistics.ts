import type { Statistics } from "../api/schemas.js";
import type { StatisticsPeriod } from "../config/collectorOptions.js";
import type { Sample } from "../metrics/sample.js";
import { sampleFor, type SiteRef } from "../metrics/siteSample.js";
import { perSite } from "./perSite.js";

/** API period keys (camelCase) and the `period` label values of the contract. */
const PERIODS: ReadonlyArray<[keyof Statistics["pageViews"], StatisticsPeriod]> = [
  ["today", "today"],
  ["yesterday", "yesterday"],
  ["currentMonth", "current_month"],
  ["lastMonth", "last_month"],
  ["twoMonthsAgo", "two_months_ago"],
  ["lastOneYear", "last_one_year"],
  ["lastTwoYears", "last_two_years"],
];

/** Page views and unique visits of the `periods` asked for that the answer holds. */
export function collectStatistics(
  site: SiteRef,
  stats: Statistics,
  periods: readonly StatisticsPeriod[],
): Sample[] {
  const out: Sample[] = [];
  for (const [key, period] of PERIODS) {
    const count = stats.pageViews[key];
    if (!count || !periods.includes(period)) continue;
    out.push(sampleFor(site, "sitehost_site_page_views", { period }, count.views));
    out.push(sampleFor(site, "sitehost_site_unique_visits", { period }, count.people));
  }
  return out;
}

/**
 * The `statistics` collector: page views and visits, one request per site, published for `periods`
 * (`collectors.statistics.periods`; one answer holds every period).
 */
export function statisticsCollector(periods: readonly StatisticsPeriod[]) {
  return perSite<Statistics, "statistics">({
    name: "statistics",
    requestsPerSite: 1,
    fetch: (api, site, signal) => api.statistics({ id: site.id }, { signal }),
    collect: (site, input) => collectStatistics(site, input, periods),
  });
}
