/**
 * The web config's `rate_limit`, as exporter-toolkit applies it: a token bucket over every request,
 * one token more every `intervalMs`, at most `burst` held; a request that finds none is answered 429.
 */
export class RequestRateLimit {
  private tokens: number;
  private last: number;

  constructor(
    private readonly intervalMs: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = burst;
    this.last = now();
  }

  private refill(): void {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + (t - this.last) / this.intervalMs);
    this.last = t;
  }

  /** Whether a request may go now (it takes a token). */
  take(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Whole seconds until the next token, at least 1 (the 429's Retry-After). */
  retryAfterSeconds(): number {
    this.refill();
    return Math.max(1, Math.ceil(((1 - this.tokens) * this.intervalMs) / 1000));
  }
}
