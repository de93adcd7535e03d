/**
 * An entry's time in every form the API may write it, entry by entry: what an entry's place in a read,
 * its high-water mark and its record's timestamp come from. Expected values worked out independently
 * (Python's calendar.timegm): 2026-05-01T10:00:00Z is 1777629600 s.
 */
import { describe, expect, it } from "vitest";
import { entryTimeMs } from "../../../src/logs/entry.js";

const TEN = 1_777_629_600_000; // 2026-05-01T10:00:00Z, ms

describe("entry times", () => {
  it.each([
    // ISO 8601: zones
    ["Z with milliseconds (as toISOString writes)", "2026-05-01T10:00:00.000Z", TEN],
    ["Z without a fraction", "2026-05-01T10:00:00Z", TEN],
    ["a lower-case z and t", "2026-05-01t10:00:00z", TEN],
    ["+00:00", "2026-05-01T10:00:00+00:00", TEN],
    ["-00:00", "2026-05-01T10:00:00-00:00", TEN],
    ["+02:00", "2026-05-01T12:00:00+02:00", TEN],
    ["+0200 (no colon)", "2026-05-01T12:00:00+0200", TEN],
    ["+02 (hours only)", "2026-05-01T12:00:00+02", TEN],
    ["-05:30", "2026-05-01T04:30:00-05:30", TEN],
    ["+14:00, the furthest zone", "2026-05-02T00:00:00+14:00", TEN],
    ["UTC spelt out", "2026-05-01 10:00:00 UTC", TEN],
    ["no zone: UTC", "2026-05-01T10:00:00", TEN],
    ["a blank for the T, no zone", "2026-05-01 10:00:00", TEN],
    ["minutes only", "2026-05-01T10:00Z", TEN],
    ["a date alone: its midnight", "2026-05-01", TEN - 10 * 3_600_000],
    // ISO 8601: fractions
    ["a fraction after a point", "2026-05-01T10:00:00.123Z", TEN + 123],
    ["a fraction after a comma", "2026-05-01T10:00:00,123Z", TEN + 123],
    ["one digit of fraction", "2026-05-01T10:00:00.5Z", TEN + 500],
    ["microseconds: dropped past the millisecond", "2026-05-01T10:00:00.123999Z", TEN + 123],
    ["nanoseconds with an offset", "2026-05-01T12:00:00.000000001+02:00", TEN],
    // Calendar edges
    ["a leap second: the first moment of the next minute", "2026-06-30T23:59:60Z", 1_782_864_000_000],
    ["a leap second with a fraction", "2026-06-30T23:59:60.250Z", 1_782_864_000_250],
    ["24:00:00: the next day's midnight", "2026-04-30T24:00:00Z", TEN - 10 * 3_600_000],
    ["the 29th of February of a leap year", "2024-02-29T00:00:00Z", 1_709_164_800_000],
    // Epoch numbers: the unit from the magnitude
    ["epoch seconds", 1_777_629_600, TEN],
    ["epoch seconds with a fraction", 1_777_629_600.25, TEN + 250],
    ["epoch milliseconds", TEN + 7, TEN + 7],
    ["epoch microseconds", (TEN + 7) * 1000 + 400, TEN + 7],
    ["epoch nanoseconds", TEN * 1_000_000, TEN],
    ["10^11 is still seconds (the year 5138)", 1e11, 1e14],
    ["just above 10^11 is milliseconds (1973)", 1e11 + 1, 1e11 + 1],
    ["10^14 is still milliseconds", 1e14, 1e14],
    ["just above 10^14 is microseconds", 1e14 + 1000, 1e11 + 1],
    ["10^17 is still microseconds", 1e17, 1e14],
    ["just above 10^17 is nanoseconds", 1e17 + 1e6, 1e11 + 1],
    // Numbers in text
    ["epoch seconds as text", "1777629600", TEN],
    ["epoch seconds as text with blanks", " 1777629600 ", TEN],
    ["epoch milliseconds as text", "1777629600000", TEN],
    ["epoch seconds with a fraction, as text", "1777629600.5", TEN + 500],
    ["epoch seconds with an exponent, as text", "1.7776296e9", TEN],
    // Others
    ["an HTTP date naming its zone", "Fri, 01 May 2026 10:00:00 GMT", TEN],
    ["blanks around ISO", "  2026-05-01T10:00:00Z ", TEN],
  ])("%s: %j", (_what, value, ms) => {
    expect(entryTimeMs(value)).toBe(ms);
  });

  it.each([
    ["the 31st of February", "2026-02-31T10:00:00Z"],
    ["the 29th of February of a common year", "2026-02-29T10:00:00Z"],
    ["month 13", "2026-13-01T10:00:00Z"],
    ["hour 25", "2026-05-01T25:00:00Z"],
    ["24:00 and a second", "2026-05-01T24:00:01Z"],
    ["minute 60", "2026-05-01T10:60:00Z"],
    ["second 61", "2026-05-01T10:00:61Z"],
    ["an offset of 24 hours", "2026-05-01T10:00:00+24:00"],
    ["an offset with 60 minutes", "2026-05-01T10:00:00+01:60"],
    ["a point without digits", "2026-05-01T10:00:00.Z"],
    ["a date written the other way round", "01/05/2026 10:00:00"],
    ["a local time without a zone (would be the machine's)", "Fri, 01 May 2026 10:00:00"],
    ["words", "yesterday"],
    ["empty", ""],
    ["zero: never", 0],
    ["zero as text", "0"],
    ["negative", -1_777_629_600],
    ["before 1970", "1969-12-31T23:59:59Z"],
    ["past nanoseconds of the year 5138", 1e21],
    ["not a number", Number.NaN],
    ["infinite", Number.POSITIVE_INFINITY],
    ["a hexadecimal number", "0x69f47720"],
    ["a boolean", true],
    ["null", null],
  ])("%s is no time: %j", (_what, value) => {
    expect(entryTimeMs(value)).toBeUndefined();
  });

  it("reads a zone-less time as UTC whatever the machine's zone", () => {
    const before = process.env.TZ;
    process.env.TZ = "America/St_Johns";
    try {
      expect(entryTimeMs("2026-05-01 10:00:00")).toBe(TEN);
      expect(entryTimeMs("2026-05-01")).toBe(TEN - 10 * 3_600_000);
    } finally {
      if (before === undefined) delete process.env.TZ;
      else process.env.TZ = before;
    }
  });

  it("gives what Date.parse gives for every time toISOString writes", () => {
    for (let ms = 86_400_000; ms < 4e12; ms += 86_400_000 * 97 + 3_723_456) {
      const text = new Date(ms).toISOString();
      expect(entryTimeMs(text), text).toBe(ms);
      expect(entryTimeMs(text), text).toBe(Date.parse(text));
    }
  });
});
