/**
 * How each SLI window is recorded, so that no rule reads more than a few million samples at 5,000
 * sites (Prometheus refuses a query past `--query.max-samples`, 50 million by default, and a rule
 * that errors never fires):
 *
 * - windows up to an hour read the raw counters (`increase(...[W])`: at a 30 s scrape, 120 samples
 *   per series at most);
 * - windows up to 6 hours add up the recorded 5-minute increases sampled every 30 s, over 10 (each
 *   request is in ten of them): `sum_over_time(...increase5m[6h:30s]) / 10`, 720 steps per series;
 * - windows up to 3 days add up the 5-minute increases one per 5 minutes (`[3d:5m]`: 864 steps);
 * - longer ones (the budget's 28 days) add up the 2-hour increases one per 2 hours (`[28d:2h]`: 336
 *   steps). The 2-hour window, their base, is then recorded every 2m30s (from the 5-minute one, one per
 *   5 minutes): a 28-day sum decodes 16,000 samples per series, not the 80,000 of a window recorded
 *   at every 30 s evaluation.
 *
 * Each request counts once whatever the evaluation interval (up to 5 minutes). A sum one per step
 * adds the time since its last whole step as that share of the base's latest value (sliRules.ts);
 * the 30 s sums count their newest 5 minutes in part. Burn rates over hours and budgets over weeks do
 * not notice. Windows over 6 hours (and the 2-hour base) are evaluated in a group of their own every
 * 2m30s rather than at every evaluation: they move slowly, and that interval stays under Prometheus's
 * 5-minute lookback, so an alert always finds their latest value.
 *
 * On Prometheus 2, a range counts both its ends, so a sum whose evaluation falls on a step boundary
 * has one step more (one 5-minute increase in 3 days); Prometheus 3 counts one end.
 */
import { durationMs } from "../config/duration.js";

/** The 5-minute base every window up to 3 days is summed from. */
export const FINE_BASE = "5m";
/** The base of windows over 3 days (the error budget's 28 days), one per 2 hours. */
export const COARSE_BASE = "2h";
/** Longest window read from the raw counters. */
const RAW_MAX_MS = 3_600_000;
/** Longest window summed from the 5-minute base sampled every 30 s, evaluated with the alerts. */
const FAST_MAX_MS = 6 * 3_600_000;
/** Longest window summed from the 5-minute base one per 5 minutes (864 steps); longer: the 2-hour base. */
const FINE_MAX_MS = 3 * 86_400_000;
/** Evaluation interval of the slow group: under Prometheus's default 5-minute lookback. */
export const SLOW_INTERVAL = "2m30s";

/** Read from the counters, or the sum of a recorded window sampled every `step`, over `divisor`. */
export type WindowSource = { kind: "raw" } | { kind: "sum"; base: string; step: string; divisor: number };

export interface PlannedWindow {
  window: string;
  source: WindowSource;
  /** false: evaluated in the slow group. */
  fast: boolean;
}

function sourceOf(window: string): WindowSource {
  const ms = durationMs(window);
  if (ms <= RAW_MAX_MS) return { kind: "raw" };
  if (ms <= FAST_MAX_MS) return { kind: "sum", base: FINE_BASE, step: "30s", divisor: 10 };
  if (ms <= FINE_MAX_MS) return { kind: "sum", base: FINE_BASE, step: FINE_BASE, divisor: 1 };
  return { kind: "sum", base: COARSE_BASE, step: COARSE_BASE, divisor: 1 };
}

/**
 * Every window recorded, shortest first: the configured ones, the budget's period and the bases the
 * derived ones are summed from.
 */
export function planWindows(windows: readonly string[], period: string): PlannedWindow[] {
  const wanted = new Set([...windows, period]);
  // A base may need a base of its own (the 2-hour one the 5-minute one): the set grows as it is walked.
  for (const w of wanted) {
    const source = sourceOf(w);
    if (source.kind === "sum") wanted.add(source.base);
  }
  const coarse = [...wanted].some((w) => durationMs(w) > FINE_MAX_MS);
  // Two spellings of one duration (60m, 1h) name two records: both are kept, as configured.
  return [...wanted]
    .sort((a, b) => durationMs(a) - durationMs(b) || a.localeCompare(b))
    .map((window) =>
      coarse && window === COARSE_BASE
        ? { window, source: { kind: "sum", base: FINE_BASE, step: FINE_BASE, divisor: 1 }, fast: false }
        : { window, source: sourceOf(window), fast: durationMs(window) <= FAST_MAX_MS },
    );
}
