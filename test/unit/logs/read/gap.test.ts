/** When a read shows entries lost upstream, as a table. */
import { describe, expect, it } from "vitest";
import { retentionGap, type GapFacts } from "../../../../src/logs/read/gap.js";

const DAY = 86_400_000;
const NOW = 100 * DAY;
/** A read that went to the end of a 7-day stream whose oldest entry is newer than a 7-day-old checkpoint. */
const lost: GapFacts = {
  deliveredBefore: true,
  highWaterBeforeMs: NOW - 7 * DAY,
  fresh: true,
  end: "end",
  reachedLower: false,
  oldestSeenMs: NOW - 6 * DAY,
  nowMs: NOW,
  retentionMs: 7 * DAY,
};

const cases: Array<{ name: string; facts: Partial<GapFacts>; want: boolean }> = [
  { name: "retention passed the checkpoint", facts: {}, want: true },
  {
    name: "the checkpoint is within an hour of the retention horizon",
    facts: { highWaterBeforeMs: NOW - 7 * DAY + 3_500_000 },
    want: true,
  },
  {
    name: "nothing delivered before (a stream's first read)",
    facts: { deliveredBefore: false },
    want: false,
  },
  {
    name: "the read continued a held scroll (it did not see the stream's end)",
    facts: { fresh: false },
    want: false,
  },
  { name: "the read joined up with what was delivered", facts: { reachedLower: true }, want: false },
  { name: "the read stopped at the page cap", facts: { end: "cap" }, want: false },
  { name: "the read was interrupted", facts: { end: "interrupted" }, want: false },
  { name: "the read met no entry with a time", facts: { oldestSeenMs: Infinity }, want: false },
  {
    name: "the oldest entry is the high-water mark itself",
    facts: { oldestSeenMs: NOW - 7 * DAY },
    want: false,
  },
  { name: "a checkpoint well inside the retention", facts: { highWaterBeforeMs: NOW - DAY }, want: false },
];

describe("retentionGap", () => {
  it.each(cases)("$name", ({ facts, want }) => {
    const f = { ...lost, ...facts };
    expect(retentionGap(f)).toEqual(want ? { fromMs: f.highWaterBeforeMs, toMs: f.oldestSeenMs } : undefined);
  });
});
