/** When a read shows entries lost, as a table. */
import { describe, expect, it } from "vitest";
import { readGap, type GapFacts } from "../../../../src/logs/read/gap.js";

const DAY = 86_400_000;
const NOW = 100 * DAY;
/** A read that shipped entries whose oldest is newer than the checkpoint, without joining up with it. */
const jumped: GapFacts = {
  deliveredBefore: true,
  highWaterBeforeMs: NOW - 7 * DAY,
  fresh: true,
  shipped: 10,
  reachedLower: false,
  oldestSeenMs: NOW - 6 * DAY,
  stoppedShort: false,
};

const cases: Array<{ name: string; facts: Partial<GapFacts>; want: boolean }> = [
  { name: "retention passed the checkpoint", facts: {}, want: true },
  {
    name: "a checkpoint well inside the retention (the paging broke off or looped before reaching it)",
    facts: { highWaterBeforeMs: NOW - 60_000, oldestSeenMs: NOW - 30_000 },
    want: true,
  },
  {
    name: "nothing delivered before, and the scroll ended (a stream's first read: nothing older exists)",
    facts: { deliveredBefore: false },
    want: false,
  },
  {
    name: "nothing delivered before, and the read was stopped short (a looping scroll): from the start point",
    facts: { deliveredBefore: false, stoppedShort: true },
    want: true,
  },
  {
    name: "the read continued a held scroll (it did not see the stream's end)",
    facts: { fresh: false },
    want: false,
  },
  {
    name: "the read shipped nothing (the next read that ships counts it)",
    facts: { shipped: 0 },
    want: false,
  },
  { name: "the read joined up with what was delivered", facts: { reachedLower: true }, want: false },
  { name: "the read met no entry with a time", facts: { oldestSeenMs: Infinity }, want: false },
  {
    name: "the oldest entry is the high-water mark itself",
    facts: { oldestSeenMs: NOW - 7 * DAY },
    want: false,
  },
];

describe("readGap", () => {
  it.each(cases)("$name", ({ facts, want }) => {
    const f = { ...jumped, ...facts };
    expect(readGap(f)).toEqual(want ? { fromMs: f.highWaterBeforeMs, toMs: f.oldestSeenMs } : undefined);
  });
});
