/**
 * One read of a stream, page by page: the order is detected from the entries' times (never assumed),
 * entries older than the dedupe floor are known delivered (and never built: only their times are
 * read), the others are checked against the checkpoint's fingerprints with their occurrence counts,
 * and what is new is kept. Pure: no I/O.
 */
import { fingerprintKeepingNulls } from "../entry.js";
import type { PendingRecord, StreamEntry } from "../pending.js";
import type { Order, PageEntries, ReadBounds } from "./types.js";

export interface PageVerdict {
  /** New entries, in page order. */
  kept: PendingRecord[];
  deduplicated: number;
  /** Entries without a usable time (skipped). */
  malformed: number;
  /** New entries stamped in the future. */
  future: number;
  /** New entries older than the high-water mark at the read's start: they arrived late. */
  late: number;
  /** How far below that mark the latest-arriving one was, ms. */
  maxLatenessMs: number;
  /** No entry of the page had a usable time (or the page held no valid entry at all). */
  timeless: boolean;
}

/**
 * Identical entries share their time (it is part of what is compared), and a read's pages come in time
 * order, so occurrence counts only need the entries near the current one.
 */
const OCCURRENCE_WINDOW_MS = 10_000;
/** How often the oldest counted entries are looked at (inserts). */
const OCCURRENCE_TRIM_EVERY = 256;
/** A full sweep when the map still grows past this (entries far out of order are only found so). */
const OCCURRENCE_SWEEP_FLOOR = 50_000;

/**
 * Occurrences of each fingerprint within one read: identical lines written in the same second are real
 * and each is delivered. Entries more than a few seconds from the current one are dropped as the read
 * moves on (from the oldest counted, so it costs next to nothing), which keeps the map to the entries
 * of those few seconds however long the read; a full sweep catches what came far out of order. Most
 * fingerprints occur once: they cost one map entry (their time); only repeats get a count of their own.
 */
class OccurrenceCounter {
  private readonly seen = new Map<string, number>();
  private readonly repeats = new Map<string, number>();
  private sweepAt = OCCURRENCE_SWEEP_FLOOR;
  private untilTrim = OCCURRENCE_TRIM_EVERY;

  /** 1 for the first occurrence of `fp`, 2 for the second, ... */
  next(fp: string, t: number): number {
    if (this.seen.has(fp)) {
      const n = (this.repeats.get(fp) ?? 1) + 1;
      this.repeats.set(fp, n);
      return n;
    }
    if (--this.untilTrim === 0) {
      this.untilTrim = OCCURRENCE_TRIM_EVERY;
      for (const [k, at] of this.seen) {
        if (Math.abs(at - t) <= OCCURRENCE_WINDOW_MS) break;
        this.forget(k);
      }
    }
    if (this.seen.size >= this.sweepAt) {
      for (const [k, at] of this.seen) if (Math.abs(at - t) > OCCURRENCE_WINDOW_MS) this.forget(k);
      this.sweepAt = Math.max(OCCURRENCE_SWEEP_FLOOR, 2 * this.seen.size);
    }
    this.seen.set(fp, t);
    return 1;
  }

  private forget(fp: string): void {
    this.seen.delete(fp);
    if (this.repeats.size > 0) this.repeats.delete(fp);
  }
}

export class PageReader {
  order: Order = "unknown";
  /** Oldest usable time seen. */
  oldestSeen = Infinity;
  /** An entry older than the lower bound was seen. */
  reachedLower = false;
  private lastTime: number | undefined;
  private readonly occurrences = new OccurrenceCounter();

  constructor(
    private readonly bounds: ReadBounds,
    /** Occurrences delivered of a fingerprint (the checkpoint's window). */
    private readonly delivered: (fp: string) => number,
    private readonly fingerprint: (entry: StreamEntry) => string,
    /**
     * Entries are unique (they carry an id): one seen twice in a read is the same entry met again
     * (numbered pages shift when entries arrive during the read), not a second identical line.
     */
    private readonly unique = false,
    /** May this stream ship the entry (activity: another stream did not claim it)? */
    private readonly claim?: (fp: string) => boolean,
  ) {}

  /** Where a newest-first read of this pass stops. */
  get lowerMs(): number {
    return this.bounds.lowerMs;
  }

  /** Newest-first and past the lower bound: nothing further can be new. */
  get complete(): boolean {
    return this.order === "newest-first" && this.reachedLower;
  }

  /**
   * Occurrences of the entry delivered: under its fingerprint, or, for an entry at or below the
   * high-water mark (it may have been delivered by an earlier release), under the fingerprint that
   * release gave it.
   */
  private deliveredAs(fp: string, entry: StreamEntry, t: number): number {
    const n = this.delivered(fp);
    if (n > 0 || t > this.bounds.highWaterMs) return n;
    const before = fingerprintKeepingNulls(entry);
    return before === undefined ? n : this.delivered(before);
  }

  accept(entries: PageEntries): PageVerdict {
    const { lowerMs, dedupeFloorMs, highWaterMs, nowMs, futureToleranceMs } = this.bounds;
    const verdict: PageVerdict = {
      kept: [],
      deduplicated: 0,
      malformed: 0,
      future: 0,
      late: 0,
      maxLatenessMs: 0,
      timeless: true,
    };
    for (let i = 0; i < entries.length; i++) {
      const t = entries.timeMs(i);
      if (t === undefined) {
        // Built only to have the record checked: one that does not fit the schema is reported so.
        entries.entry(i);
        verdict.malformed += 1;
        continue;
      }
      verdict.timeless = false;
      if (this.lastTime !== undefined && this.order === "unknown" && t !== this.lastTime) {
        this.order = t < this.lastTime ? "newest-first" : "oldest-first";
      }
      this.lastTime = t;
      if (t < this.oldestSeen) this.oldestSeen = t;
      if (t < lowerMs) {
        this.reachedLower = true;
        if (t < dedupeFloorMs) continue;
      }
      // Only entries that may be new are built: most of a page is below the floor, read before.
      const entry = entries.entry(i);
      if (entry === undefined) {
        verdict.malformed += 1;
        continue;
      }
      const fp = this.fingerprint(entry);
      const n = this.occurrences.next(fp, t);
      if (n <= this.deliveredAs(fp, entry, t) || (this.unique && n > 1) || (this.claim && !this.claim(fp))) {
        verdict.deduplicated += 1;
        continue;
      }
      verdict.kept.push({ entry, timeMs: t, fingerprint: fp, occurrence: n - 1 });
      if (t > nowMs + futureToleranceMs) verdict.future += 1;
      if (t < highWaterMs) {
        verdict.late += 1;
        verdict.maxLatenessMs = Math.max(verdict.maxLatenessMs, highWaterMs - t);
      }
    }
    return verdict;
  }
}
