/** The requestBudget fault: a fixed window shared by every endpoint; over it, 429 with Retry-After. */

export class RequestBudget {
  private windowStart: number;
  private used = 0;
  /** Until when the last 429's Retry-After asked clients to wait. */
  retryAfterUntil = 0;

  constructor(nowMs: number) {
    this.windowStart = nowMs;
  }

  /** A new budget starts a fresh window now. */
  reset(nowMs: number): void {
    this.windowStart = nowMs;
    this.used = 0;
    this.retryAfterUntil = 0;
  }

  /** Count one request; the seconds to put in Retry-After when it is over the budget, else null. */
  take(nowMs: number, budget: { requests: number; windowSeconds: number }): number | null {
    const windowMs = budget.windowSeconds * 1000;
    if (nowMs - this.windowStart >= windowMs) {
      this.windowStart = nowMs;
      this.used = 0;
    }
    this.used += 1;
    if (this.used <= budget.requests) return null;
    const end = this.windowStart + windowMs;
    this.retryAfterUntil = Math.max(this.retryAfterUntil, end);
    return Math.max(1, Math.ceil((end - nowMs) / 1000));
  }
}
