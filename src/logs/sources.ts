/**
 * Where a read's pages come from.
 *
 * PHP and web-server logs page through a `scroll_id`: a short-lived paging hint, never the durable
 * cursor. A scroll can be held for the next read (a growing cursor read to its end, an oldest-first
 * scroll cut at the page cap), and the next page can be fetched while the current one is processed.
 * A prefetched page has moved the platform's scroll on, so a held scroll keeps that page with it.
 *
 * Activity logs page by number (`page`, `per_page` ≤ 50). Their order is read from the first page:
 * newest-first pages are read from page 1 on; oldest-first ones from the last page backwards, each
 * page reversed, so the read always sees the newest entries first and new entries never shift the
 * pages still to be read.
 */
import type { ActivityEntry, LogEntry } from "../api/schemas.js";
import type { LogPage, PageResult, RequestOptions } from "../api/types.js";
import { entryTimeMs } from "./entry.js";
import type { StreamEntry } from "./pending.js";

export interface SourcePage {
  entries: StreamEntry[];
  /** Records the page held, valid and skipped. */
  rawCount: number;
  /** Records that did not fit the schema. */
  rejected: number;
}

export type FetchScrollPage = (scrollId: string | null, opts: RequestOptions) => Promise<LogPage<LogEntry>>;

interface HeldScroll {
  scrollId: string;
  /** The scroll was read to its end (a cursor that may grow). */
  atEnd: boolean;
  /** A page fetched ahead and not yet read. */
  pending?: Promise<LogPage<LogEntry>>;
}

export class ScrollSource {
  private scrollId: string | null = null;
  private held: HeldScroll | null = null;
  private ahead: Promise<LogPage<LogEntry>> | undefined;
  /** Whether a held cursor, continued from its end, ever returned new entries (it grows; not a snapshot). */
  cursorGrows = false;

  constructor(private readonly fetchPage: FetchScrollPage) {}

  /** Start a read: continue the held scroll if there is one. */
  begin(): { continuing: boolean; heldAtEnd: boolean } {
    const held = this.held;
    this.held = null;
    this.scrollId = held?.scrollId ?? null;
    this.ahead = held?.pending;
    return { continuing: held !== null, heldAtEnd: held?.atEnd ?? false };
  }

  /** The next page of the current scroll (a fresh scroll when there is none). */
  async next(opts: RequestOptions): Promise<SourcePage & { scrollId: string | null }> {
    const page = await (this.ahead ?? this.fetchPage(this.scrollId, opts));
    this.ahead = undefined;
    this.scrollId = page.scrollId;
    return { entries: page.items, rawCount: page.rawCount, rejected: page.rejected, scrollId: page.scrollId };
  }

  /** Fetch the page after the last one returned, while it is processed. */
  prefetch(opts: RequestOptions): void {
    if (this.ahead || this.scrollId === null) return;
    const p = this.fetchPage(this.scrollId, opts);
    p.catch(() => undefined); // read (and its failure handled) by next()
    this.ahead = p;
  }

  /** Forget the current scroll: the next page opens a fresh one. */
  restart(): void {
    this.scrollId = null;
    this.ahead = undefined;
  }

  /** Keep the current scroll, and a page fetched ahead, for the next read. */
  hold(atEnd: boolean): void {
    if (this.scrollId === null) return;
    this.held = this.ahead
      ? { scrollId: this.scrollId, atEnd, pending: this.ahead }
      : { scrollId: this.scrollId, atEnd };
    this.ahead = undefined;
  }
}

export type FetchNumberedPage = (page: number, opts: RequestOptions) => Promise<PageResult<ActivityEntry>>;

/** Activity logs: numbered pages, delivered to the read newest first whatever order the platform uses. */
export class NumberedSource {
  private plan: number[] = [];
  private reverse = false;
  private first = true;

  constructor(private readonly fetchPage: FetchNumberedPage) {}

  begin(): void {
    this.plan = [];
    this.reverse = false;
    this.first = true;
  }

  /** The next page, or null after the last. */
  async next(opts: RequestOptions): Promise<SourcePage | null> {
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
    if (number === undefined) return null;
    const page = await this.fetchPage(number, opts);
    if (!this.reverse && page.page?.nextPage && page.items.length > 0) this.plan.push(page.page.nextPage);
    return toSource(page, this.reverse);
  }
}

function toSource(page: PageResult<ActivityEntry>, reverse: boolean): SourcePage {
  const entries = reverse ? [...page.items].reverse() : page.items;
  return { entries, rawCount: page.items.length + page.rejected, rejected: page.rejected };
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
