/**
 * Time for everything that waits: one clock interface (tests drive a fake one), one abortable sleep,
 * one bounded wait, one backoff formula.
 */

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

/**
 * Another party's clock as measured against `base`: its `now` is base's moved by `offsetMs()` (read at
 * each call, so a new measurement takes effect at once); its sleeps are base's, since a wait is a
 * duration and the same on both clocks.
 */
export function offsetClock(base: Clock, offsetMs: () => number): Clock {
  return { now: () => base.now() + offsetMs(), sleep: (ms, signal) => base.sleep(ms, signal) };
}

/**
 * Resolves after `ms`; rejects with the signal's reason (an AbortError when it has none) as soon as
 * the signal is aborted. Built on the global setTimeout, so tests that fake timers drive it too.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason ?? abortError());
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason ?? abortError());
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Like sleep, but an abort ends the wait quietly: for loops that check the signal themselves. */
export async function pause(ms: number, signal?: AbortSignal): Promise<void> {
  await sleep(ms, signal).catch(() => undefined);
}

/**
 * Waits for `work` at most `ms` (a bounded wait at shutdown): true when it settled in time, false
 * when the time ran out first. Its outcome is not reported; the timer does not hold the process.
 */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, ms));
    timer.unref();
  });
  const settled = work.then(
    () => true as const,
    () => true as const,
  );
  try {
    return await Promise.race([settled, expired]);
  } finally {
    clearTimeout(timer);
  }
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
 * out without any of them retrying at once. `random` returning 1 gives the ceiling itself: a plain
 * doubling schedule, for callers that want one they can predict.
 */
export function backoffMs(attempt: number, opts: BackoffOptions, random: () => number = Math.random): number {
  const ceiling = Math.min(opts.capMs, opts.baseMs * 2 ** Math.min(attempt, 30));
  return ceiling / 2 + random() * (ceiling / 2);
}
