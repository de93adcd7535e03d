/**
 * When a stream is read next, as tables: by its arrival rate between the poll interval and the
 * freshness bound; a busy one by requests per entry, never later than the poll interval.
 */
import { describe, expect, it } from "vitest";
import { paceMs, type ReadPace, readIntervalMs } from "../../../src/logs/pace.js";

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

const MIN = 60 * S;
const arrivals: Array<{ name: string; ratePerSecond: number; pageSize: number; want: number }> = [
  { name: "7 entries an hour: the freshness bound", ratePerSecond: 7 / 3600, pageSize: page, want: 5 * MIN },
  {
    name: "2 health checks a minute: the freshness bound",
    ratePerSecond: 2 / 60,
    pageSize: page,
    want: 5 * MIN,
  },
  { name: "0.2 entries/s: 50 entries every 250 s", ratePerSecond: 0.2, pageSize: page, want: 250 * S },
  { name: "0.5 entries/s: every 100 s", ratePerSecond: 0.5, pageSize: page, want: 100 * S },
  { name: "1.7 entries/s: the poll interval", ratePerSecond: 1.7, pageSize: page, want: 30 * S },
  {
    name: "activity pages of 50 at 0.1/s: 13 entries every 125 s",
    ratePerSecond: 0.1,
    pageSize: 50,
    want: 125 * S,
  },
  {
    name: "36 lines/s: six whole pages at the poll interval",
    ratePerSecond: 36,
    pageSize: page,
    want: 30 * S,
  },
  {
    name: "7.5 lines/s: paced, one page (181 of 200) every 24 s",
    ratePerSecond: 7.5,
    pageSize: page,
    want: 24 * S,
  },
  {
    name: "no rate (a stream that decayed to nothing): the freshness bound",
    ratePerSecond: 0,
    pageSize: page,
    want: 5 * MIN,
  },
];

describe("readIntervalMs", () => {
  it.each(arrivals)("$name", ({ ratePerSecond, pageSize, want }) => {
    expect(readIntervalMs({ ratePerSecond, rereadMs: 1 * S, pageSize }, 30 * S, 5 * MIN)).toBe(want);
  });

  it("grows with every fall of the rate, up to the freshness bound; below a page per poll interval, not under it", () => {
    let last = 0;
    for (let rate = 10; rate > 0.001; rate /= 1.3) {
      const ms = readIntervalMs({ ratePerSecond: rate, rereadMs: 1 * S, pageSize: page }, 30 * S, 5 * MIN);
      expect(ms).toBeGreaterThanOrEqual(last);
      if (rate * 31 < page * 0.97) expect(ms).toBeGreaterThanOrEqual(30 * S);
      expect(ms).toBeLessThanOrEqual(5 * MIN);
      last = ms;
    }
    expect(last).toBe(5 * MIN);
  });
});
