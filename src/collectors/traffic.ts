import type { MetricsResult } from "../api/schemas.js";
import type { Sample } from "../metrics/sample.js";
import { sampleFor, type SiteRef } from "./labels.js";

export const TRAFFIC_QUERY = {
  startAt: "1 hour ago",
  metrics: ["requests_persec", "response_bytes_persec"],
  dimensions: ["page_is_cached"],
};

const METRIC_NAMES: Record<string, string> = {
  requests_persec: "sitehost_site_requests_per_second",
  response_bytes_persec: "sitehost_site_response_bytes_per_second",
};

type Period = Record<string, unknown> & { timestamp: number };

function periods(result: MetricsResult): Period[] {
  return result.periods.filter(
    (p): p is Period => typeof p === "object" && p !== null && typeof (p as Period).timestamp === "number",
  );
}

/**
 * The latest complete period: its end (timestamp + resolution) is not after the
 * search's end. Without endAt or resolution, every period but the newest counts
 * as complete. Periods are not assumed to be sorted.
 */
export function latestCompletePeriod(result: MetricsResult): Period | undefined {
  const list = periods(result).sort((a, b) => a.timestamp - b.timestamp);
  if (list.length === 0) return undefined;
  const { endAt, resolution } = result.search ?? {};
  if (typeof endAt === "number" && typeof resolution === "number" && resolution > 0) {
    const complete = list.filter((p) => p.timestamp + resolution <= endAt);
    return complete[complete.length - 1];
  }
  return list.length >= 2 ? list[list.length - 2] : undefined;
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
    for (const [cached, value] of Object.entries(values as Record<string, unknown>)) {
      const label = cached.toLowerCase();
      if ((label === "true" || label === "false") && typeof value === "number" && Number.isFinite(value)) {
        out.push(sampleFor(site, name, { cached: label }, value));
      }
    }
  }
  return out;
}
