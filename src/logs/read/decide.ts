/**
 * Every page-by-page decision of a read, as one pure function: the facts of the read so far and of
 * its last page in, the next step out (go on, start over on a fresh scroll, give up, or end, and then
 * whether to keep the scroll for the next read, and why). The read loop (run.ts) only gathers the
 * facts and does what the step says; the rules live here and in decide.test.ts's table.
 */
import type { EndReason, Hold, Order, ScrollStart } from "./types.js";

/** Pages in a row without a usable time after which a read stops (they give no place to stop at). */
export const MAX_TIMELESS_PAGES = 5;

/** What the last request of the read brought. */
export type LastPage =
  /** Nothing requested yet. */
  | { kind: "none" }
  /** The request failed (after the API client's retries). */
  | { kind: "failed"; aborted: boolean }
  | {
      kind: "page";
      /** Records the page held, valid or not. */
      rawCount: number;
      /** The source can give a page after it. */
      continuation: boolean;
      /** The read is newest first and has passed its lower bound: nothing further can be new. */
      passedLower: boolean;
      /** Pages in a row, this one included, without an entry with a usable time. */
      timelessRun: number;
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
  /** New pages held back unshipped (a newest-first read that has not reached its lower bound). */
  buffered: boolean;
  collectorDown: boolean;
  last: LastPage;
}

export interface ReadLimits {
  /** Pages an oldest-first read fetches before it stops and resumes next time (the page cap). */
  capPages: number;
  timelessPages: number;
}

export type Step =
  | { kind: "continue" }
  /** Leave the held scroll and read again from the checkpoint on a fresh one. */
  | { kind: "restart"; why: "held-scroll-failed" | "held-snapshot-empty" }
  /** Abandon the read (the error is the caller's to report). */
  | { kind: "fail" }
  | { kind: "end"; why: EndReason; hold: Hold };

const held = (start: ScrollStart) => start !== "fresh";

export function decide(f: ReadFacts, limits: ReadLimits): Step {
  const { last } = f;
  if (last.kind === "failed") {
    // A page of a held scroll that fails (it expired, most likely) is no reason to give up: the
    // checkpoint is where a fresh scroll starts. A fresh scroll that fails is the read's failure.
    return held(f.start) && !last.aborted ? { kind: "restart", why: "held-scroll-failed" } : { kind: "fail" };
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
    if (last.passedLower) return { kind: "end", why: "lower", hold: "none" };
    if (!last.continuation) return { kind: "end", why: "end", hold: "none" };
    if (last.timelessRun >= limits.timelessPages) {
      return { kind: "end", why: "timeless", hold: keepable ? "mid" : "none" };
    }
  }
  if (f.collectorDown) {
    // What was read so far is shipped unless pages are held back: then the next read starts over.
    const hold: Hold =
      f.buffered || !keepable ? "none" : f.start === "held-at-end" && f.pages === 0 ? "at-end" : "mid";
    return { kind: "end", why: "interrupted", hold };
  }
  // Only an oldest-first scroll is cut at the cap: what it read is shipped, so it resumes next time.
  // A newest-first read must reach the checkpoint before anything is shipped.
  if (f.pages >= limits.capPages && f.order === "oldest-first") {
    return { kind: "end", why: "cap", hold: "mid" };
  }
  return { kind: "continue" };
}
