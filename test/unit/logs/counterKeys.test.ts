import { describe, expect, it } from "vitest";
import {
  counterKeyCount,
  counterKeyId,
  counterKeyOf,
  MAX_COUNTER_KEYS,
} from "../../../src/logs/counterKeys.js";

describe("log counter keys as ids", () => {
  it("gives each key one id for the process, and the key back from it; 0 is the unused slot", () => {
    expect(counterKeyId("")).toBe(0);
    const a = counterKeyId("5xx|false");
    const b = counterKeyId("d|true|0.25");
    expect(a).not.toBe(b);
    expect(counterKeyId("5xx|false")).toBe(a);
    expect(counterKeyOf(a)).toBe("5xx|false");
    expect(counterKeyOf(b)).toBe("d|true|0.25");
    expect(counterKeyCount()).toBeGreaterThan(Math.max(a, b));
  });

  it("refuses an id it never gave", () => {
    expect(() => counterKeyOf(counterKeyCount())).toThrow(/unknown log counter key id/);
  });

  it("holds at most as many keys as a page's Uint16Array can name", () => {
    for (let i = counterKeyCount(); i < MAX_COUNTER_KEYS; i++) counterKeyId(`k${i}`);
    expect(counterKeyCount()).toBe(MAX_COUNTER_KEYS);
    expect(() => counterKeyId("one too many")).toThrow(/more than 65536 log counter keys/);
    expect(counterKeyId("5xx|false")).toBeLessThan(MAX_COUNTER_KEYS);
  });
});
