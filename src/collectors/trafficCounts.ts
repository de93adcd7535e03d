/**
 * Traffic as counters: each complete period of the traffic endpoint's answer adds its requests and
 * response bytes (rate × period length) to the site's totals, exactly once. A period is counted once
 * it ended TRAFFIC_SETTLE_SECONDS before the answer's end (the newest periods of such endpoints may
 * still be revised), and never again: `through` marks the end of the newest period counted. One
 * request returns a whole window (an hour), so however many polls were skipped, every period since
 * `through` is still in the next answer as long as the gap is shorter than the window; periods that
 * left the window first are counted as missed, not guessed.
 */
import {
  CACHE_STATES,
  hadRequests,
  periodRates,
  servedRequests,
  TRAFFIC_METRICS,
  type Cached,
  type TrafficAnswer,
  type TrafficMetric,
} from "./trafficPeriods.js";

/** How long after its end a period is taken as final and counted. */
export const TRAFFIC_SETTLE_SECONDS = 120;

export type CachedTotals = Record<Cached, number>;

/** What one site's counters stand at. */
export interface SiteTrafficCounts {
  /** End (epoch seconds) of the newest period counted; a period that starts before it is never counted again. */
  through: number;
  /** Requests since counting began, by cache status. */
  requests: CachedTotals;
  /** Response bytes since counting began, by cache status. */
  bytes: CachedTotals;
}

export interface CountOutcome {
  /** Undefined while there is nothing to start from (no settled period yet). */
  counts: SiteTrafficCounts | undefined;
  /** Periods counted from this answer. */
  counted: number;
  /** Periods that left the window before an answer could count them. */
  missed: number;
  /** Whether the newest complete period, or a period counted now, had requests. */
  busy: boolean;
}

const TOTAL_OF: Record<TrafficMetric, keyof Omit<SiteTrafficCounts, "through">> = {
  requests_persec: "requests",
  response_bytes_persec: "bytes",
};

const zero = (): CachedTotals => ({ true: 0, false: 0 });

/**
 * Count the answer's settled periods that `previous` has not counted. Without `previous` (a site seen
 * for the first time, or after a restart without saved counts) counting starts at the newest settled
 * period, from zero: what came before is not known to have been counted nowhere else.
 */
export function countPeriods(previous: SiteTrafficCounts | undefined, answer: TrafficAnswer): CountOutcome {
  const settledBy = answer.end - TRAFFIC_SETTLE_SECONDS;
  const settled = answer.complete.filter(
    (p) =>
      p.start + answer.length <= settledBy &&
      (answer.windowStart === undefined || p.start >= answer.windowStart),
  );
  const newest = answer.complete[answer.complete.length - 1];
  const newestBusy = hadRequests(newest);
  if (!previous) {
    const last = settled[settled.length - 1];
    const counts = last && { through: last.start + answer.length, requests: zero(), bytes: zero() };
    return { counts, counted: 0, missed: 0, busy: newestBusy };
  }
  const counts: SiteTrafficCounts = {
    through: previous.through,
    requests: { ...previous.requests },
    bytes: { ...previous.bytes },
  };
  let counted = 0;
  let busy = newestBusy;
  for (const period of settled) {
    if (period.start < previous.through) continue;
    const rates = periodRates(period);
    for (const metric of TRAFFIC_METRICS) {
      for (const cached of CACHE_STATES)
        counts[TOTAL_OF[metric]][cached] += (rates[metric][cached] ?? 0) * answer.length;
    }
    busy ||= servedRequests(rates);
    counts.through = Math.max(counts.through, period.start + answer.length);
    counted += 1;
  }
  const missed =
    counted > 0 && answer.windowStart !== undefined && answer.windowStart > previous.through
      ? Math.round((answer.windowStart - previous.through) / answer.length)
      : 0;
  return { counts, counted, missed, busy };
}
