/**
 * One read of a stream in progress, page by page: the page reader (order, lower bound, occurrences),
 * the buffer of a newest-first read, and the counts. The loop gathers the facts of each page and does
 * what `decide` (decide.ts) says: fetch the next page (ahead of time when the page being processed
 * will not end the read), start over on a fresh scroll, give up, or end, keeping the scroll for the
 * next read or not. What the read found new is shipped before it returns.
 */
import type { RequestOptions } from "../../api/types.js";
import type { LogStream } from "../../api/schemas.js";
import { SitehostApiError } from "../../api/errors.js";
import { deliveredCount } from "../checkpoint.js";
import type { StreamCheckpoint } from "../journal.js";
import { preparePage, type PreparedPage } from "../prepared.js";
import { ReadBuffer } from "../spool.js";
import { readBounds, type WindowFacts } from "./bounds.js";
import { decide, MAX_UNUSABLE_PAGES, type LastPage, type ReadFacts } from "./decide.js";
import { PageReader } from "./pageReader.js";
import { PagesSeen } from "./repeats.js";
import type {
  EndReason,
  PageOutlet,
  PagingProblem,
  PageCursor,
  PageSource,
  ReadLimits,
  ReadResult,
  SiteIdentity,
  SourcePage,
  StreamParts,
  TailerEvents,
  TailerOptions,
} from "./types.js";

/** Pages one read fetches at most, whatever its order: 10 million entries of 200 a page. */
export const READ_MAX_PAGES = 50_000;
/** Times in a row a page may come again right after itself before the read ends as on a loop. */
export const MAX_PAGES_SERVED_AGAIN = 3;
/** Bytes of new records one newest-first read holds back (in memory, then on disk) at most. */
export const READ_MAX_HELD_BYTES = 2 * 1024 ** 3;

/** The paging problem each end that stops a read short stands for. */
const PROBLEMS: Partial<Record<EndReason, PagingProblem>> = {
  repeated: "repeated_page",
  pages: "page_limit",
  bytes: "byte_limit",
  unusable: "unusable_pages",
};

/** A full page came without a continuation: more entries must follow, but there is no way to them. */
export class MissingContinuationError extends Error {
  constructor(stream: LogStream, pages: number) {
    super(
      `page ${pages} of the ${stream} log is full but came without a scroll_id, so the entries after it cannot be read; ` +
        "nothing was skipped: the read is retried from the checkpoint",
    );
    this.name = "MissingContinuationError";
  }
}

/** What a read needs of its tailer. */
export interface ReadContext {
  events: TailerEvents;
  opts: TailerOptions;
  parts: StreamParts;
  site: SiteIdentity;
  stream: LogStream;
}

/** A page's new records, encoded, and what the read learnt from it. */
interface TakenPage {
  prepared: PreparedPage | undefined;
  oldestFirst: boolean;
  /** No entry of the page had a usable time. */
  unusable: boolean;
  /** More than half the page's entries were new. */
  mostlyNew: boolean;
}

export class ReadRun {
  readonly buffer: ReadBuffer;
  private reader: PageReader;
  private shipped = 0;
  private maxLatenessMs = 0;
  /** Bytes of new records held back in `buffer`. */
  private heldBytes = 0;
  private seen = new PagesSeen();
  /** Malformed entries met, pages with a usable one, and new ones that did not fit (see malformedOnly). */
  private malformed = 0;
  private usablePages = 0;
  private unfit = 0;

  constructor(
    private readonly ctx: ReadContext,
    private readonly stored: StreamCheckpoint,
    private readonly window: WindowFacts,
    private readonly signal: AbortSignal,
    serial: number,
    /** A page over api.maxResponseSize may be given up (see decide.ts). */
    private readonly skipTooLarge = false,
  ) {
    const { opts, site, stream } = ctx;
    this.buffer = new ReadBuffer(
      opts.spoolDir,
      `${site.id}-${stream}-${process.pid}-${serial}`,
      opts.bufferBudget,
    );
    this.reader = this.newReader();
  }

  /** A reader for a pass from the checkpoint as it stands now (see bounds.ts). */
  private newReader(): PageReader {
    const { opts, parts, stream } = this.ctx;
    const state = this.stored.state;
    return new PageReader(
      readBounds(state, this.window),
      (fp) => deliveredCount(state, fp),
      opts.fingerprint,
      stream === "activity",
      parts.claim,
    );
  }

  /** Start over from the checkpoint (the dedupe absorbs what is read again). */
  private async restart(): Promise<void> {
    await this.buffer.discard();
    this.heldBytes = 0;
    this.seen = new PagesSeen();
    this.reader = this.newReader();
  }

  async run(source: PageSource, shipper: PageOutlet): Promise<ReadResult> {
    const cursor = source.open();
    try {
      return await this.pages(cursor, source, shipper);
    } finally {
      cursor.close("none"); // a read that threw keeps nothing (an ended one closed it already)
    }
  }

  private async pages(cursor: PageCursor, source: PageSource, shipper: PageOutlet): Promise<ReadResult> {
    const { opts, events } = this.ctx;
    const request: RequestOptions = { signal: this.signal, source: "logs", recordsMostlyNew: false };
    const limits: ReadLimits = {
      capPages: source.resumable ? opts.maxPagesPerRead : Infinity,
      maxPages: READ_MAX_PAGES,
      maxHeldBytes: READ_MAX_HELD_BYTES,
      unusablePages: MAX_UNUSABLE_PAGES,
      ...opts.readLimits,
    };
    let pages = 0;
    let unusableRun = 0;
    /** Pages in a row that were the page before them again. */
    let servedAgain = 0;
    let last: LastPage = { kind: "none" };
    let failure: unknown;
    const facts = (): ReadFacts => ({
      start: cursor.start,
      grows: cursor.grows,
      order: this.reader.order,
      pages,
      heldBytes: this.heldBytes,
      buffered: this.buffer.pageCount > 0,
      collectorDown: opts.collectorDown(),
      skipTooLarge: this.skipTooLarge && Number.isFinite(this.reader.oldestSeen),
      last,
    });
    for (;;) {
      if (this.signal.aborted)
        throw last.kind === "failed" ? failure : (this.signal.reason ?? new Error("aborted"));
      const step = decide(facts(), limits);
      if (step.kind === "fail") {
        if (step.why === "request-failed") throw failure;
        events.pagingProblem("no_continuation");
        throw new MissingContinuationError(this.ctx.stream, pages);
      }
      if (step.kind === "end") {
        cursor.close(step.hold);
        const problem = PROBLEMS[step.why];
        if (problem) events.pagingProblem(problem);
        return this.finish(shipper, step.why, cursor.start === "fresh");
      }
      if (step.kind === "restart") {
        cursor.restart();
        await this.restart();
        last = { kind: "none" };
        continue;
      }
      let page: SourcePage | undefined;
      try {
        page = await cursor.next(request);
      } catch (err) {
        failure = err;
        const tooLarge = err instanceof SitehostApiError && err.reason === "too_large";
        last = { kind: "failed", aborted: this.signal.aborted, tooLarge };
        continue;
      }
      pages += 1;
      const facts0 = { kind: "page", rawCount: page.rawCount, continuation: page.continuation } as const;
      const repeat = page.rawCount === 0 ? undefined : this.seen.repeats(page.entries, opts.fingerprint);
      if (page.rawCount === 0 || repeat !== undefined) {
        // The end of the scroll, or a page read before (not taken again: its entries would count as
        // second occurrences of identical lines). A page served twice in a row (a source that
        // answered one request twice) is passed over, the scroll read on; a loop ends the read.
        page.entries.release();
        const again = repeat === "previous" && ++servedAgain <= MAX_PAGES_SERVED_AGAIN;
        if (again) events.pagingProblem("repeated_page");
        last = { ...facts0, repeated: page.rawCount > 0 && !again, passedLower: false, unusableRun };
        continue;
      }
      servedAgain = 0;
      // Fetch the next page while this one is processed, when this one will not end the read.
      const ahead = decide(
        { ...facts(), collectorDown: false, buffered: false, last: this.preview(page, unusableRun) },
        limits,
      );
      if (ahead.kind === "continue") cursor.prefetch(request);
      const taken = this.accept(page);
      // Its bytes go back to be read into again (every entry that may ship was built).
      page.entries.release();
      // A backlog's next pages are decoded whole, a quiet stream's record by record as needed.
      request.recordsMostlyNew = taken.mostlyNew;
      // The page's parsed entries are garbage from here: not held while its records are written and
      // shipped (every await may outlast a young-generation collection, which would move them to the
      // old generation, and 5,000 sites' reads would fill it with garbage). The interpreter keeps a
      // suspended function's registers, dead or not, so the reference is dropped by hand.
      // eslint-disable-next-line no-useless-assignment
      page = undefined;
      await this.keep(taken, shipper);
      unusableRun = taken.unusable ? unusableRun + 1 : 0;
      last = { ...facts0, repeated: false, passedLower: this.reader.complete, unusableRun };
    }
  }

  /** The page's facts as far as they can be told before it is taken (from its first and last times). */
  private preview(page: SourcePage, unusableRun: number): LastPage {
    let first: number | undefined;
    let last: number | undefined;
    const { entries } = page;
    for (let i = 0; first === undefined && i < entries.length; i++) first = entries.timeMs(i);
    for (let i = entries.length - 1; last === undefined && i >= 0; i--) last = entries.timeMs(i);
    return {
      kind: "page",
      rawCount: page.rawCount,
      continuation: page.continuation,
      repeated: false,
      // A newest-first page that already goes below the bound.
      passedLower: first !== undefined && last !== undefined && last < first && last < this.reader.lowerMs,
      unusableRun: first === undefined ? unusableRun + 1 : 0,
    };
  }

  /** Accept a page: count, dedupe, and encode what is new (in shipping order). */
  private accept(page: SourcePage): TakenPage {
    const { events } = this.ctx;
    if (page.rejected > 0) events.malformed(page.rejected);
    const v = this.reader.accept(page.entries);
    this.malformed += page.rejected + v.malformed;
    this.unfit += v.unfit;
    if (!v.timeless) this.usablePages += 1;
    if (v.kept.length > 0) events.recordsTaken(v.kept.length);
    if (v.deduplicated > 0) events.deduplicated(v.deduplicated);
    if (v.malformed > 0) events.malformed(v.malformed);
    if (v.future > 0) events.future(v.future);
    if (v.late > 0) events.late(v.late);
    this.maxLatenessMs = Math.max(this.maxLatenessMs, v.maxLatenessMs);
    const { encoder } = this.ctx.parts;
    const oldestFirst = this.reader.order === "oldest-first";
    const kept = v.kept.length === 0 ? undefined : oldestFirst ? v.kept : v.kept.reverse();
    return {
      prepared: kept && preparePage(kept, encoder),
      oldestFirst,
      unusable: v.timeless,
      mostlyNew: 2 * v.kept.length > page.entries.length,
    };
  }

  /** Ship (oldest-first reads) or buffer (newest-first reads) a page's new records. */
  private async keep(taken: TakenPage, shipper: PageOutlet): Promise<void> {
    const { prepared } = taken;
    if (taken.oldestFirst) {
      // Ship what was buffered while the order was unknown, then page by page.
      for await (const older of this.buffer.oldestFirst()) await this.ship(older, shipper);
      await this.buffer.discard();
      this.heldBytes = 0;
      if (prepared) await this.ship(prepared, shipper);
    } else if (prepared) {
      // Held until the read reaches the checkpoint, then shipped oldest first: prepared in that order.
      this.heldBytes += prepared.bytes.length;
      await this.buffer.add(prepared);
    }
  }

  private async ship(page: PreparedPage, shipper: PageOutlet): Promise<void> {
    this.shipped += page.count;
    await shipper.add(page);
  }

  private async finish(shipper: PageOutlet, end: EndReason, fresh: boolean): Promise<ReadResult> {
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
      malformed: this.malformed,
      // Nothing but malformed entries, or nothing new but entries that did not fit the schema.
      malformedOnly: this.malformed > 0 && (this.usablePages === 0 || (this.shipped === 0 && this.unfit > 0)),
    };
  }
}
