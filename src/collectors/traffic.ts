import type { MetricsResult } from "../api/schemas.js";
import { isEpochMs } from "../api/times.js";
import type { MetricName } from "../metrics/families.js";
import type { Sample } from "../metrics/sample.js";
import { sampleFor, type SiteRef } from "../metrics/siteSample.js";
import { perSite } from "./perSite.js";

export const TRAFFIC_QUERY = {
  startAt: "1 hour ago",
  metrics: ["requests_persec", "response_bytes_persec"],
  dimensions: ["page_is_cached"],
};

const METRIC_NAMES: Readonly<Record<string, MetricName>> = {
  requests_persec: "sitehost_site_requests_per_second",
  response_bytes_persec: "sitehost_site_response_bytes_per_second",
};

type Period = Record<string, unknown> & { timestamp: number };

/** Epoch seconds, from seconds or milliseconds. */
function seconds(value: number): number {
  return isEpochMs(value) ? value / 1000 : value;
}

function periods(result: MetricsResult): Period[] {
  return result.periods
    .filter(
      (p): p is Period => typeof p === "object" && p !== null && typeof (p as Period).timestamp === "number",
    )
    .map((p) => ({ ...p, timestamp: seconds(p.timestamp) }));
}

/**
 * A period's length in seconds: `search.resolution`, unless the spacing of the periods shows it is in
 * another unit (minutes, milliseconds); then the spacing.
 */
function periodLength(sorted: readonly Period[], resolution: number | undefined): number | undefined {
  let step: number | undefined;
  for (let i = 1; i < sorted.length; i++) {
    const d = (sorted[i] as Period).timestamp - (sorted[i - 1] as Period).timestamp;
    if (d > 0 && (step === undefined || d < step)) step = d;
  }
  const valid = typeof resolution === "number" && resolution > 0 ? resolution : undefined;
  if (valid === undefined || step === undefined) return valid ?? step;
  return valid >= step / 2 && valid <= step * 2 ? valid : step;
}

/**
 * The latest complete period: its end (timestamp + period length) is not after the search's end.
 * Without endAt, every period but the newest counts as complete. Periods are not assumed sorted.
 */
export function latestCompletePeriod(result: MetricsResult): Period | undefined {
  const list = periods(result).sort((a, b) => a.timestamp - b.timestamp);
  if (list.length === 0) return undefined;
  const { endAt, resolution } = result.search ?? {};
  const length = periodLength(list, resolution);
  if (typeof endAt === "number" && length !== undefined) {
    const end = seconds(endAt);
    const complete = list.filter((p) => p.timestamp + length <= end);
    return complete[complete.length - 1];
  }
  return list.length >= 2 ? list[list.length - 2] : undefined;
}

/** The `page_is_cached` dimension value as the contract's `cached` label; undefined when unreadable. */
function cachedLabel(value: string): "true" | "false" | undefined {
  const v = value.trim().toLowerCase();
  if (v === "true" || v === "1" || v === "yes") return "true";
  if (v === "false" || v === "0" || v === "no") return "false";
  return undefined;
}

export function collectTraffic(site: SiteRef, result: MetricsResult): Sample[] {
  const period = latestCompletePeriod(result);
  if (!period) return [];
  const out: Sample[] = [];
  const byDimension = period.page_is_cached;
  if (typeof byDimension !== "object" || byDimension === null) return out;
  for (const [metric, values] of Object.entries(byDimension as Record<string, unknown>)) {
    const name = METRIC_NAMES[metric];
    if (!name || typeof values !== "object" || values === null) continue;
    const sums = new Map<string, number>();
    for (const [dimensionValue, value] of Object.entries(values as Record<string, unknown>)) {
      const cached = cachedLabel(dimensionValue);
      if (cached && typeof value === "number" && Number.isFinite(value)) {
        sums.set(cached, (sums.get(cached) ?? 0) + value);
      }
    }
    for (const [cached, value] of sums) out.push(sampleFor(site, name, { cached }, value));
  }
  return out;
}

/** The `traffic` collector: the site's traffic periods over the last hour, one request. */
export const trafficCollector = perSite<MetricsResult, "traffic">({
  name: "traffic",
  requestsPerSite: 1,
  fetch: (api, site, signal) => api.trafficMetrics({ id: site.id, query: TRAFFIC_QUERY }, { signal }),
  collect: (site, input) => collectTraffic(site, input),
});
