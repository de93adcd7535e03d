import { afterEach, describe, expect, it, vi } from "vitest";
import { WakeTimer } from "../../../src/util/wakeTimer.js";

afterEach(() => {
  vi.useRealTimers();
});

describe("WakeTimer", () => {
  it("wakes once at the earliest time asked for; a later ask keeps it, an earlier one moves it", async () => {
    vi.useFakeTimers({ now: 1_000 });
    const woke: number[] = [];
    const timer = new WakeTimer(() => woke.push(Date.now()), { now: () => Date.now() });
    timer.wakeAt(1_500);
    timer.wakeAt(1_800); // later: the 1,500 wake-up stays
    await vi.advanceTimersByTimeAsync(1_000);
    expect(woke).toEqual([1_500]);
    timer.wakeAt(2_500);
    timer.wakeAt(2_200); // earlier: moves it
    await vi.advanceTimersByTimeAsync(1_000);
    expect(woke).toEqual([1_500, 2_200]);
  });

  it("wakes at once for a time already past, and not at all once cancelled", async () => {
    vi.useFakeTimers({ now: 1_000 });
    const woke: number[] = [];
    const timer = new WakeTimer(() => woke.push(Date.now()), { now: () => Date.now() });
    timer.wakeAt(500);
    await vi.advanceTimersByTimeAsync(0);
    expect(woke).toEqual([1_000]);
    timer.wakeAt(1_200);
    timer.cancel();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(woke).toEqual([1_000]);
  });
});
