/** When a busy stream is read next, as a table: requests per entry, never later than the poll interval. */
import { describe, expect, it } from "vitest";
import { paceMs, type ReadPace } from "../../../src/logs/pace.js";

const S = 1000;
const page = 200;

const cases: Array<{ name: string; pace: ReadPace; pollMs: number; want: number }> = [
  {
    name: "a stream that fits one page per poll interval keeps the interval",
    pace: { ratePerSecond: 10, rereadMs: 1 * S, pageSize: page },
    pollMs: 5 * S,
    want: 5 * S,
  },
  {
    name: "36 lines/s at 5 s spills 17 entries onto a second page: read every 4 s, one page each",
    pace: { ratePerSecond: 36, rereadMs: 1 * S, pageSize: page },
    pollMs: 5 * S,
    want: 4 * S,
  },
  {
    name: "100 lines/s at 5 s needs 4 pages (601 entries): three full pages every 4 s",
    pace: { ratePerSecond: 100, rereadMs: 1 * S, pageSize: page },
    pollMs: 5 * S,
    want: 4 * S,
  },
  {
    name: "a wide re-read window: one page would need reads under a second apart, so two pages at 5 s stay",
    pace: { ratePerSecond: 36, rereadMs: 4.5 * S, pageSize: page },
    pollMs: 5 * S,
    want: 5 * S,
  },
  {
    name: "a rate a little above the estimate still fits: 38 lines/s also every 4 s",
    pace: { ratePerSecond: 38, rereadMs: 1 * S, pageSize: page },
    pollMs: 5 * S,
    want: 4 * S,
  },
  {
    name: "no rate known: the poll interval",
    pace: { ratePerSecond: 0, rereadMs: 1 * S, pageSize: page },
    pollMs: 30 * S,
    want: 30 * S,
  },
  {
    name: "activity pages of 50 at 2 entries/s and 30 s: 63 entries, two pages; 22 s fits one",
    pace: { ratePerSecond: 2, rereadMs: 1 * S, pageSize: 50 },
    pollMs: 30 * S,
    want: 22 * S,
  },
];

describe("paceMs", () => {
  it.each(cases)("$name", ({ pace, pollMs, want }) => {
    expect(paceMs(pace, pollMs)).toBe(want);
  });

  it("is never later than the poll interval and never costs more requests per entry than it", () => {
    for (let rate = 1; rate <= 400; rate += 7) {
      for (const rereadMs of [1000, 3000, 10_000]) {
        const pace = { ratePerSecond: rate, rereadMs, pageSize: page };
        const pollMs = 5 * S;
        const chosen = paceMs(pace, pollMs);
        expect(chosen).toBeLessThanOrEqual(pollMs);
        const pages = (ms: number) => Math.ceil(((rate * (ms + rereadMs)) / 1000 + 1) / page);
        expect(pages(chosen) / (rate * chosen)).toBeLessThanOrEqual(pages(pollMs) / (rate * pollMs) + 1e-12);
      }
    }
  });
});
