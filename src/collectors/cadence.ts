/**
 * What the collectors that ask some sites less often than every run (traffic's adaptive polling, the
 * backing off for unchanged answers) share: how a wait is spread over the runs and when a run asks.
 */
import { fnv1a32 } from "../discovery/shard.js";

/** A collector's runs and its longest wait, ms. */
export interface CadenceSettings {
  /** The schedule's average time between runs. */
  runEveryMs: number;
  /** The longest wait (at or under runEveryMs: every run). */
  maxIntervalMs: number;
}

/** Waits above one run are shortened by up to this share, by key, so keys that wait alike spread over the runs. */
const SPREAD = 0.2;

/** The wait of `key` after its share of the spread; never under one run. */
export function spreadWait(key: number | string, waitMs: number, runEveryMs: number): number {
  if (waitMs <= runEveryMs) return runEveryMs;
  const fraction = (fnv1a32(String(key)) % 1000) / 1000;
  return Math.max(runEveryMs, waitMs * (1 - SPREAD * fraction));
}

/** A wait's mean after the spread, as a share of the wait. */
export const MEAN_SPREAD_FACTOR = 1 - SPREAD / 2;

/** Whether a run at `nowMs` asks about what is due at `dueAt`: within half a run of its time. */
export function dueAtRun(dueAt: number, nowMs: number, runEveryMs: number): boolean {
  return dueAt <= nowMs + runEveryMs / 2;
}
