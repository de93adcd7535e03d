/**
 * Where a read stops and what it counts as new, as values: a pass of a read is given its bounds once,
 * computed from the checkpoint as it stands when the pass begins. A read that starts over on a fresh
 * scroll (run.ts) begins a new pass with new bounds, because what it shipped before moved the
 * checkpoint (and the fingerprints below the new window were forgotten).
 */
import type { ReadBounds } from "./types.js";

/** Entries stamped more than this ahead of the platform's clock (as measured) count as from the future. */
export const FUTURE_TOLERANCE_MS = 60_000;

export interface WindowFacts {
  /** How far below the high-water mark this read goes back (the short window, or the overlap). */
  windowMs: number;
  /** logs.overlap: how far below the mark fingerprints are kept. */
  overlapMs: number;
  /** When the read began, by the platform's clock. */
  nowMs: number;
  /** How late the stream's entries have come lately, with room to spare (0: none seen). */
  lateMs?: number;
}

export function readBounds(
  checkpoint: { readonly highWaterMs: number; readonly floorMs: number },
  w: WindowFacts,
): ReadBounds {
  const { highWaterMs, floorMs } = checkpoint;
  return {
    lowerMs: Math.max(highWaterMs - w.windowMs, floorMs),
    dedupeFloorMs: Math.max(highWaterMs - w.overlapMs, floorMs),
    highWaterMs,
    nowMs: w.nowMs,
    futureToleranceMs: FUTURE_TOLERANCE_MS,
    lateMs: w.lateMs ?? 0,
  };
}
