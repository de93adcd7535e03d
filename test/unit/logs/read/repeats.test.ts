/**
 * A page is known by its first and last entries and every entry's time: the same page read again is
 * a repeat; a page that differs in any time, or in its first or last entry, is not; a page whose
 * entries share one time is never taken for a repeat (identical lines in one second are real).
 */
import { describe, expect, it } from "vitest";
import { fingerprint } from "../../../../src/logs/entry.js";
import { PagesSeen, pageSignature } from "../../../../src/logs/read/repeats.js";

const T0 = 1_795_000_000;
const page = (times: Array<number | string>, tag = "a") =>
  times.map((timestamp, i) => ({ timestamp, message: `${tag} ${i}` }));

describe("page signatures", () => {
  it("are equal for the same entries and times, and differ in any time or in the first or last entry", () => {
    const times = Array.from({ length: 200 }, (_, i) => T0 + i);
    const base = pageSignature(page(times), fingerprint);
    expect(base).toBeDefined();
    expect(pageSignature(page([...times]), fingerprint)).toBe(base);
    const moved = [...times];
    moved[100] = T0 + 1000;
    expect(pageSignature(page(moved), fingerprint)).not.toBe(base);
    const unreadable: Array<number | string> = [...times];
    unreadable[50] = "not a time";
    expect(pageSignature(page(unreadable), fingerprint)).not.toBe(base);
    expect(pageSignature(page(times, "b"), fingerprint)).not.toBe(base);
    // A middle entry's own content is not part of it (its time is).
    const middle = page(times);
    (middle[100] as { message: string }).message = "other";
    expect(pageSignature(middle, fingerprint)).toBe(base);
  });

  it("are undefined for a page whose entries share one time, and work for pages of any size", () => {
    expect(pageSignature(page([T0, T0, T0]), fingerprint)).toBeUndefined();
    expect(pageSignature([], fingerprint)).toBeUndefined();
    const big = Array.from({ length: 10_000 }, (_, i) => T0 + i);
    const a = pageSignature(page(big), fingerprint);
    big[9_999] = T0 - 1;
    expect(pageSignature(page(big), fingerprint)).not.toBe(a);
    // After a large page, a small one is signed by its own times only.
    expect(pageSignature(page([T0, T0 + 1]), fingerprint)).toBe(
      pageSignature(page([T0, T0 + 1]), fingerprint),
    );
    expect(pageSignature(page([T0, T0 + 1]), fingerprint)).not.toBe(
      pageSignature(page([T0, T0 + 2]), fingerprint),
    );
  });

  it("tell a page read again in a pass", () => {
    const seen = new PagesSeen();
    const times = [T0, T0 + 1, T0 + 2];
    expect(seen.repeats(page(times), fingerprint)).toBe(false);
    expect(seen.repeats(page([T0 + 3, T0 + 4]), fingerprint)).toBe(false);
    expect(seen.repeats(page(times), fingerprint)).toBe(true);
  });
});
