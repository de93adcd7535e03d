/**
 * Whether a read shows entries lost upstream: a gap between what was delivered and the oldest entry
 * the platform still has.
 */
import type { EndReason } from "./types.js";

/** A retention gap may be reported this long before the checkpoint reaches the retention horizon. */
const RETENTION_MARGIN_MS = 3_600_000;

export interface GapFacts {
  /** Something had been delivered before this read (the high-water mark is above the start point). */
  deliveredBefore: boolean;
  /** The high-water mark when the read began. */
  highWaterBeforeMs: number;
  /** The read began on a fresh scroll (so it saw the stream from its newest or oldest end). */
  fresh: boolean;
  end: EndReason;
  /** The read met an entry below its lower bound (it joined up with what was delivered). */
  reachedLower: boolean;
  /** The oldest usable time the read met (Infinity: none). */
  oldestSeenMs: number;
  nowMs: number;
  /** How long the platform keeps the stream's entries. */
  retentionMs: number;
}

/**
 * The missing range when retention passed the checkpoint: the read went to the end of the stream
 * without joining up with what was delivered, the oldest entry there is newer than the high-water
 * mark, and the mark is old enough for retention to have removed what followed it.
 */
export function retentionGap(f: GapFacts): { fromMs: number; toMs: number } | undefined {
  const gap =
    f.deliveredBefore &&
    f.fresh &&
    f.end === "end" &&
    !f.reachedLower &&
    Number.isFinite(f.oldestSeenMs) &&
    f.oldestSeenMs > f.highWaterBeforeMs &&
    f.highWaterBeforeMs < f.nowMs - f.retentionMs + RETENTION_MARGIN_MS;
  return gap ? { fromMs: f.highWaterBeforeMs, toMs: f.oldestSeenMs } : undefined;
}
