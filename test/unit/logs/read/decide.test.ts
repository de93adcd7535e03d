/**
 * The read's page-by-page decisions, as a table: the facts of a read and its last page in, the step
 * out. Each row says which rule it is about; the expected steps are the paging rules of docs/logs.md.
 */
import { describe, expect, it } from "vitest";
import {
  decide,
  type LastPage,
  type ReadFacts,
  type ReadLimits,
  type Step,
} from "../../../../src/logs/read/decide.js";

const limits: ReadLimits = { capPages: 10, maxPages: 100, maxHeldBytes: 1_000_000, unusablePages: 5 };

/** A read in the middle of a fresh newest-first scroll, nothing special about it. */
const base: ReadFacts = {
  start: "fresh",
  grows: false,
  order: "newest-first",
  pages: 3,
  heldBytes: 1000,
  buffered: true,
  collectorDown: false,
  last: {
    kind: "page",
    rawCount: 200,
    continuation: true,
    repeated: false,
    passedLower: false,
    unusableRun: 0,
  },
};
const page = (p: Partial<Extract<LastPage, { kind: "page" }>>): LastPage => ({
  kind: "page",
  rawCount: 200,
  continuation: true,
  repeated: false,
  passedLower: false,
  unusableRun: 0,
  ...p,
});
const end = (
  why: Extract<Step, { kind: "end" }>["why"],
  hold: Extract<Step, { kind: "end" }>["hold"],
): Step => ({
  kind: "end",
  why,
  hold,
});

const cases: Array<{ name: string; facts: Partial<ReadFacts>; want: Step }> = [
  // Going on
  {
    name: "nothing requested yet",
    facts: { pages: 0, buffered: false, last: { kind: "none" } },
    want: { kind: "continue" },
  },
  { name: "a full page with more behind it", facts: {}, want: { kind: "continue" } },
  {
    name: "newest-first reads have no page cap",
    facts: { pages: 50 },
    want: { kind: "continue" },
  },
  {
    name: "four unusable pages in a row are not yet enough to stop",
    facts: { last: page({ unusableRun: 4 }) },
    want: { kind: "continue" },
  },
  // The end of the stream
  {
    name: "an empty page on a fresh newest-first scroll: the end, nothing held",
    facts: { last: page({ rawCount: 0 }) },
    want: end("end", "none"),
  },
  {
    name: "an empty page on an oldest-first scroll: the end, held at its end (it may grow)",
    facts: { order: "oldest-first", buffered: false, last: page({ rawCount: 0 }) },
    want: end("end", "at-end"),
  },
  {
    name: "an empty page on a held scroll that grew: the end, held at its end again",
    facts: { start: "held-at-end", grows: true, last: page({ rawCount: 0 }) },
    want: end("end", "at-end"),
  },
  {
    name: "a short page without a continuation: the end, nothing to hold",
    facts: { order: "oldest-first", last: page({ rawCount: 37, continuation: false }) },
    want: end("end", "none"),
  },
  {
    name: "a full page without a continuation: more must follow, so the read fails (and is retried)",
    facts: { last: page({ continuation: false }) },
    want: { kind: "fail", why: "no-continuation" },
  },
  // The lower bound
  {
    name: "a newest-first read past its lower bound: done, nothing held",
    facts: { last: page({ passedLower: true }) },
    want: end("lower", "none"),
  },
  {
    name: "the lower bound wins over a missing continuation (nothing more is needed)",
    facts: { last: page({ passedLower: true, continuation: false }) },
    want: end("lower", "none"),
  },
  // A source that loops
  {
    name: "a page read before: the scroll loops; stop, and never continue it",
    facts: { order: "oldest-first", buffered: false, last: page({ repeated: true }) },
    want: end("repeated", "none"),
  },
  {
    name: "a repeated page ends the read even past the lower bound's test",
    facts: { last: page({ repeated: true, passedLower: true }) },
    want: end("repeated", "none"),
  },
  // Starting over
  {
    name: "an empty page on a scroll held at its end that never grew: maybe a snapshot, look afresh",
    facts: { start: "held-at-end", grows: false, last: page({ rawCount: 0 }) },
    want: { kind: "restart", why: "held-snapshot-empty" },
  },
  {
    name: "a page of a held scroll fails (expired): start over from the checkpoint",
    facts: { start: "held-mid", last: { kind: "failed", aborted: false } },
    want: { kind: "restart", why: "held-scroll-failed" },
  },
  {
    name: "a page of a fresh scroll fails: the read fails",
    facts: { last: { kind: "failed", aborted: false } },
    want: { kind: "fail", why: "request-failed" },
  },
  {
    name: "a held scroll's page fails because the read was aborted: the read fails",
    facts: { start: "held-mid", last: { kind: "failed", aborted: true } },
    want: { kind: "fail", why: "request-failed" },
  },
  // A page over api.maxResponseSize
  {
    name: "a page too large before the stream's bound: the read fails (retried with back-off)",
    facts: { last: { kind: "failed", aborted: false, tooLarge: true } },
    want: { kind: "fail", why: "request-failed" },
  },
  {
    name: "a page too large past the bound, below pages read: the read ends above it, what it holds shipped",
    facts: { skipTooLarge: true, last: { kind: "failed", aborted: false, tooLarge: true } },
    want: end("too_large", "none"),
  },
  {
    name: "another failure past the bound is no reason to skip anything",
    facts: { skipTooLarge: true, last: { kind: "failed", aborted: false } },
    want: { kind: "fail", why: "request-failed" },
  },
  {
    name: "a page too large on an oldest-first scroll: its newer entries are behind it, the read fails",
    facts: {
      order: "oldest-first",
      buffered: false,
      skipTooLarge: true,
      last: { kind: "failed", aborted: false, tooLarge: true },
    },
    want: { kind: "fail", why: "request-failed" },
  },
  {
    name: "a page too large on a held scroll: start over on a fresh one first",
    facts: {
      start: "held-mid",
      skipTooLarge: true,
      last: { kind: "failed", aborted: false, tooLarge: true },
    },
    want: { kind: "restart", why: "held-scroll-failed" },
  },
  // Bounds
  {
    name: "an oldest-first read at the page cap: stops, held mid-way to resume",
    facts: { order: "oldest-first", buffered: false, pages: 10 },
    want: end("cap", "mid"),
  },
  {
    name: "the unusable-page bound on a fresh newest-first scroll: stops, nothing held",
    facts: { last: page({ unusableRun: 5 }) },
    want: end("unusable", "none"),
  },
  {
    name: "the unusable-page bound on an oldest-first scroll: stops, held mid-way",
    facts: { order: "oldest-first", buffered: false, last: page({ unusableRun: 5 }) },
    want: end("unusable", "mid"),
  },
  {
    name: "the page bound stops a newest-first read (a scroll that never ends)",
    facts: { pages: 100 },
    want: end("pages", "none"),
  },
  {
    name: "an oldest-first read stops at the cap (it resumes) before the page bound",
    facts: { pages: 100, order: "oldest-first" },
    want: end("cap", "mid"),
  },
  {
    name: "the byte bound stops a newest-first read holding too much",
    facts: { heldBytes: 1_000_000 },
    want: end("bytes", "none"),
  },
  // The collector goes down
  {
    name: "collector down with new pages held back: stop, hold nothing (the next read starts over)",
    facts: { collectorDown: true },
    want: end("interrupted", "none"),
  },
  {
    name: "collector down on an oldest-first scroll (all shipped): held mid-way",
    facts: { collectorDown: true, order: "oldest-first", buffered: false },
    want: end("interrupted", "mid"),
  },
  {
    name: "collector down before the first page of a scroll held at its end: held at its end as it was",
    facts: { collectorDown: true, start: "held-at-end", pages: 0, buffered: false, last: { kind: "none" } },
    want: end("interrupted", "at-end"),
  },
  {
    name: "collector down after pages of a scroll held at its end: held mid-way",
    facts: { collectorDown: true, start: "held-at-end", pages: 2, buffered: false },
    want: end("interrupted", "mid"),
  },
  {
    name: "collector down on a fresh newest-first scroll with nothing held back: nothing to keep",
    facts: { collectorDown: true, buffered: false, pages: 0, last: { kind: "none" } },
    want: end("interrupted", "none"),
  },
  {
    name: "the end of the stream wins over the collector going down (what was read is shipped)",
    facts: { collectorDown: true, last: page({ passedLower: true }) },
    want: end("lower", "none"),
  },
];

describe("decide", () => {
  it.each(cases)("$name", ({ facts, want }) => {
    expect(decide({ ...base, ...facts }, limits)).toEqual(want);
  });
});
