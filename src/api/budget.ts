/**
 * One request budget shared by every collector and log tailer: a strict cap on requests in flight, a
 * requests-per-second token bucket, a gate set by a 429's Retry-After before which nothing is sent,
 * and fair sharing between sources of work.
 *
 * Fair sharing is stride scheduling: each source (a collector, the log tailers, ...) has a weight,
 * and when a request may go, the waiting source with the lowest "pass" is served and its pass grows
 * by 1/weight. Sources therefore get the budget in proportion to their weights while they all wait,
 * and a source with nothing waiting leaves its share to the others (no capacity is held back). A
 * source that starts waiting again resumes at the current pass, so idling never saves up a burst, and
 * every weight is at least a floor share of the total, so no source waits forever. Token requests
 * (source `auth`) go first: every other request waits on them anyway.
 */
import type { CollectorName } from "../config/schema.js";
import type { Clock } from "../util/time.js";
import { systemClock } from "../util/time.js";
import { WakeTimer } from "../util/wakeTimer.js";

export type Release = () => void;

/** The source of token requests: served before any other. */
export const AUTH_SOURCE = "auth";

/**
 * Who asks: a collector (by name), the log tailers, the site refreshes after webhook events, the
 * token manager, or anything else. A type, not a string: a misspelt source would silently get the
 * floor share and be missing from the plan.
 */
export type BudgetSource = CollectorName | "logs" | "webhooks" | typeof AUTH_SOURCE | "other";

/** Relative shares of the budget by source. */
export type SourceWeights = Readonly<Partial<Record<BudgetSource, number>>>;

/** Sources without a schedule: the log tailers and the webhook refreshes. */
export type UnscheduledSource = Extract<BudgetSource, "logs" | "webhooks">;
/** Every weight is at least this share of the sum of weights. */
export const MIN_SHARE = 0.01;

interface Waiter {
  grant: (release: Release) => void;
  reject: (err: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

interface SourceState {
  name: BudgetSource;
  queue: Waiter[];
  weight: number;
  pass: number;
}

export class RequestBudget {
  private inFlight = 0;
  private tokens: number;
  private lastRefill: number;
  private gateUntil = 0;
  private readonly sources = new Map<BudgetSource, SourceState>();
  private queued = 0;
  private virtualTime = 0;
  private readonly wakeTimer: WakeTimer;
  private closedWith: Error | undefined;
  private readonly burst: number;
  private configuredWeights = new Map<BudgetSource, number>();
  private readonly granted = new Map<BudgetSource, number>();

  constructor(
    private readonly maxConcurrency: number,
    readonly ratePerSecond: number,
    private readonly clock: Pick<Clock, "now"> = systemClock,
  ) {
    this.wakeTimer = new WakeTimer(() => this.pump(), clock);
    this.burst = Math.max(1, Math.min(ratePerSecond, maxConcurrency));
    this.tokens = this.burst;
    this.lastRefill = clock.now();
  }

  get active(): number {
    return this.inFlight;
  }

  get waiting(): number {
    return this.queued;
  }

  /**
   * Relative shares of the budget by source (for example each source's planned requests per second).
   * Sources not named, and weights below the floor share, get the floor share.
   */
  setWeights(weights: SourceWeights): void {
    this.configuredWeights = new Map();
    for (const [source, w] of Object.entries(weights) as Array<[BudgetSource, number]>) {
      if (Number.isFinite(w) && w > 0) this.configuredWeights.set(source, w);
    }
    for (const [name, s] of this.sources) s.weight = this.weightOf(name);
  }

  private weightOf(source: BudgetSource): number {
    let total = 0;
    for (const w of this.configuredWeights.values()) total += w;
    if (total === 0) return 1;
    const floor = total * MIN_SHARE;
    return Math.max(this.configuredWeights.get(source) ?? 0, floor);
  }

  /** Places granted since the start, by source: every request made (and every retry) took one. */
  grantedBySource(): ReadonlyMap<BudgetSource, number> {
    return this.granted;
  }

  /** Nothing is granted before `until` (epoch ms). Extends, never shortens, the gate. */
  pauseUntil(until: number): void {
    if (until > this.gateUntil) this.gateUntil = until;
    this.schedule(0);
  }

  get pausedUntil(): number {
    return this.gateUntil;
  }

  /** Wait for a place for one request of `source`; the release function gives it back. */
  acquire(source: BudgetSource, signal?: AbortSignal): Promise<Release> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    if (signal?.aborted) return Promise.reject(signal.reason ?? new Error("aborted"));
    return new Promise<Release>((grant, reject) => {
      const waiter: Waiter = { grant, reject, signal };
      const state = this.sourceState(source);
      if (signal) {
        waiter.onAbort = () => {
          const i = state.queue.indexOf(waiter);
          if (i >= 0) {
            state.queue.splice(i, 1);
            this.queued -= 1;
          }
          reject(signal.reason ?? new Error("aborted"));
        };
        signal.addEventListener("abort", waiter.onAbort, { once: true });
      }
      // A source that was idle resumes at the current virtual time: idling saves up no credit.
      if (state.queue.length === 0) state.pass = Math.max(state.pass, this.virtualTime);
      state.queue.push(waiter);
      this.queued += 1;
      this.pump();
    });
  }

  private sourceState(source: BudgetSource): SourceState {
    let state = this.sources.get(source);
    if (!state) {
      state = { name: source, queue: [], weight: this.weightOf(source), pass: this.virtualTime };
      this.sources.set(source, state);
    }
    return state;
  }

  private refill(now: number): void {
    const elapsed = now - this.lastRefill;
    if (elapsed > 0) {
      this.tokens = Math.min(this.burst, this.tokens + (elapsed * this.ratePerSecond) / 1000);
      this.lastRefill = now;
    }
  }

  /** The waiting source to serve next: auth first, then the lowest pass (ties: first created). */
  private next(): SourceState | undefined {
    const auth = this.sources.get(AUTH_SOURCE);
    if (auth && auth.queue.length > 0) return auth;
    let best: SourceState | undefined;
    for (const s of this.sources.values()) {
      if (s.queue.length > 0 && (best === undefined || s.pass < best.pass)) best = s;
    }
    return best;
  }

  private pump(): void {
    while (this.queued > 0) {
      const now = this.clock.now();
      if (now < this.gateUntil) return this.schedule(this.gateUntil - now);
      if (this.inFlight >= this.maxConcurrency) return; // a release pumps again
      this.refill(now);
      if (this.tokens < 1) return this.schedule(((1 - this.tokens) * 1000) / this.ratePerSecond);
      const source = this.next() as SourceState;
      const waiter = source.queue.shift() as Waiter;
      this.queued -= 1;
      this.virtualTime = source.pass;
      source.pass += 1 / source.weight;
      this.tokens -= 1;
      this.inFlight += 1;
      this.granted.set(source.name, (this.granted.get(source.name) ?? 0) + 1);
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

  /** Rejects every waiter and every later acquire, and stops the timer (shutdown). */
  close(reason: Error = new Error("request budget closed")): void {
    this.closedWith = reason;
    this.wakeTimer.cancel();
    for (const s of this.sources.values()) {
      for (const waiter of s.queue.splice(0)) {
        if (waiter.signal && waiter.onAbort) waiter.signal.removeEventListener("abort", waiter.onAbort);
        waiter.reject(reason);
      }
    }
    this.queued = 0;
  }

  private schedule(delayMs: number): void {
    if (this.closedWith) return;
    this.wakeTimer.wakeAt(this.clock.now() + Math.max(0, Math.ceil(delayMs)));
  }
}
