/** A pass's bounds from the checkpoint, as a table. */
import { describe, expect, it } from "vitest";
import { FUTURE_TOLERANCE_MS, readBounds } from "../../../../src/logs/read/bounds.js";

const cases = [
  {
    name: "the short window below the high-water mark; fingerprints checked down to the overlap",
    checkpoint: { highWaterMs: 1_000_000, floorMs: 0 },
    windowMs: 5_000,
    want: { lowerMs: 995_000, dedupeFloorMs: 880_000 },
  },
  {
    name: "an empty window: the high-water second itself",
    checkpoint: { highWaterMs: 1_000_000, floorMs: 0 },
    windowMs: 0,
    want: { lowerMs: 1_000_000, dedupeFloorMs: 880_000 },
  },
  {
    name: "never below the start point",
    checkpoint: { highWaterMs: 1_000_000, floorMs: 990_000 },
    windowMs: 120_000,
    want: { lowerMs: 990_000, dedupeFloorMs: 990_000 },
  },
];

describe("readBounds", () => {
  it.each(cases)("$name", ({ checkpoint, windowMs, want }) => {
    expect(readBounds(checkpoint, { windowMs, overlapMs: 120_000, nowMs: 2_000_000 })).toEqual({
      ...want,
      highWaterMs: checkpoint.highWaterMs,
      nowMs: 2_000_000,
      futureToleranceMs: FUTURE_TOLERANCE_MS,
      lateMs: 0,
    });
  });

  it("says whether the stream has shown late entries lately", () => {
    const checkpoint = { highWaterMs: 1_000_000, floorMs: 0 };
    const w = { windowMs: 4_000, overlapMs: 120_000, nowMs: 2_000_000 };
    expect(readBounds(checkpoint, { ...w, lateMs: 4_000 }).lateMs).toBe(4_000);
  });

  it("is a value: a checkpoint that moves later does not move bounds already given", () => {
    const checkpoint = { highWaterMs: 1_000_000, floorMs: 0 };
    const bounds = readBounds(checkpoint, { windowMs: 0, overlapMs: 120_000, nowMs: 2_000_000 });
    checkpoint.highWaterMs = 1_500_000;
    expect(bounds.lowerMs).toBe(1_000_000);
  });
});
