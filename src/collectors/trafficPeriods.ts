/**
 * The traffic endpoint's answer, read one way for the gauges and the counters: the complete periods
 * (those that ended by the search's end), each with its per-second rates by cache status, the period
 * length, and the span the search covered. Timestamps are epoch seconds (milliseconds are recognised).
 */
import type { MetricsResult } from "../api/schemas.js";
import { isEpochMs } from "../api/times.js";

export type Cached = "true" | "false";
export const CACHE_STATES: readonly Cached[] = ["true", "false"];
/** The endpoint's metric names this exporter reads. */
export type TrafficMetric = "requests_persec" | "response_bytes_persec";
export const TRAFFIC_METRICS: readonly TrafficMetric[] = ["requests_persec", "response_bytes_persec"];

/** A per-second rate by cache status; undefined where the answer gave none. */
export type CachedRates = Record<Cached, number | undefined>;
/** Per-second rates by metric and cache status, as far as the answer gave them. */
export type PeriodRates = Record<TrafficMetric, CachedRates>;

/**
 * A complete period: its start and the answer's own object for it, read for rates only when asked
 * (a run reads the rates of one or a few of the hour's 60 periods per site).
 */
export interface TrafficPeriod {
  /** Start, epoch seconds. */
  readonly start: number;
  readonly source: Readonly<Record<string, unknown>>;
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
/** A period with its start in epoch seconds. */
interface Dated {
  start: number;
  source: RawPeriod;
}

/** Epoch seconds, from seconds or milliseconds. */
function seconds(value: number): number {
  return isEpochMs(value) ? value / 1000 : value;
}

/**
 * A period's length in seconds: `search.resolution`, unless the spacing of the periods shows it is in
 * another unit (minutes, milliseconds); then the spacing.
 */
function periodLength(sorted: readonly Dated[], resolution: number | undefined): number | undefined {
  let step: number | undefined;
  for (let i = 1; i < sorted.length; i++) {
    const d = (sorted[i] as Dated).start - (sorted[i - 1] as Dated).start;
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

/** A period's per-second rates: each cache status's values summed, unreadable ones left out. */
export function periodRates(period: TrafficPeriod): PeriodRates {
  const rates: PeriodRates = {
    requests_persec: { true: undefined, false: undefined },
    response_bytes_persec: { true: undefined, false: undefined },
  };
  const byDimension = period.source.page_is_cached;
  if (typeof byDimension !== "object" || byDimension === null) return rates;
  for (const metric of TRAFFIC_METRICS) {
    const values = (byDimension as Record<string, unknown>)[metric];
    if (typeof values !== "object" || values === null) continue;
    const into = rates[metric];
    for (const dimensionValue in values) {
      if (!Object.hasOwn(values, dimensionValue)) continue;
      const value = (values as Record<string, unknown>)[dimensionValue];
      const cached = cachedLabel(dimensionValue);
      if (cached && typeof value === "number" && Number.isFinite(value))
        into[cached] = (into[cached] ?? 0) + value;
    }
  }
  return rates;
}

/** Whether rates read from a period show any request served. */
export function servedRequests(rates: PeriodRates): boolean {
  const { true: cached, false: uncached } = rates.requests_persec;
  return (cached ?? 0) > 0 || (uncached ?? 0) > 0;
}

/** Whether the period served any request. */
export function hadRequests(period: TrafficPeriod | undefined): boolean {
  return period !== undefined && servedRequests(periodRates(period));
}

/**
 * The answer's complete periods: those whose end (start + length) is not after the search's end.
 * Without endAt, every period but the newest counts as complete. Periods are not assumed sorted;
 * undefined when the answer has no period or its period length cannot be told.
 */
export function readTrafficAnswer(result: MetricsResult): TrafficAnswer | undefined {
  const list: Dated[] = [];
  for (const p of result.periods) {
    if (typeof p === "object" && p !== null && typeof (p as RawPeriod).timestamp === "number")
      list.push({ start: seconds((p as RawPeriod).timestamp), source: p as RawPeriod });
  }
  list.sort((a, b) => a.start - b.start);
  const newest = list[list.length - 1];
  if (!newest) return undefined;
  const { startAt, endAt, resolution } = result.search ?? {};
  const length = periodLength(list, resolution);
  if (length === undefined) {
    // One period and no resolution: it is the newest, still filling.
    return { windowStart: undefined, end: newest.start, length: 0, complete: [] };
  }
  const end = typeof endAt === "number" ? seconds(endAt) : newest.start;
  return {
    windowStart: typeof startAt === "number" ? seconds(startAt) : undefined,
    end,
    length,
    complete: list.filter((p) => p.start + length <= end),
  };
}
