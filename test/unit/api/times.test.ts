import { describe, expect, it } from "vitest";
import { parseApiTime } from "../../../src/api/times.js";

// 2026-03-15T12:00:00Z, worked out independently (calendar.timegm).
const NOON = 1773576000;

describe("parseApiTime", () => {
  it.each([
    ["ISO with ms and Z", "2026-03-15T12:00:00.000Z", NOON],
    ["ISO without ms", "2026-03-15T12:00:00Z", NOON],
    ["ISO without zone is UTC", "2026-03-15T12:00:00", NOON],
    ["ISO with ms, no zone", "2026-03-15T12:00:00.250", NOON + 0.25],
    ["ISO with +01:30 offset", "2026-03-15T13:30:00+01:30", NOON],
    ["ISO with -0500 offset", "2026-03-15T07:00:00-0500", NOON],
    ["ISO with +02 offset", "2026-03-15T14:00:00+02", NOON],
    ["'YYYY-MM-DD HH:MM:SS' is UTC", "2026-03-15 12:00:00", NOON],
    ["'YYYY-MM-DD HH:MM:SS UTC'", "2026-03-15 12:00:00 UTC", NOON],
    ["minutes only", "2026-03-15 12:00", NOON],
    ["a date alone is midnight UTC", "2026-03-15", 1773532800],
    ["backup listing form", "2026-03-15-12-00", NOON],
    ["epoch seconds", NOON, NOON],
    ["epoch milliseconds", NOON * 1000, NOON],
    ["epoch seconds as text", "1773576000", NOON],
    ["epoch milliseconds as text", "1773576000000", NOON],
    ["HTTP date with GMT", "Sun, 15 Mar 2026 12:00:00 GMT", NOON],
    ["surrounding blanks", "  2026-03-15T12:00:00Z ", NOON],
  ])("%s", (_what, input, expected) => {
    expect(parseApiTime(input)).toBe(expected);
  });

  it.each([
    ["null", null],
    ["undefined", undefined],
    ["empty", ""],
    ["zero (never)", 0],
    ["negative", -5],
    ["NaN", Number.NaN],
    ["words", "soon"],
    ["month 13", "2026-13-01T00:00:00Z"],
    ["31st of February", "2026-02-31 00:00:00"],
    ["hour 25", "2026-03-15 25:00:00"],
    ["a local-time phrase without zone", "Sun, 15 Mar 2026 12:00:00"],
    ["a boolean", true],
  ])("%s is not a time", (_what, input) => {
    expect(parseApiTime(input)).toBeUndefined();
  });

  it("never depends on the machine's time zone", () => {
    const before = process.env.TZ;
    process.env.TZ = "Pacific/Auckland";
    try {
      expect(parseApiTime("2026-03-15 12:00:00")).toBe(NOON);
      expect(parseApiTime("2026-03-15T12:00:00")).toBe(NOON);
    } finally {
      if (before === undefined) delete process.env.TZ;
      else process.env.TZ = before;
    }
  });
});
