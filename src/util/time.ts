/**
 * Time for everything that waits: one clock interface (tests drive a fake one), one abortable sleep,
 * one backoff formula.
 */
import { setTimeout as delay } from "node:timers/promises";

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Resolves after `ms`; rejects with the signal's reason when it is aborted first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep,
};

/** Resolves after `ms`; rejects with the signal's reason (an AbortError by default) when aborted first. */
export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) throw signal.reason ?? abortError();
  try {
    await delay(Math.max(0, ms), undefined, signal ? { signal } : undefined);
  } catch (err) {
    // timers/promises rejects with its own AbortError; the caller's reason says why it was aborted.
    if (signal?.aborted) throw signal.reason ?? err;
    throw err;
  }
}

/** Like sleep, but an abort ends the wait quietly: for loops that check the signal themselves. */
export async function pause(ms: number, signal?: AbortSignal): Promise<void> {
  await sleep(ms, signal).catch(() => undefined);
}

function abortError(): Error {
  const err = new Error("aborted");
  err.name = "AbortError";
  return err;
}

export interface BackoffOptions {
  /** Ceiling of the first retry's wait. */
  baseMs: number;
  /** Ceiling of any wait. */
  capMs: number;
}

/**
 * Capped exponential backoff with "equal jitter": the ceiling doubles with each attempt (0-based) up
 * to the cap, and the wait is drawn uniformly from its upper half, so retries of many callers spread
 * out without any of them retrying at once.
 */
export function backoffMs(attempt: number, opts: BackoffOptions, random: () => number = Math.random): number {
  const ceiling = Math.min(opts.capMs, opts.baseMs * 2 ** Math.min(attempt, 30));
  return ceiling / 2 + random() * (ceiling / 2);
}
