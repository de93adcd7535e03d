/**
 * Test helper: wait for something to become true instead of sleeping a fixed time and hoping it has.
 * The probe is looked at again every `intervalMs` until it gives a value (anything but undefined or
 * false), which is returned; at the deadline the wait fails saying what it waited for and, when
 * `last` is given, what it saw last.
 */
import { setTimeout as delay } from "node:timers/promises";

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** Describes the state at the deadline, for the failure message. */
  last?: () => string;
}

export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  opts: WaitOptions = {},
): Promise<T> {
  const { timeoutMs = 10_000, intervalMs = 20 } = opts;
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (performance.now() > deadline) {
      const seen = opts.last ? `; last seen: ${opts.last()}` : "";
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${seen}`);
    }
    await delay(intervalMs);
  }
}
