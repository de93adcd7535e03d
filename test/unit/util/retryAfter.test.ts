import { describe, expect, it } from "vitest";
import { parseRetryAfter } from "../../../src/util/retryAfter.js";

describe("parseRetryAfter", () => {
  const now = Date.parse("2026-11-22T14:00:00.000Z");
  it("reads delta seconds and HTTP dates; rejects what it cannot read", () => {
    expect(parseRetryAfter("30", now)).toBe(30_000);
    expect(parseRetryAfter(" 1.5 ", now)).toBe(1_500);
    expect(parseRetryAfter("0", now)).toBe(0);
    // 14:00:45 GMT is 45 s after now.
    expect(parseRetryAfter("Sun, 22 Nov 2026 14:00:45 GMT", now)).toBe(45_000);
    // A date in the past means "now", never a negative wait.
    expect(parseRetryAfter("Sun, 22 Nov 2026 13:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter(["7", "9"], now)).toBe(7_000);
    expect(parseRetryAfter("-5", now)).toBeUndefined();
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
