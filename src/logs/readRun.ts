/**
 * One read of a stream in progress, page by page: the page reader (order, lower bound, occurrences),
 * the buffer of a newest-first read, and the counts. A scroll read may continue a scroll held from
 * the previous read and fetches the next page while one is processed; a numbered read (activity
 * logs) walks the pages the source plans. Either way the read ends at the end of the stream, at the
 * checkpoint's lower bound, at the page cap (oldest-first scrolls only), after MAX_TIMELESS_PAGES pages without a usable time,
 * or when the collector goes down; what it found new is shipped before it returns.
 */
import type { LogStream } from "../api/schemas.js";
import { deliveredCount } from "./checkpoint.js";
import { entryTimeMs } from "./entry.js";
import type { StreamCheckpoint } from "./journal.js";
import { ProtoWriter } from "./otlp/protoWriter.js";
import { preparePage, type PreparedPage } from "./prepared.js";
import { PageReader, type ReadBounds } from "./read.js";
import type { StreamShipper } from "./shipper.js";
import type { NumberedSource, ScrollSource, SourcePage } from "./sources.js";
import { ReadBuffer } from "./spool.js";
import type { SiteIdentity, TailerEvents, TailerOptions } from "./tailer.js";

/** Pages in a row without a usable time after which a read stops (they give no place to stop at). */
export const MAX_TIMELESS_PAGES = 5;

/** What a read needs of its tailer. */
export interface ReadContext {
  events: TailerEvents;
  opts: TailerOptions;
  site: SiteIdentity;
  stream: LogStream;
}

export interface ReadResult {
  end: "end" | "lower" | "cap" | "timeless" | "interrupted";
  shipped: number;
  /** The read began on a fresh scroll (not a held one). */
  fresh: boolean;
  reachedLower: boolean;
  oldestSeen: number;
  maxLatenessMs: number;
}

export class ReadRun {
  readonly buffer: ReadBuffer;
  private readonly writer = new ProtoWriter(64 * 1024);
  private reader: PageReader;
  /** The reader's lower bound. */
  private lowerMs = 0;
  private shipped = 0;
  private maxLatenessMs = 0;

  constructor(
    private readonly ctx: ReadContext,
    private readonly stored: StreamCheckpoint,
    private readonly bounds: () => ReadBounds,
    private readonly signal: AbortSignal,
    serial: number,
  ) {
    const { opts, site, stream } = ctx;
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
    const { opts, stream } = this.ctx;
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
    const { events } = this.ctx;
    if (page.rejected > 0) events.malformed(page.rejected);
    const v = this.reader.accept(page.entries);
    if (v.deduplicated > 0) events.deduplicated(v.deduplicated);
    if (v.malformed > 0) events.malformed(v.malformed);
    if (v.future > 0) events.future(v.future);
    if (v.late > 0) events.late(v.late);
    this.maxLatenessMs = Math.max(this.maxLatenessMs, v.maxLatenessMs);
    const { encoder } = this.ctx.opts;
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
    const { maxPagesPerRead } = this.ctx.opts;
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
    const { opts } = this.ctx;
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
    const { opts } = this.ctx;
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
