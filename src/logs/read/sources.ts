/**
 * Where a read's pages come from.
 *
 * PHP and web-server logs page through a `scroll_id`: a short-lived paging hint, never the durable
 * cursor. A scroll can be held for the next read (a growing cursor read to its end, an oldest-first
 * scroll cut at the page cap), and the next page can be fetched while the current one is processed.
 * A prefetched page has moved the platform's scroll on, so a held scroll keeps that page with it.
 * Each read gets a cursor of its own (`open`); what it leaves for the next read is what its `close`
 * says, nothing else.
 *
 * Activity logs page by number (`page`, `per_page` ≤ 50). Their order is read from the first page:
 * newest-first pages are read from page 1 on; oldest-first ones from the last page backwards, each
 * page reversed, so the read always sees the newest entries first and new entries never shift the
 * pages still to be read.
 */
import type { ActivityEntry, LogEntry } from "../../api/schemas.js";
import type { LogPage, PageResult, RequestOptions } from "../../api/types.js";
import { checkedRecords } from "../../api/logRecords.js";
import { entryTimeMs } from "../entry.js";
import { RecordEntries } from "./pageEntries.js";
import { SCROLL_PAGE_SIZE } from "./decide.js";
import type { Hold, PageCursor, PageSource, ScrollStart, SourcePage } from "./types.js";

export type FetchScrollPage = (scrollId: string | null, opts: RequestOptions) => Promise<LogPage<LogEntry>>;
/**
 * A page of a site's scroll. One function serves every stream of a kind, given the site: thousands of
 * streams hold their site's id instead of a closure (and its context) each.
 */
export type FetchSiteScrollPage = (
  siteId: number,
  scrollId: string | null,
  opts: RequestOptions,
) => Promise<LogPage<LogEntry>>;

interface HeldScroll {
  scrollId: string;
  /** The scroll was read to its end (a cursor that may grow). */
  atEnd: boolean;
  /** A page fetched ahead and not yet read. */
  pending?: Promise<LogPage<LogEntry>>;
}

export class ScrollSource implements PageSource {
  // Getters, not fields: one source per stream, thousands of streams.
  get resumable(): boolean {
    return true;
  }
  get pageSize(): number {
    return SCROLL_PAGE_SIZE;
  }
  private held: HeldScroll | null = null;
  /** A held cursor, continued from its end, returned new entries once: it grows (not a snapshot). */
  private grown = false;

  constructor(
    private readonly fetchSitePage: FetchSiteScrollPage,
    private readonly siteId: number,
  ) {}

  open(): PageCursor {
    const held = this.held;
    this.held = null;
    const { fetchSitePage, siteId } = this;
    const fetchPage: FetchScrollPage = (scrollId, opts) => fetchSitePage(siteId, scrollId, opts);
    // What the read leaves for the next one, and what it learnt about the scroll, come back only
    // through its cursor's close.
    return new ScrollCursor(fetchPage, held, this.grown, (next, grown) => {
      this.held = next;
      this.grown ||= grown;
    });
  }
}

class ScrollCursor implements PageCursor {
  start: ScrollStart;
  private scrollId: string | null;
  private ahead: Promise<LogPage<LogEntry>> | undefined;
  private grown = false;
  private closed = false;

  constructor(
    private readonly fetchPage: FetchScrollPage,
    held: HeldScroll | null,
    private readonly grownBefore: boolean,
    private readonly settle: (held: HeldScroll | null, grown: boolean) => void,
  ) {
    this.start = held === null ? "fresh" : held.atEnd ? "held-at-end" : "held-mid";
    this.scrollId = held?.scrollId ?? null;
    this.ahead = held?.pending;
  }

  get grows(): boolean {
    return this.grown || this.grownBefore;
  }

  async next(opts: RequestOptions): Promise<SourcePage> {
    const page = await (this.ahead ?? this.fetchPage(this.scrollId, opts));
    this.ahead = undefined;
    this.scrollId = page.scrollId;
    if (this.start === "held-at-end" && page.records.length > 0) this.grown = true;
    return {
      entries: new RecordEntries(page.records),
      rawCount: page.rawCount,
      rejected: page.rejected,
      continuation: page.scrollId !== null,
    };
  }

  prefetch(opts: RequestOptions): void {
    if (this.ahead || this.scrollId === null) return;
    const p = this.fetchPage(this.scrollId, opts);
    p.catch(() => undefined); // read (and its failure handled) by next()
    this.ahead = p;
  }

  restart(): void {
    this.start = "fresh";
    this.scrollId = null;
    this.ahead = undefined;
  }

  close(hold: Hold): void {
    if (this.closed) return;
    this.closed = true;
    const keep = hold !== "none" && this.scrollId !== null;
    this.settle(
      keep
        ? {
            scrollId: this.scrollId as string,
            atEnd: hold === "at-end",
            ...(this.ahead ? { pending: this.ahead } : {}),
          }
        : null,
      this.grown,
    );
  }
}

export type FetchNumberedPage = (page: number, opts: RequestOptions) => Promise<PageResult<ActivityEntry>>;
/** A numbered page of a site's activity (site 0: the account's), one function for every stream. */
export type FetchSiteNumberedPage = (
  siteId: number,
  page: number,
  opts: RequestOptions,
) => Promise<PageResult<ActivityEntry>>;

/** Activity logs: numbered pages, delivered to the read newest first whatever order the platform uses. */
export class NumberedSource implements PageSource {
  get resumable(): boolean {
    return false;
  }

  constructor(
    private readonly fetchSitePage: FetchSiteNumberedPage,
    private readonly siteId: number,
    /** per_page of the requests (activity logs: at most 50). */
    readonly pageSize = 50,
  ) {}

  open(): PageCursor {
    const { fetchSitePage, siteId } = this;
    return new NumberedCursor((page, opts) => fetchSitePage(siteId, page, opts));
  }
}

/** The page after the last one is an empty page without a continuation. */
const NO_MORE: SourcePage = {
  entries: new RecordEntries(checkedRecords([])),
  rawCount: 0,
  rejected: 0,
  continuation: false,
};

class NumberedCursor implements PageCursor {
  readonly start = "fresh";
  readonly grows = false;
  private plan: number[] = [];
  private reverse = false;
  private first = true;

  constructor(private readonly fetchPage: FetchNumberedPage) {}

  async next(opts: RequestOptions): Promise<SourcePage> {
    if (this.first) {
      this.first = false;
      const page = await this.fetchPage(1, opts);
      const last = page.page?.lastPage ?? (page.page?.nextPage ? Infinity : 1);
      if (!isOldestFirst(page.items)) {
        this.plan = page.page?.nextPage ? [page.page.nextPage] : [];
        return toSource(page, false);
      }
      this.reverse = true;
      if (last <= 1 || !Number.isFinite(last)) return toSource(page, true);
      this.plan = Array.from({ length: last }, (_, i) => last - i);
      return this.next(opts);
    }
    const number = this.plan.shift();
    if (number === undefined) return NO_MORE;
    const page = await this.fetchPage(number, opts);
    if (!this.reverse && page.page?.nextPage && page.items.length > 0) this.plan.push(page.page.nextPage);
    return toSource(page, this.reverse);
  }

  prefetch(): void {}
  restart(): void {}
  close(): void {}
}

function toSource(page: PageResult<ActivityEntry>, reverse: boolean): SourcePage {
  const entries = reverse ? [...page.items].reverse() : page.items;
  return {
    entries: new RecordEntries(checkedRecords(entries)),
    rawCount: page.items.length + page.rejected,
    rejected: page.rejected,
    continuation: true,
  };
}

/** Times that rise through the page (the first difference decides). */
function isOldestFirst(entries: readonly ActivityEntry[]): boolean {
  let last: number | undefined;
  for (const e of entries) {
    const t = entryTimeMs(e.timestamp);
    if (t === undefined) continue;
    if (last !== undefined && t !== last) return t > last;
    last = t;
  }
  return false;
}
