/**
 * One shared request budget for every collector and log tailer: a strict cap
 * on requests in flight, a requests-per-second token bucket, and a global gate
 * set by a 429's Retry-After before which nothing is sent.
 */
export type Release = () => void;

interface Waiter {
  grant: (release: Release) => void;
  reject: (err: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

export class RequestBudget {
  private inFlight = 0;
  private tokens: number;
  private lastRefill: number;
  private gateUntil = 0;
  private readonly queue: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly burst: number;

  constructor(
    private readonly maxConcurrency: number,
    private readonly ratePerSecond: number,
    private readonly now: () => number = Date.now,
  ) {
    this.burst = Math.max(1, Math.min(ratePerSecond, maxConcurrency));
    this.tokens = this.burst;
    this.lastRefill = this.now();
  }

  get active(): number {
    return this.inFlight;
  }

  get waiting(): number {
    return this.queue.length;
  }

  /** Nothing is granted before `until` (epoch ms). Extends, never shortens, the gate. */
  pauseUntil(until: number): void {
    if (until > this.gateUntil) this.gateUntil = until;
    this.schedule(0);
  }

  get pausedUntil(): number {
    return this.gateUntil;
  }

  acquire(signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) return Promise.reject(signal.reason ?? new Error("aborted"));
    return new Promise<Release>((grant, reject) => {
      const waiter: Waiter = { grant, reject, signal };
      if (signal) {
        waiter.onAbort = () => {
          const i = this.queue.indexOf(waiter);
          if (i >= 0) this.queue.splice(i, 1);
          reject(signal.reason ?? new Error("aborted"));
        };
        signal.addEventListener("abort", waiter.onAbort, { once: true });
      }
      this.queue.push(waiter);
      this.pump();
    });
  }

  private refill(now: number): void {
    const elapsed = now - this.lastRefill;
    if (elapsed > 0) {
      this.tokens = Math.min(this.burst, this.tokens + (elapsed * this.ratePerSecond) / 1000);
      this.lastRefill = now;
    }
  }

  private pump(): void {
    while (this.queue.length > 0) {
      const now = this.now();
      if (now < this.gateUntil) return this.schedule(this.gateUntil - now);
      if (this.inFlight >= this.maxConcurrency) return; // a release pumps again
      this.refill(now);
      if (this.tokens < 1) return this.schedule(((1 - this.tokens) * 1000) / this.ratePerSecond);
      const waiter = this.queue.shift() as Waiter;
      this.tokens -= 1;
      this.inFlight += 1;
      if (waiter.signal && waiter.onAbort) waiter.signal.removeEventListener("abort", waiter.onAbort);
      let released = false;
      waiter.grant(() => {
        if (released) return;
        released = true;
        this.inFlight -= 1;
        this.pump();
      });
    }
  }

  /** Rejects every waiter and stops the timer (shutdown). */
  close(reason: Error = new Error("request budget closed")): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const waiter of this.queue.splice(0)) waiter.reject(reason);
  }

  private schedule(delayMs: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.pump();
      },
      Math.max(0, Math.ceil(delayMs)),
    );
  }
}
