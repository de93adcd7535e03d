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

const limits: ReadLimits = { capPages: 10, timelessPages: 5 };

/** A read in the middle of a fresh newest-first scroll, nothing special about it. */
const base: ReadFacts = {
  start: "fresh",
  grows: false,
  order: "newest-first",
  pages: 3,
  buffered: true,
  collectorDown: false,
  last: { kind: "page", rawCount: 200, continuation: true, passedLower: false, timelessRun: 0 },
};
const page = (p: Partial<Extract<LastPage, { kind: "page" }>>): LastPage => ({
  kind: "page",
  rawCount: 200,
  continuation: true,
  passedLower: false,
  timelessRun: 0,
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
    name: "four timeless pages in a row are not yet enough to stop",
    facts: { last: page({ timelessRun: 4 }) },
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
    name: "a page without a continuation: the end, nothing to hold",
    facts: { order: "oldest-first", last: page({ continuation: false }) },
    want: end("end", "none"),
  },
  // The lower bound
  {
    name: "a newest-first read past its lower bound: done, nothing held",
    facts: { last: page({ passedLower: true }) },
    want: end("lower", "none"),
  },
  {
    name: "the lower bound wins over a missing continuation",
    facts: { last: page({ passedLower: true, continuation: false }) },
    want: end("lower", "none"),
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
    want: { kind: "fail" },
  },
  {
    name: "a held scroll's page fails because the read was aborted: the read fails",
    facts: { start: "held-mid", last: { kind: "failed", aborted: true } },
    want: { kind: "fail" },
  },
  // Bounds
  {
    name: "an oldest-first read at the page cap: stops, held mid-way to resume",
    facts: { order: "oldest-first", buffered: false, pages: 10 },
    want: end("cap", "mid"),
  },
  {
    name: "five timeless pages on a fresh newest-first scroll: stops, nothing held",
    facts: { last: page({ timelessRun: 5 }) },
    want: end("timeless", "none"),
  },
  {
    name: "five timeless pages on an oldest-first scroll: stops, held mid-way",
    facts: { order: "oldest-first", buffered: false, last: page({ timelessRun: 5 }) },
    want: end("timeless", "mid"),
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
