/**
 * One read of a stream, page by page: the order is detected from the entries' times (never assumed),
 * entries older than the dedupe floor are known delivered (and never built: only their times are
 * read), the others are checked against the checkpoint's fingerprints with their occurrence counts,
 * and what is new is kept. Pure: no I/O.
 *
 * Where a newest-first read stops. The platform may list entries by when they were indexed rather
 * than by their time, so an entry stamped long ago can come between newer ones (it was indexed late),
 * and a page can hold entries in any order. A page whose entries are in order ends the read when its
 * last ones are older than the lower bound (what follows is older still). Once the read has met an
 * entry out of order, or the stream has shown lateness before, a page ends it when its last entries
 * are all below the bound and reach further below it than the lateness known (the stream's, or
 * this read's largest): entries listed after one are indexed before it, so stamped at most that much
 * after it; or when every entry of the page is below the bound. (A late entry alone at the end of an
 * in-order page ends the read early; it is shipped, so the next read knows the stream's lateness and
 * reads on.)
 *
 * An entry older even than the dedupe floor is taken for one delivered long ago, unless the read is
 * out of order and it comes before the first entry of the read known delivered (one that came late
 * itself does not count: the entries indexed in the same second may be listed in any order), on a
 * page in descending order but for a few entries: then it was indexed after everything read before,
 * late.
 * A page in no order at all (shuffled) means any page may hold new entries: that read goes on to
 * the scroll's end (within the read's page and byte bounds). It is checked against the
 * fingerprints (the checkpoint keeps a late entry's fingerprint longer, see deltaFor) and shipped
 * when new. (On pages in no order, every entry below the floor is taken for delivered.)
 */
import { earlierFingerprint } from "../entry.js";
import type { PendingRecord, StreamEntry } from "../pending.js";
import type { ClaimEntry, Order, PageEntries, ReadBounds } from "./types.js";

export interface PageVerdict {
  /** New entries, in page order. */
  kept: PendingRecord[];
  deduplicated: number;
  /** Entries without a usable time, or that did not fit the schema (skipped). */
  malformed: number;
  /** Of those, entries with a time that may be new (above the dedupe floor) that did not fit the schema. */
  unfit: number;
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
/**
 * A page is in descending order but for a few entries when at most this share of them (or one) are
 * not (see descendingRun).
 */
const MOST_OUT_OF_ORDER = 0.25;

/** Per entry of the page being read: its time (NaN: none); and the tails of descendingRun. */
let timesScratch = new Float64Array(256);
let tailsScratch = new Float64Array(256);

/**
 * How many of the page's usable times form its longest run in descending order (not necessarily
 * next to each other): all of them in a page in time order, all but the late ones in a page in the
 * order entries were indexed, a few in a shuffled page. Patience sorting, O(n log n).
 */
function descendingRun(times: Float64Array, n: number): number {
  if (tailsScratch.length < n) tailsScratch = new Float64Array(n);
  const tails = tailsScratch;
  let length = 0;
  for (let i = 0; i < n; i++) {
    const t = times[i] as number;
    if (Number.isNaN(t)) continue;
    // tails[k]: the largest last time of a descending run of length k + 1 (non-increasing in k).
    let lo = 0;
    let hi = length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((tails[mid] as number) >= t) lo = mid + 1;
      else hi = mid;
    }
    tails[lo] = t;
    if (lo === length) length += 1;
  }
  return length;
}

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
  /** A page ended the read: what follows is older than the lower bound. */
  reachedLower = false;
  /** An entry newer than the one before it was met in a newest-first read (or the reverse). */
  private outOfOrder = false;
  /** An entry known delivered was met: what follows was indexed before the last read. */
  private metDelivered = false;
  /** A page in no order was met: any page may hold new entries, so the read goes to the end. */
  private unordered = false;
  /** How far behind the high-water mark the latest new entries of this read were. */
  private lateSeenMs = 0;
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
    private readonly claim?: ClaimEntry,
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
    const before = earlierFingerprint(this.fingerprint, entry);
    return before === undefined ? n : this.delivered(before);
  }

  /**
   * The page's times into the scratch arrays, the newest time after each entry, and how often the
   * times go down and up from one entry to the next; the read's order is decided from the first page
   * that has any (by the majority: a late entry early on the page does not flip it).
   */
  private scan(entries: PageEntries): { times: Float64Array; descending: boolean } {
    const n = entries.length;
    if (timesScratch.length < n) timesScratch = new Float64Array(n);
    const times = timesScratch;
    let down = 0;
    let up = 0;
    let usable = 0;
    let before: number | undefined = this.lastTime;
    for (let i = 0; i < n; i++) {
      const t = entries.timeMs(i);
      times[i] = t ?? Number.NaN;
      if (t === undefined) continue;
      usable += 1;
      if (before !== undefined && t < before) down += 1;
      else if (before !== undefined && t > before) up += 1;
      before = t;
    }
    if (this.order === "unknown" && down + up > 0) this.order = down >= up ? "newest-first" : "oldest-first";
    if ((this.order === "newest-first" && up > 0) || (this.order === "oldest-first" && down > 0))
      this.outOfOrder = true;
    const descending =
      up === 0 || descendingRun(times, n) >= usable - Math.max(1, usable * MOST_OUT_OF_ORDER);
    if (!descending && this.order === "newest-first") this.unordered = true;
    return { times, descending };
  }

  accept(entries: PageEntries): PageVerdict {
    const { lowerMs, dedupeFloorMs, highWaterMs, nowMs, futureToleranceMs } = this.bounds;
    const verdict: PageVerdict = {
      kept: [],
      deduplicated: 0,
      malformed: 0,
      unfit: 0,
      future: 0,
      late: 0,
      maxLatenessMs: 0,
      timeless: true,
    };
    const { times, descending } = this.scan(entries);
    // Only a read out of order can have late entries (in time order there are none to find). A
    // stream that delivered before is one too when an entry below the floor comes before any known
    // delivered: in time order the delivered entry at the high-water mark comes first. That entry
    // may end a page before anything out of order was met (then it is the first out of order).
    const deliveredBefore = highWaterMs > dedupeFloorMs;
    const lateChecked = this.order === "newest-first" && descending && (this.outOfOrder || deliveredBefore);
    /** Usable entries, and those at the page's end older than the lower bound. */
    let usable = 0;
    let tail = 0;
    /** The oldest time of those. */
    let tailOldest = Infinity;
    for (let i = 0; i < entries.length; i++) {
      const t = times[i] as number;
      if (Number.isNaN(t)) {
        // Built only to have the record checked: one that does not fit the schema is reported so.
        entries.entry(i);
        verdict.malformed += 1;
        continue;
      }
      verdict.timeless = false;
      usable += 1;
      if (t < lowerMs) {
        tail += 1;
        if (t < tailOldest) tailOldest = t;
      } else {
        tail = 0;
        tailOldest = Infinity;
      }
      this.lastTime = t;
      if (t < this.oldestSeen) this.oldestSeen = t;
      // Delivered long ago, unless it was indexed after everything read before (see above).
      if (t < dedupeFloorMs && !(lateChecked && !this.metDelivered)) continue;
      // Only entries that may be new are built: most of a page is below the floor, read before.
      const entry = entries.entry(i);
      if (entry === undefined) {
        verdict.malformed += 1;
        verdict.unfit += 1;
        continue;
      }
      const fp = this.fingerprint(entry);
      const n = this.occurrences.next(fp, t);
      if (n <= this.deliveredAs(fp, entry, t)) {
        // Past the new entries, unless this one came late itself: it was indexed recently, and a
        // platform may list the entries of one indexing second in any order (by stamp, oldest first).
        if (t >= dedupeFloorMs) this.metDelivered = true;
        verdict.deduplicated += 1;
        continue;
      }
      if ((this.unique && n > 1) || (this.claim && !this.claim(fp, entry, t))) {
        verdict.deduplicated += 1;
        continue;
      }
      verdict.kept.push({ entry, timeMs: t, fingerprint: fp, occurrence: n - 1 });
      if (t < dedupeFloorMs) this.outOfOrder = true;
      if (t > nowMs + futureToleranceMs) verdict.future += 1;
      if (t < highWaterMs) {
        verdict.late += 1;
        verdict.maxLatenessMs = Math.max(verdict.maxLatenessMs, highWaterMs - t);
      }
    }
    this.lateSeenMs = Math.max(this.lateSeenMs, verdict.maxLatenessMs);
    if (this.order === "newest-first" && usable > 0 && !this.unordered) {
      // Entries listed after one indexed at most L late are stamped at most L after it: once an
      // entry of the tail is more than the lateness known (the stream's, or this read's) below the
      // bound, what follows is below the bound too.
      const lateMs = Math.max(this.bounds.lateMs, this.lateSeenMs);
      const inOrder = !this.outOfOrder && lateMs === 0;
      if (inOrder ? tail > 0 : tail === usable || (tail > 0 && tailOldest < lowerMs - lateMs))
        this.reachedLower = true;
    }
    return verdict;
  }
}
