/**
 * One stream (a site's PHP, web-server or activity log, or the account's activity log): each `read`
 * opens a fresh scroll (or continues a held one), pages until it reaches the checkpoint's lower bound
 * or the end, drops what was already delivered, and ships what is new oldest first.
 *
 * The lower bound is the high-water mark minus a window. Most reads use a short window sized from the
 * lateness this stream has shown (entries that appeared behind the mark): a busy stream then costs one
 * page per read instead of re-reading everything written during `logs.overlap`. The first read after
 * start, and one read every DEEP_READ_INTERVAL_MS, use the whole `logs.overlap` window, which catches
 * entries later than the short window and widens it.
 *
 * A failed page request abandons the read: the next one starts again from the checkpoint and the
 * dedupe absorbs what is read twice. Reads that meet only entries without a usable time stop after
 * MAX_TIMELESS_PAGES pages (they give no place to stop at), so malformed data cannot cost a walk
 * through the whole retention.
 */
import type { Logger } from "pino";
import type { LogStream } from "../api/schemas.js";
import type { Clock } from "../util/time.js";
import { CorruptCheckpointError, deliveredCount, prune, type Checkpoint } from "./checkpoint.js";
import type { CheckpointStore, StreamCheckpoint } from "./journal.js";
import { ProtoWriter } from "./otlp/protoWriter.js";
import type { StreamEntry } from "./pending.js";
import { preparePage, type PreparedPage, type RecordEncoder } from "./prepared.js";
import { PageReader, type ReadBounds } from "./read.js";
import type { StreamShipper } from "./shipper.js";
import { ReadBuffer, type BufferBudget } from "./spool.js";
import { entryTimeMs } from "./entry.js";
import type { NumberedSource, ScrollSource, SourcePage } from "./sources.js";

export const DEEP_READ_INTERVAL_MS = 10 * 60_000;
export const MAX_TIMELESS_PAGES = 5;
/**
 * Lateness (decayed) below this counts as none. With none seen, the short window is empty: a read
 * still re-reads the high-water mark's own second (times have one-second precision, and entries of
 * that second may have arrived since), and whatever else its last page holds below the mark is
 * checked too, which is how lateness is first noticed between full-overlap reads.
 */
const NEGLIGIBLE_LATENESS_MS = 100;
/** Entries stamped more than this ahead of the exporter's clock count as from the future. */
export const FUTURE_TOLERANCE_MS = 60_000;
/** How fast the lateness seen long ago stops widening the short window (half-life). */
const LATENESS_HALF_LIFE_MS = 3_600_000;

export interface SiteIdentity {
  /** 0 for the account's own activity log. */
  id: number;
  name: string;
}

export type ReadOutcome =
  /** New records were shipped. */
  | { kind: "found"; shipped: number }
  /** Nothing new. */
  | { kind: "empty" }
  /** Stopped at the page cap with more waiting: read again at once. */
  | { kind: "more"; shipped: number }
  /** The collector is down: read again once it is back. */
  | { kind: "interrupted" }
  /** The checkpoint cannot be trusted: never read again. */
  | { kind: "stopped" };

export interface TailerEvents {
  deduplicated(n: number): void;
  malformed(n: number): void;
  future(n: number): void;
  late(n: number): void;
  gap(fromMs: number, toMs: number): void;
  checkpointError(err: CorruptCheckpointError): void;
  /** The stream was read up to its end at `atMs`. */
  readToEnd(atMs: number): void;
}

export interface TailerOptions {
  overlapMs: number;
  /** Where a stream without a checkpoint starts (logs.startFrom resolved at process start). */
  startFromMs: () => number;
  /** Page requests per read at most (a growing cursor could otherwise never end). */
  maxPagesPerRead: number;
  /** Activity streams: may this stream ship an entry another stream may also list? */
  claim?: (fingerprint: string) => boolean;
  retentionMs: number;
  spoolDir: string;
  bufferBudget: BufferBudget;
  fingerprint: (entry: StreamEntry) => string;
  /** Encodes a new record for the collector as soon as it is read. */
  encoder: RecordEncoder;
  clock: Clock;
  /** Whether the collector is down (then nothing more is fetched). */
  collectorDown: () => boolean;
}

type Source = { kind: "scroll"; scroll: ScrollSource } | { kind: "numbered"; numbered: NumberedSource };

export class Tailer {
  private stored: StreamCheckpoint | undefined;
  private shipper: StreamShipper | undefined;
  failed: CorruptCheckpointError | undefined;
  /** Decaying largest lateness seen, ms, and when it was seen. */
  private lateness = { ms: 0, at: 0 };
  private lastDeepReadAt = -Infinity;
  private spoolCounter = 0;

  constructor(
    readonly site: SiteIdentity,
    readonly stream: LogStream,
    private readonly source: Source,
    private readonly checkpoints: CheckpointStore,
    private readonly makeShipper: (cp: StreamCheckpoint) => StreamShipper,
    private readonly events: TailerEvents,
    private readonly opts: TailerOptions,
    private readonly logger: Logger,
  ) {}

  /** The checkpoint as it stands (undefined before the first read or after a corrupt one). */
  /** Let go of the checkpoint's files (after its last read: the stream was removed). */
  async close(): Promise<void> {
    await this.stored?.close();
  }

  get checkpoint(): Checkpoint | undefined {
    return this.stored?.state;
  }

  /** Open (or create) the checkpoint. A corrupt one stops this stream for good, loudly. */
  async prepare(): Promise<StreamCheckpoint | undefined> {
    if (this.failed) return undefined;
    if (this.stored) return this.stored;
    try {
      const stored = await this.checkpoints.open(
        this.site.id,
        this.stream,
        this.opts.startFromMs,
        this.opts.overlapMs,
      );
      this.stored = stored;
      this.shipper = this.makeShipper(stored);
      return stored;
    } catch (err) {
      if (err instanceof CorruptCheckpointError) {
        this.failed = err;
        this.events.checkpointError(err);
        return undefined;
      }
      throw err;
    }
  }

  /** The short window: the lateness seen (decaying), with room to spare, never above the overlap. */
  lateWindowMs(now: number): number {
    const age = Math.max(0, now - this.lateness.at);
    const seen = this.lateness.ms * 0.5 ** (age / LATENESS_HALF_LIFE_MS);
    if (seen < NEGLIGIBLE_LATENESS_MS) return 0;
    return Math.min(this.opts.overlapMs, Math.ceil(seen * 1.5) + 1000);
  }

  private noteLateness(ms: number, now: number): void {
    const current = this.lateWindowMs(now) / 1.5;
    if (ms > current) this.lateness = { ms, at: now };
  }

  async read(signal: AbortSignal): Promise<ReadOutcome> {
    const stored = await this.prepare();
    if (!stored || !this.shipper) return { kind: "stopped" };
    const now = this.opts.clock.now();
    const deep = now - this.lastDeepReadAt >= DEEP_READ_INTERVAL_MS;
    const state = stored.state;
    const highWaterBefore = state.highWaterMs;
    const deliveredBefore = state.highWaterMs > state.floorMs;
    const bounds = (): ReadBounds => ({
      lowerMs: Math.max(
        state.highWaterMs - (deep ? this.opts.overlapMs : this.lateWindowMs(now)),
        state.floorMs,
      ),
      dedupeFloorMs: Math.max(state.highWaterMs - this.opts.overlapMs, state.floorMs),
      highWaterMs: state.highWaterMs,
      nowMs: now,
      futureToleranceMs: FUTURE_TOLERANCE_MS,
    });
    const run = new ReadRun(this, stored, bounds, signal, ++this.spoolCounter);
    this.shipper.begin(now);
    let result: ReadResult;
    try {
      result =
        this.source.kind === "scroll"
          ? await run.scroll(this.source.scroll, this.shipper)
          : await run.numbered(this.source.numbered, this.shipper);
    } finally {
      await run.buffer.discard();
    }
    if (result.end === "interrupted") {
      stored.release();
      return { kind: "interrupted" };
    }
    prune(state, this.opts.overlapMs);
    await stored.compactIfLarge();
    stored.release();
    if (result.maxLatenessMs > 0) this.noteLateness(result.maxLatenessMs, now);
    if (deep) this.lastDeepReadAt = now;
    if (result.end === "end" || result.end === "lower") this.events.readToEnd(now);
    // Retention passed the checkpoint: the oldest entry still there is newer than what was delivered.
    if (
      deliveredBefore &&
      result.fresh &&
      result.end === "end" &&
      !result.reachedLower &&
      result.oldestSeen !== Infinity &&
      result.oldestSeen > highWaterBefore &&
      highWaterBefore < now - this.opts.retentionMs + 3_600_000
    ) {
      this.events.gap(highWaterBefore, result.oldestSeen);
    }
    if (result.end === "cap") return { kind: "more", shipped: result.shipped };
    return result.shipped > 0 ? { kind: "found", shipped: result.shipped } : { kind: "empty" };
  }

  /** For ReadRun. */
  get context() {
    return {
      events: this.events,
      opts: this.opts,
      logger: this.logger,
      site: this.site,
      stream: this.stream,
    };
  }
}

interface ReadResult {
  end: "end" | "lower" | "cap" | "timeless" | "interrupted";
  shipped: number;
  /** The read began on a fresh scroll (not a held one). */
  fresh: boolean;
  reachedLower: boolean;
  oldestSeen: number;
  maxLatenessMs: number;
}

/** One read in progress: its reader (order, bound, occurrences), buffer and counts. */
class ReadRun {
  readonly buffer: ReadBuffer;
  private readonly writer = new ProtoWriter(64 * 1024);
  private reader: PageReader;
  /** The reader's lower bound. */
  private lowerMs = 0;
  private shipped = 0;
  private maxLatenessMs = 0;

  constructor(
    private readonly tailer: Tailer,
    private readonly stored: StreamCheckpoint,
    private readonly bounds: () => ReadBounds,
    private readonly signal: AbortSignal,
    serial: number,
  ) {
    const { opts, site, stream } = tailer.context;
    this.buffer = new ReadBuffer(
      opts.spoolDir,
      `${site.id}-${stream}-${process.pid}-${serial}`,
      opts.bufferBudget,
    );
    this.reader = this.newReader();
  }

  private newReader(): PageReader {
    const bounds = this.bounds();
    this.lowerMs = bounds.lowerMs;
    const { opts, stream } = this.tailer.context;
    const state = this.stored.state;
    return new PageReader(
      bounds,
      (fp) => deliveredCount(state, fp),
      opts.fingerprint,
      stream === "activity",
      opts.claim,
    );
  }

  /** Start over from the checkpoint (the dedupe absorbs what is read again). */
  private async restart(): Promise<void> {
    await this.buffer.discard();
    this.reader = this.newReader();
  }

  /** Accept a page: count, and ship (oldest-first reads) or buffer (newest-first reads) what is new. */
  private async take(page: SourcePage, shipper: StreamShipper): Promise<{ timeless: boolean }> {
    const { events } = this.tailer.context;
    if (page.rejected > 0) events.malformed(page.rejected);
    const v = this.reader.accept(page.entries);
    if (v.deduplicated > 0) events.deduplicated(v.deduplicated);
    if (v.malformed > 0) events.malformed(v.malformed);
    if (v.future > 0) events.future(v.future);
    if (v.late > 0) events.late(v.late);
    this.maxLatenessMs = Math.max(this.maxLatenessMs, v.maxLatenessMs);
    const { encoder } = this.tailer.context.opts;
    if (this.reader.order === "oldest-first") {
      // Ship what was buffered while the order was unknown, then page by page.
      for await (const older of this.buffer.oldestFirst()) await this.ship(older, shipper);
      await this.buffer.discard();
      if (v.kept.length > 0) await this.ship(preparePage(v.kept, encoder, this.writer), shipper);
    } else if (v.kept.length > 0) {
      // Held until the read reaches the checkpoint, then shipped oldest first: prepared in that order.
      await this.buffer.add(preparePage(v.kept.reverse(), encoder, this.writer));
    }
    return { timeless: v.timeless && page.rawCount > 0 };
  }

  private async ship(page: PreparedPage, shipper: StreamShipper): Promise<void> {
    this.shipped += page.count;
    await shipper.add(page);
  }

  private async finish(shipper: StreamShipper, end: ReadResult["end"], fresh: boolean): Promise<ReadResult> {
    if (end !== "interrupted") {
      for await (const chunk of this.buffer.oldestFirst()) await this.ship(chunk, shipper);
    }
    await shipper.flush();
    return {
      end,
      shipped: this.shipped,
      fresh,
      reachedLower: this.reader.reachedLower,
      oldestSeen: this.reader.oldestSeen,
      maxLatenessMs: this.maxLatenessMs,
    };
  }

  /** Would the page after this one be read? (Then it can be fetched while this one is processed.) */
  private needsNext(
    page: SourcePage & { scrollId: string | null },
    pages: number,
    timelessRun: number,
  ): boolean {
    if (page.rawCount === 0 || page.scrollId === null) return false;
    const { maxPagesPerRead } = this.tailer.context.opts;
    if (this.reader.order === "oldest-first" && pages >= maxPagesPerRead) return false;
    let first: number | undefined;
    let last: number | undefined;
    for (let i = 0; first === undefined && i < page.entries.length; i++)
      first = entryTimeMs(page.entries[i]?.timestamp);
    for (let i = page.entries.length - 1; last === undefined && i >= 0; i--)
      last = entryTimeMs(page.entries[i]?.timestamp);
    // A page without a usable time that ends the run of such pages ends the read.
    if (first === undefined && timelessRun + 1 >= MAX_TIMELESS_PAGES) return false;
    // A newest-first page that already goes below the bound ends the read.
    return !(first !== undefined && last !== undefined && last < first && last < this.lowerMs);
  }

  async scroll(source: ScrollSource, shipper: StreamShipper): Promise<ReadResult> {
    const { opts } = this.tailer.context;
    const request = { signal: this.signal, source: "logs" };
    const { continuing: heldAtStart, heldAtEnd } = source.begin();
    let continuing = heldAtStart;
    let pages = 0;
    let timelessRun = 0;
    for (;;) {
      if (this.signal.aborted) throw this.signal.reason ?? new Error("aborted");
      if (opts.collectorDown()) {
        // Everything read so far was shipped: continue this scroll next time.
        if (this.buffer.pageCount === 0 && (continuing || this.reader.order === "oldest-first")) {
          source.hold(heldAtEnd && pages === 0);
        }
        return this.finish(shipper, "interrupted", !heldAtStart);
      }
      // Only an oldest-first scroll is cut at the cap: what it read is shipped, so it resumes next
      // time. A newest-first read must reach the checkpoint before anything is shipped.
      if (pages >= opts.maxPagesPerRead && this.reader.order === "oldest-first") {
        source.hold(false);
        return this.finish(shipper, "cap", !heldAtStart);
      }
      let page;
      try {
        page = await source.next(request);
      } catch (err) {
        if (!continuing || this.signal.aborted) throw err;
        // The held scroll expired: start over with a fresh scroll.
        source.restart();
        continuing = false;
        await this.restart();
        continue;
      }
      pages += 1;
      if (page.rawCount === 0) {
        if (continuing && heldAtEnd && !source.cursorGrows) {
          // Nothing new on a held scroll that never grew: it may be a snapshot, so look afresh.
          source.restart();
          continuing = false;
          await this.restart();
          continue;
        }
        if (continuing || this.reader.order === "oldest-first") source.hold(true);
        return this.finish(shipper, "end", !heldAtStart);
      }
      if (continuing && heldAtEnd && page.entries.length > 0) source.cursorGrows = true;
      if (this.needsNext(page, pages, timelessRun)) source.prefetch(request);
      const { timeless } = await this.take(page, shipper);
      timelessRun = timeless ? timelessRun + 1 : 0;
      if (this.reader.complete) return this.finish(shipper, "lower", !heldAtStart);
      if (page.scrollId === null) return this.finish(shipper, "end", !heldAtStart);
      if (timelessRun >= MAX_TIMELESS_PAGES) {
        if (continuing || this.reader.order === "oldest-first") source.hold(false);
        return this.finish(shipper, "timeless", !heldAtStart);
      }
    }
  }

  async numbered(source: NumberedSource, shipper: StreamShipper): Promise<ReadResult> {
    const { opts } = this.tailer.context;
    const request = { signal: this.signal, source: "logs" };
    source.begin();
    let timelessRun = 0;
    for (;;) {
      if (this.signal.aborted) throw this.signal.reason ?? new Error("aborted");
      if (opts.collectorDown()) return this.finish(shipper, "interrupted", true);
      // Numbered pages are always taken newest first, so like a newest-first scroll the read has no
      // page cap: stopping short of the checkpoint would ship the newest entries and skip the middle.
      const page = await source.next(request);
      if (page === null || page.rawCount === 0) return this.finish(shipper, "end", true);
      const { timeless } = await this.take(page, shipper);
      timelessRun = timeless ? timelessRun + 1 : 0;
      if (this.reader.complete) return this.finish(shipper, "lower", true);
      if (timelessRun >= MAX_TIMELESS_PAGES) return this.finish(shipper, "timeless", true);
    }
  }
}
