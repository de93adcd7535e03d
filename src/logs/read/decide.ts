/**
 * Every page-by-page decision of a read, as one pure function: the facts of the read so far and of
 * its last page in, the next step out (go on, start over on a fresh scroll, give up, or end, and then
 * whether to keep the scroll for the next read, and why). The read loop (run.ts) only gathers the
 * facts and does what the step says; the rules live here and in decide.test.ts's table.
 */
import type { EndReason, Hold, Order, ReadLimits, ScrollStart } from "./types.js";

export type { ReadLimits } from "./types.js";

/** Pages in a row without one usable entry after which a read stops: they give no place to stop at. */
export const MAX_UNUSABLE_PAGES = 20;
/** Entries a page of a scroll holds at most (the platform's page size): a full page has more behind it. */
export const SCROLL_PAGE_SIZE = 200;

/** What the last request of the read brought. */
export type LastPage =
  /** Nothing requested yet. */
  | { kind: "none" }
  /** The request failed (after the API client's retries); `tooLarge`: its answer was over api.maxResponseSize. */
  | { kind: "failed"; aborted: boolean; tooLarge?: boolean }
  | {
      kind: "page";
      /** Records the page held, valid or not. */
      rawCount: number;
      /** The source can give a page after it. */
      continuation: boolean;
      /** The page is the same as one this pass read before: the source loops. */
      repeated: boolean;
      /** The read is newest first and has passed its lower bound: nothing further can be new. */
      passedLower: boolean;
      /**
       * Pages in a row, this one included, without one entry with a usable time (entries without a
       * readable time, or records that did not fit the schema).
       */
      unusableRun: number;
    };

export interface ReadFacts {
  /** How the current scroll began. */
  start: ScrollStart;
  /** A scroll held at its end has returned entries since: it grows (see PageCursor.grows). */
  grows: boolean;
  /** The order detected so far. */
  order: Order;
  /** Pages fetched by this read. */
  pages: number;
  /** Bytes of new records held back unshipped (a newest-first read that has not reached its bound). */
  heldBytes: number;
  /** New pages are held back (possibly of no bytes: nothing new on them yet). */
  buffered: boolean;
  collectorDown: boolean;
  /**
   * A page over api.maxResponseSize may be given up (the stream has met one for longer than its
   * bound, see stall.ts) and this pass has read entries above it.
   */
  skipTooLarge?: boolean;
  last: LastPage;
}

export type Step =
  | { kind: "continue" }
  /** Leave the held scroll and read again from the checkpoint on a fresh one. */
  | { kind: "restart"; why: "held-scroll-failed" | "held-snapshot-empty" }
  /** Abandon the read: the request failed, or the source broke off where more must follow. */
  | { kind: "fail"; why: "request-failed" | "no-continuation" }
  | { kind: "end"; why: EndReason; hold: Hold };

const held = (start: ScrollStart) => start !== "fresh";

export function decide(f: ReadFacts, limits: ReadLimits): Step {
  const { last } = f;
  if (last.kind === "failed") {
    // A page of a held scroll that fails (it expired, most likely) is no reason to give up: the
    // checkpoint is where a fresh scroll starts. A fresh scroll that fails is the read's failure.
    if (held(f.start) && !last.aborted) return { kind: "restart", why: "held-scroll-failed" };
    // A page too large to read, past its bound: the read ends above it and ships what it read, the
    // rest down to the checkpoint a counted gap. The page's continuation was in its body, so an
    // oldest-first scroll (its newer entries come after the page) cannot get past it.
    if (last.tooLarge && f.skipTooLarge && f.order !== "oldest-first")
      return { kind: "end", why: "too_large", hold: "none" };
    return { kind: "fail", why: "request-failed" };
  }
  // A scroll can be kept for the next read when all that was read from it is shipped: a held scroll,
  // or an oldest-first one (newest-first reads start from the top each time anyway).
  const keepable = held(f.start) || f.order === "oldest-first";
  if (last.kind === "page") {
    if (last.rawCount === 0) {
      // Nothing new on a held scroll that never grew: it may be a snapshot, so look afresh.
      if (f.start === "held-at-end" && !f.grows) return { kind: "restart", why: "held-snapshot-empty" };
      return { kind: "end", why: "end", hold: keepable ? "at-end" : "none" };
    }
    // A scroll that loops back has shown all it will: ship what it gave, and never continue it.
    if (last.repeated) return { kind: "end", why: "repeated", hold: "none" };
    if (last.passedLower) return { kind: "end", why: "lower", hold: "none" };
    if (!last.continuation) {
      // A full page without a way on: more entries must exist, so this is no end of the stream.
      if (last.rawCount >= SCROLL_PAGE_SIZE) return { kind: "fail", why: "no-continuation" };
      return { kind: "end", why: "end", hold: "none" };
    }
    if (last.unusableRun >= limits.unusablePages) {
      return { kind: "end", why: "unusable", hold: keepable ? "mid" : "none" };
    }
  }
  if (f.collectorDown) {
    // What was read so far is shipped unless pages are held back: then the next read starts over.
    const hold: Hold =
      f.buffered || !keepable ? "none" : f.start === "held-at-end" && f.pages === 0 ? "at-end" : "mid";
    return { kind: "end", why: "interrupted", hold };
  }
  // An oldest-first scroll is cut at the cap: what it read is shipped, so it resumes next time. A
  // newest-first read must reach the checkpoint before anything is shipped: only the hard bounds
  // below stop it (a source that never ends), and then what it holds is shipped (a counted gap).
  if (f.pages >= limits.capPages && f.order === "oldest-first") {
    return { kind: "end", why: "cap", hold: "mid" };
  }
  if (f.pages >= limits.maxPages) return { kind: "end", why: "pages", hold: "none" };
  if (f.heldBytes >= limits.maxHeldBytes) return { kind: "end", why: "bytes", hold: "none" };
  return { kind: "continue" };
}
