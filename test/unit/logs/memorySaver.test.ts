/**
 * V8's memory saver mode follows the log load: on while the pipeline ships little (a fleet's steady
 * state), off as soon as a backlog drains, and on again only after the load has stayed low.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  DRAIN_RECORDS_PER_SECOND,
  MEMORY_SAVER_OFF,
  MEMORY_SAVER_ON,
  MemorySaver,
  memorySaverAfter,
  QUIET_RECORDS_PER_SECOND,
  QUIET_WINDOWS,
  WINDOW_MS,
} from "../../../src/logs/memorySaver.js";

afterEach(() => vi.useRealTimers());

describe("memorySaverAfter", () => {
  it.each([
    // on, records/s, quiet windows before → on, quiet windows after
    [true, 100, 0, true, 1],
    [true, DRAIN_RECORDS_PER_SECOND, 0, true, 0],
    [true, DRAIN_RECORDS_PER_SECOND + 1, 5, false, 0],
    [false, QUIET_RECORDS_PER_SECOND - 1, 0, false, 1],
    [false, QUIET_RECORDS_PER_SECOND - 1, QUIET_WINDOWS - 1, true, QUIET_WINDOWS],
    // Between the two rates: neither switches, and the quiet count starts again.
    [false, 7_000, QUIET_WINDOWS - 1, false, 0],
    [true, 7_000, 2, true, 0],
  ])(
    "on=%s at %d records/s after %d quiet windows: on=%s, %d quiet",
    (on, rate, quiet, wantOn, wantQuiet) => {
      expect(memorySaverAfter(on, rate, quiet)).toEqual({ on: wantOn, quiet: wantQuiet });
    },
  );
});

describe("MemorySaver", () => {
  it("switches V8's flag by the rate new records are taken at, window by window, and back to V8's default at stop", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    let taken = 0;
    const flags: string[] = [];
    const changes: boolean[] = [];
    const saver = new MemorySaver({
      taken: () => taken,
      setFlags: (f) => flags.push(f),
      changed: (on) => changes.push(on),
    });
    saver.start();
    expect(flags).toEqual([MEMORY_SAVER_ON]);
    // A backlog: 20,000 records/s for two windows.
    for (let i = 0; i < 2; i++) {
      taken += (20_000 * WINDOW_MS) / 1000;
      await vi.advanceTimersByTimeAsync(WINDOW_MS);
    }
    expect(flags).toEqual([MEMORY_SAVER_ON, MEMORY_SAVER_OFF]);
    // Quiet again (1,000 records/s): on after QUIET_WINDOWS windows, not before.
    for (let i = 0; i < QUIET_WINDOWS; i++) {
      expect(flags).toHaveLength(2);
      taken += (1_000 * WINDOW_MS) / 1000;
      await vi.advanceTimersByTimeAsync(WINDOW_MS);
    }
    expect(flags).toEqual([MEMORY_SAVER_ON, MEMORY_SAVER_OFF, MEMORY_SAVER_ON]);
    saver.stop();
    expect(flags.at(-1)).toBe(MEMORY_SAVER_OFF);
    // Stopping is not a change of load: the log does not say a backlog drains.
    expect(changes).toEqual([true, false, true]);
    await vi.advanceTimersByTimeAsync(10 * WINDOW_MS);
    expect(flags).toHaveLength(4);
  });
});
