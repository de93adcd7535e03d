/**
 * Scrolls over a site's log stream: 200 entries a page, newest-first or oldest-first, a snapshot or
 * a growing cursor, expired after an idle time; and the log endpoints' filters.
 */
import type { Entry, LogSource } from "./logEntries.js";
import {
  LOG_PAGE_SIZE,
  RETENTION_SECONDS,
  type LogOrder,
  type ScrollMode,
  type SimLogs,
  type SimStream,
} from "./logs.js";
import { hash32 } from "./random.js";

export interface ScrollState {
  id: string;
  siteId: number;
  stream: SimStream;
  order: LogOrder;
  mode: ScrollMode;
  /** Next second to read and how many entries of it were already returned. */
  second: number;
  index: number;
  /** Where the scroll began, and the pages returned since (the looping-scroll fault). */
  firstSecond: number;
  served: number;
  lower: number;
  upper: number;
  maxSeq: number;
  /** The reader's moment: entries visible by then are in the scroll (a cursor moves it on each page). */
  viewMs: number;
  lastUsed: number;
  /** The request's filters (status, request_type, user_ip), fixed when the scroll opened. */
  filter: ((entry: Entry) => boolean) | null;
}

/** Filters of the log endpoints: php `status` (a severity word); server `status`, `request_type`, `user_ip`. */
export function logFilter(
  stream: SimStream,
  params: Record<string, string | null>,
): ((e: Entry) => boolean) | null {
  const tests: Array<(e: Entry) => boolean> = [];
  const status = params.status ?? null;
  if (stream === "php") {
    if (status) tests.push((e) => String(e.severity ?? "").toLowerCase() === status.toLowerCase());
  } else {
    if (status) tests.push((e) => String(e.status) === status);
    const method = params.request_type ?? null;
    if (method) tests.push((e) => String(e.request_type ?? "").toUpperCase() === method.toUpperCase());
    const ip = params.user_ip ?? null;
    if (ip) tests.push((e) => e.user_ip === ip);
  }
  return tests.length === 0 ? null : (e) => tests.every((t) => t(e));
}

export class ScrollStore {
  private readonly scrolls = new Map<string, ScrollState>();
  private counter = 0;
  private lastSweep = 0;

  constructor(
    private readonly logs: SimLogs,
    public idleTimeoutMs: number,
  ) {}

  open(
    src: LogSource,
    stream: SimStream,
    order: LogOrder,
    mode: ScrollMode,
    nowMs: number,
    filter: ((entry: Entry) => boolean) | null = null,
  ): ScrollState {
    this.sweep(nowMs);
    const nowSec = Math.floor(nowMs / 1000);
    const lower = nowSec - RETENTION_SECONDS;
    const state: ScrollState = {
      id: `scroll-${++this.counter}-${hash32(src.siteId, nowMs, this.counter).toString(36)}`,
      siteId: src.siteId,
      stream,
      order,
      mode: order === "oldest-first" ? mode : "snapshot",
      second: order === "oldest-first" ? lower : nowSec,
      index: 0,
      firstSecond: order === "oldest-first" ? lower : nowSec,
      served: 0,
      lower,
      upper: nowSec,
      maxSeq: this.logs.currentSeq,
      viewMs: nowMs,
      lastUsed: nowMs,
      filter,
    };
    this.scrolls.set(state.id, state);
    return state;
  }

  get(id: string, nowMs: number): ScrollState | undefined {
    const state = this.scrolls.get(id);
    if (!state) return undefined;
    if (nowMs - state.lastUsed > this.idleTimeoutMs) {
      this.scrolls.delete(id);
      return undefined;
    }
    return state;
  }

  /** The next page of a scroll (empty when it is exhausted); after `loopPages` pages, its first page again. */
  page(src: LogSource, state: ScrollState, nowMs: number, loopPages = 0): Entry[] {
    state.lastUsed = nowMs;
    if (loopPages > 0 && state.served >= loopPages) {
      state.second = state.firstSecond;
      state.index = 0;
      state.served = 0;
    }
    state.served += 1;
    const out: Entry[] = [];
    const growing = state.mode === "cursor";
    if (growing) {
      state.upper = Math.floor(nowMs / 1000);
      state.maxSeq = this.logs.currentSeq;
      state.viewMs = nowMs;
    }
    if (state.order === "oldest-first") {
      while (out.length < LOG_PAGE_SIZE && state.second <= state.upper) {
        const entries = this.entriesOf(src, state);
        const take = entries.slice(state.index, state.index + (LOG_PAGE_SIZE - out.length));
        out.push(...take);
        state.index += take.length;
        // A growing cursor stays on the current second: more may be written to it.
        if (state.index >= entries.length && (state.second < state.upper || !growing)) {
          state.second += 1;
          state.index = 0;
        } else if (state.index >= entries.length) break;
      }
    } else {
      while (out.length < LOG_PAGE_SIZE && state.second >= state.lower) {
        const entries = this.entriesOf(src, state).reverse();
        const take = entries.slice(state.index, state.index + (LOG_PAGE_SIZE - out.length));
        out.push(...take);
        state.index += take.length;
        if (state.index >= entries.length) {
          state.second -= 1;
          state.index = 0;
        }
      }
    }
    return out;
  }

  /** The entries of the scroll's current second: stamped then, or (indexed order) visible from then. */
  private entriesOf(src: LogSource, state: ScrollState): Entry[] {
    const all =
      state.order === "newest-indexed-first"
        ? this.logs.entriesIndexedAt(src, state.stream, state.second, state.maxSeq, state.viewMs)
        : this.logs.entriesAt(src, state.stream, state.second, state.maxSeq, state.viewMs);
    return state.filter ? all.filter(state.filter) : all;
  }

  /** Drop idle scrolls, at most once per second of the clock and only once there are many. */
  private sweep(nowMs: number): void {
    if (this.scrolls.size < 1000 || nowMs - this.lastSweep < 1000) return;
    this.lastSweep = nowMs;
    for (const [id, s] of this.scrolls) if (nowMs - s.lastUsed > this.idleTimeoutMs) this.scrolls.delete(id);
  }

  get size(): number {
    return this.scrolls.size;
  }
}
