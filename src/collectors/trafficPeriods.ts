/**
 * The traffic endpoint's answer, read one way for the gauges and the counters: the complete periods
 * (those that ended by the search's end), each with its per-second rates by cache status, the period
 * length, and the span the search covered. Timestamps are epoch seconds (milliseconds are recognised).
 */
import type { MetricsResult } from "../api/schemas.js";
import { isEpochMs } from "../api/times.js";

export type Cached = "true" | "false";
/** The endpoint's metric names this exporter reads. */
export type TrafficMetric = "requests_persec" | "response_bytes_persec";
export const TRAFFIC_METRICS: readonly TrafficMetric[] = ["requests_persec", "response_bytes_persec"];

export interface TrafficPeriod {
  /** Start, epoch seconds. */
  start: number;
  /** Per-second rates by metric and cache status, as far as the answer gave them. */
  rates: Record<TrafficMetric, Map<Cached, number>>;
}

export interface TrafficAnswer {
  /** Where the search began (epoch seconds); a period that starts before it may be partial. */
  windowStart: number | undefined;
  /** Where it ended: `endAt`, or without it the newest period's start (that period is still filling). */
  end: number;
  /** Period length in seconds. */
  length: number;
  /** The periods that ended by `end`, oldest first. */
  complete: TrafficPeriod[];
}

type RawPeriod = Record<string, unknown> & { timestamp: number };

/** Epoch seconds, from seconds or milliseconds. */
function seconds(value: number): number {
  return isEpochMs(value) ? value / 1000 : value;
}

/**
 * A period's length in seconds: `search.resolution`, unless the spacing of the periods shows it is in
 * another unit (minutes, milliseconds); then the spacing.
 */
function periodLength(sorted: readonly RawPeriod[], resolution: number | undefined): number | undefined {
  let step: number | undefined;
  for (let i = 1; i < sorted.length; i++) {
    const d = (sorted[i] as RawPeriod).timestamp - (sorted[i - 1] as RawPeriod).timestamp;
    if (d > 0 && (step === undefined || d < step)) step = d;
  }
  const valid = typeof resolution === "number" && resolution > 0 ? resolution : undefined;
  if (valid === undefined || step === undefined) return valid ?? step;
  return valid >= step / 2 && valid <= step * 2 ? valid : step;
}

/** The `page_is_cached` dimension value as the contract's `cached` label; undefined when unreadable. */
function cachedLabel(value: string): Cached | undefined {
  const v = value.trim().toLowerCase();
  if (v === "true" || v === "1" || v === "yes") return "true";
  if (v === "false" || v === "0" || v === "no") return "false";
  return undefined;
}

function ratesOf(period: RawPeriod): TrafficPeriod["rates"] {
  const rates: TrafficPeriod["rates"] = { requests_persec: new Map(), response_bytes_persec: new Map() };
  const byDimension = period.page_is_cached;
  if (typeof byDimension !== "object" || byDimension === null) return rates;
  for (const metric of TRAFFIC_METRICS) {
    const values = (byDimension as Record<string, unknown>)[metric];
    if (typeof values !== "object" || values === null) continue;
    for (const [dimensionValue, value] of Object.entries(values as Record<string, unknown>)) {
      const cached = cachedLabel(dimensionValue);
      if (cached && typeof value === "number" && Number.isFinite(value)) {
        rates[metric].set(cached, (rates[metric].get(cached) ?? 0) + value);
      }
    }
  }
  return rates;
}

/**
 * The answer's complete periods: those whose end (start + length) is not after the search's end.
 * Without endAt, every period but the newest counts as complete. Periods are not assumed sorted;
 * undefined when the answer has no period or its period length cannot be told.
 */
export function readTrafficAnswer(result: MetricsResult): TrafficAnswer | undefined {
  const list = result.periods
    .filter(
      (p): p is RawPeriod =>
        typeof p === "object" && p !== null && typeof (p as RawPeriod).timestamp === "number",
    )
    .map((p) => ({ ...p, timestamp: seconds(p.timestamp) }))
    .sort((a, b) => a.timestamp - b.timestamp);
  const newest = list[list.length - 1];
  if (!newest) return undefined;
  const { startAt, endAt, resolution } = result.search ?? {};
  const length = periodLength(list, resolution);
  if (length === undefined) {
    // One period and no resolution: it is the newest, still filling.
    return { windowStart: undefined, end: newest.timestamp, length: 0, complete: [] };
  }
  const end = typeof endAt === "number" ? seconds(endAt) : newest.timestamp;
  return {
    windowStart: typeof startAt === "number" ? seconds(startAt) : undefined,
    end,
    length,
    complete: list
      .filter((p) => p.timestamp + length <= end)
      .map((p) => ({ start: p.timestamp, rates: ratesOf(p) })),
  };
}
