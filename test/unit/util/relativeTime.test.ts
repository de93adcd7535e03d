/** The status page's times: absolute in UTC, and how long ago or how soon from the page's now. */
import { describe, expect, it } from "vitest";
import { relativeTime, utcTime, utcWithRelative } from "../../../src/util/relativeTime.js";

const NOW = Date.UTC(2026, 10, 29, 6, 40, 12);
const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;
const DAY = 24 * H;

describe("relativeTime", () => {
  it.each([
    [0, "now"],
    [-400, "now"],
    [-12 * S, "12 s ago"],
    [-59 * S, "59 s ago"],
    [-60 * S, "1 min ago"],
    [-3 * MIN - 40 * S, "3 min ago"],
    [-59 * MIN, "59 min ago"],
    [-H, "1 h ago"],
    [-5 * H - 59 * MIN, "5 h ago"],
    [-47 * H, "47 h ago"],
    [-2 * DAY, "2 days ago"],
    [-9 * DAY - 3 * H, "9 days ago"],
  ])("%i ms from now is %s (the past)", (delta, words) => {
    expect(relativeTime(NOW + delta, NOW)).toBe(words);
  });

  it.each([
    [30 * S, "in 30 s"],
    [12 * MIN, "in 12 min"],
    [3 * H + 5 * MIN, "in 3 h"],
    [3 * DAY, "in 3 days"],
  ])("%i ms from now is %s (the future)", (delta, words) => {
    expect(relativeTime(NOW + delta, NOW)).toBe(words);
  });
});

describe("utcTime and utcWithRelative", () => {
  it("shows the time to the second in UTC, with how long ago beside it", () => {
    expect(utcTime("2026-11-29T06:37:12.345Z")).toBe("2026-11-29 06:37:12 UTC");
    expect(utcWithRelative("2026-11-29T06:37:12.345Z", NOW)).toBe("2026-11-29 06:37:12 UTC (3 min ago)");
    expect(utcWithRelative("2026-11-29T06:52:12.000Z", NOW)).toBe("2026-11-29 06:52:12 UTC (in 12 min)");
  });

  it("leaves a time it cannot read as it is", () => {
    expect(utcWithRelative("soon", NOW)).toBe("soon");
    expect(utcTime("soon")).toBe("soon");
  });
});
