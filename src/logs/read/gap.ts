/**
 * Whether a read shows entries lost: a jump past the checkpoint, between what was delivered and the
 * oldest entry the read found.
 */

export interface GapFacts {
  /** Something had been delivered before this read (the high-water mark is above the start point). */
  deliveredBefore: boolean;
  /** The high-water mark when the read began. */
  highWaterBeforeMs: number;
  /** The read's last pass began on a fresh scroll (so it saw the stream from its newest or oldest end). */
  fresh: boolean;
  /** Records the read shipped (they move the high-water mark). */
  shipped: number;
  /** The read met an entry below its lower bound (it joined up with what was delivered). */
  reachedLower: boolean;
  /** The oldest usable time the read met (Infinity: none). */
  oldestSeenMs: number;
  /**
   * The read was stopped before the scroll's end: it looped, or a page or byte bound ended it, or
   * its pages had no usable entry.
   */
  stoppedShort: boolean;
}

/**
 * The missing range when a read ships entries newer than the checkpoint without joining up with it:
 * the oldest entry it met is newer than the high-water mark, so what followed the mark is gone (the
 * platform's retention removed it) or was never reached (the paging broke off or looped, a bound
 * stopped the read). Either way the checkpoint now moves past it: counted, whatever the reason, also
 * on a stream that had delivered nothing yet (from its start point).
 */
export function readGap(f: GapFacts): { fromMs: number; toMs: number } | undefined {
  // A stream with nothing delivered yet whose scroll simply ended has nothing older: no gap. One that
  // was stopped short never reached its start point.
  const gap =
    (f.deliveredBefore || f.stoppedShort) &&
    f.fresh &&
    f.shipped > 0 &&
    !f.reachedLower &&
    Number.isFinite(f.oldestSeenMs) &&
    f.oldestSeenMs > f.highWaterBeforeMs;
  return gap ? { fromMs: f.highWaterBeforeMs, toMs: f.oldestSeenMs } : undefined;
}
