/**
 * One timer that wakes its owner at the earliest time it was asked for: asking for a later time keeps
 * the earlier wake-up (which rechecks and asks again), asking for an earlier one moves it. The request
 * budget and the log scheduler wait on it.
 */
import type { Clock } from "./time.js";

export class WakeTimer {
  private timer: NodeJS.Timeout | undefined;
  private at = Infinity;

  constructor(
    private readonly wake: () => void,
    private readonly clock: Pick<Clock, "now">,
  ) {}

  /** Wake at `at` (epoch ms, the clock's) unless a wake-up at or before it is already set. */
  wakeAt(at: number): void {
    if (this.timer && this.at <= at) return;
    clearTimeout(this.timer);
    this.at = at;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.at = Infinity;
        this.wake();
      },
      Math.max(0, at - this.clock.now()),
    );
  }

  cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.at = Infinity;
  }
}
