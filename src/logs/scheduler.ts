/**
 * When each stream is read: a fixed number of workers take the most overdue stream first, so when
 * reads cannot keep up (the request budget is full) every stream falls behind by about the same,
 * and none waits forever.
 *
 * Adaptive polling: a read that found nothing waits twice as long before the next (from
 * `logs.pollInterval` up to `logs.maxPollInterval`); one that found entries comes back after
 * `logs.pollInterval`, or sooner when the stream is busier than a page per interval and reading it
 * sooner fills its pages (pace.ts); one that stopped at the page cap goes again at once. Waits are
 * shortened at random by up to a tenth, so streams spread out and never wait longer than their
 * interval.
 *
 * A hint that a stream has news (`nudge`: its site served traffic) brings a backed-off stream forward
 * once; it does so again only after a read of the stream found entries. A stream whose reads find
 * nothing backs off as an idle one does, whatever the hints say (a site whose traffic the edge cache
 * serves writes nothing to its origin's log).
 */
import { backoffMs, type Clock } from "../util/time.js";
import { WakeTimer } from "../util/wakeTimer.js";
import { paceMs } from "./pace.js";
import type { ReadOutcome } from "./read/types.js";

export interface ScheduledStream {
  readonly key: string;
  read(signal: AbortSignal): Promise<ReadOutcome>;
}

export interface SchedulerOptions {
  workers: number;
  pollMs: number;
  maxPollMs: number;
  clock: Pick<Clock, "now">;
  random?: () => number;
  /** While true, no read starts (the collector is down). */
  paused: () => boolean;
  onOutcome?: (key: string, outcome: ReadOutcome) => void;
  onError?: (key: string, err: unknown) => void;
}

/** How the streams are polled now: what the request plan needs to know of the log streams. */
export interface LogPolling {
  /** Streams scheduled. */
  streams: number;
  /** Of those, streams read at logs.pollInterval or sooner (their reads find entries). */
  atPollInterval: number;
  /** Reads per second the current intervals make, each stream once per its interval. */
  readsPerSecond: number;
}

/** Each wait is shortened to a random share of its interval from this much, so reads spread out. */
const SPREAD_FROM = 0.9;
const MEAN_SPREAD = (1 + SPREAD_FROM) / 2;
/** How much the latest read moves a stream's overhead (an exponentially weighted average). */
const OVERHEAD_WEIGHT = 0.3;

interface Slot {
  stream: ScheduledStream;
  dueAt: number;
  intervalMs: number;
  /** A hint may bring the stream forward (none did since a read of it last found entries). */
  hintable: boolean;
  /** How long after their due time the stream's reads end lately (waiting for a worker, reading), ms. */
  overheadMs: number;
  failures: number;
  reading: Promise<void> | undefined;
  removed: boolean;
  version: number;
  /** Aborts the read in progress: one exists only while the stream is read, not per stream. */
  stop: AbortController | undefined;
}

/**
 * A binary min-heap of (dueAt, slot, version); stale versions are skipped when popped. Kept as three
 * parallel arrays, not an object per entry: every stream has an entry (15,000 at 5,000 sites).
 */
class DueHeap {
  private readonly dueAts: number[] = [];
  private readonly slots: Slot[] = [];
  private readonly versions: number[] = [];

  get size(): number {
    return this.slots.length;
  }

  push(slot: Slot): void {
    const { dueAts } = this;
    let i = this.slots.length;
    dueAts.push(slot.dueAt);
    this.slots.push(slot);
    this.versions.push(slot.version);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((dueAts[parent] as number) <= (dueAts[i] as number)) break;
      this.swap(parent, i);
      i = parent;
    }
  }

  /** The earliest live entry, without removing it. */
  peek(): Slot | undefined {
    for (;;) {
      const top = this.slots[0];
      if (!top) return undefined;
      if (!top.removed && this.versions[0] === top.version && !top.reading) return top;
      this.pop();
    }
  }

  pop(): void {
    const { dueAts, slots, versions } = this;
    const n = slots.length - 1;
    if (n < 0) return;
    // The last entry moves to the top and sinks to its place.
    this.swap(0, n);
    dueAts.pop();
    slots.pop();
    versions.pop();
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < n && (dueAts[l] as number) < (dueAts[m] as number)) m = l;
      if (r < n && (dueAts[r] as number) < (dueAts[m] as number)) m = r;
      if (m === i) return;
      this.swap(m, i);
      i = m;
    }
  }

  private swap(a: number, b: number): void {
    const { dueAts, slots, versions } = this;
    const dueAt = dueAts[a] as number;
    dueAts[a] = dueAts[b] as number;
    dueAts[b] = dueAt;
    const slot = slots[a] as Slot;
    slots[a] = slots[b] as Slot;
    slots[b] = slot;
    const version = versions[a] as number;
    versions[a] = versions[b] as number;
    versions[b] = version;
  }
}

export class LogScheduler {
  private readonly slots = new Map<string, Slot>();
  private readonly heap = new DueHeap();
  private active = 0;
  private readonly timer: WakeTimer;
  private stopped = false;
  private readonly random: () => number;

  constructor(private readonly opts: SchedulerOptions) {
    this.random = opts.random ?? Math.random;
    this.timer = new WakeTimer(() => this.pump(), opts.clock);
  }

  get size(): number {
    return this.slots.size;
  }

  get reading(): number {
    return this.active;
  }

  has(key: string): boolean {
    return this.slots.has(key);
  }

  /** Add a stream, first read due at `dueAt` (default: now). */
  add(stream: ScheduledStream, dueAt = this.opts.clock.now()): void {
    if (this.stopped || this.slots.has(stream.key)) return;
    const slot: Slot = {
      stream,
      dueAt,
      intervalMs: this.opts.pollMs,
      hintable: true,
      overheadMs: 0,
      failures: 0,
      reading: undefined,
      removed: false,
      version: 0,
      stop: undefined,
    };
    this.slots.set(stream.key, slot);
    this.heap.push(slot);
    this.pump();
  }

  /** Remove a stream; its read in progress is aborted and awaited. */
  async remove(key: string): Promise<void> {
    const slot = this.slots.get(key);
    if (!slot) return;
    this.slots.delete(key);
    slot.removed = true;
    slot.stop?.abort(new Error("stream removed"));
    await slot.reading;
  }

  /**
   * The stream is likely to have new entries: read it within `logs.pollInterval` of its last read,
   * once. Its interval stays: if that read finds nothing, it backs off from where it was.
   */
  nudge(key: string): void {
    const slot = this.slots.get(key);
    if (!slot || slot.reading || !slot.hintable || slot.intervalMs <= this.opts.pollMs) return;
    slot.hintable = false;
    this.reschedule(slot, Math.min(slot.dueAt, slot.dueAt - slot.intervalMs + this.opts.pollMs));
  }

  /**
   * How the streams are polled now (for the request plan): each stream once per its interval, as
   * spread, plus the time its reads lately ended after they were due (on a busy machine or with a
   * slow API, that is what spaces the reads as much as the interval).
   */
  polling(): LogPolling {
    let atPollInterval = 0;
    let readsPerSecond = 0;
    for (const slot of this.slots.values()) {
      if (slot.intervalMs <= this.opts.pollMs) atPollInterval += 1;
      readsPerSecond += 1000 / Math.max(slot.intervalMs * MEAN_SPREAD + slot.overheadMs, 1);
    }
    return { streams: this.slots.size, atPollInterval, readsPerSecond };
  }

  /** When the stream's next read is due (epoch ms), for tests and the landing page. */
  dueAt(key: string): number | undefined {
    return this.slots.get(key)?.dueAt;
  }

  private reschedule(slot: Slot, dueAt: number): void {
    slot.dueAt = dueAt;
    slot.version += 1;
    this.heap.push(slot);
    this.pump();
  }

  private pump(): void {
    if (this.stopped) return;
    const now = this.opts.clock.now();
    while (this.active < this.opts.workers) {
      const next = this.heap.peek();
      if (!next) return;
      if (next.dueAt > now) return this.timer.wakeAt(next.dueAt);
      if (this.opts.paused()) return this.timer.wakeAt(now + 500);
      this.heap.pop();
      this.start(next);
    }
  }

  private start(slot: Slot): void {
    this.active += 1;
    const stop = new AbortController();
    slot.stop = stop;
    slot.reading = slot.stream
      .read(stop.signal)
      .then(
        (outcome) => this.settle(slot, outcome, undefined),
        (err: unknown) => this.settle(slot, undefined, err),
      )
      .finally(() => {
        slot.reading = undefined;
        slot.stop = undefined;
        this.active -= 1;
        if (!slot.removed && !this.stopped) this.heap.push(slot);
        this.pump();
      });
  }

  /** The next due time after a read, by its outcome. */
  private settle(slot: Slot, outcome: ReadOutcome | undefined, err: unknown): void {
    if (slot.removed || this.stopped) return;
    const now = this.opts.clock.now();
    const { pollMs, maxPollMs } = this.opts;
    const spread = () => SPREAD_FROM + (1 - SPREAD_FROM) * this.random();
    slot.version += 1;
    slot.overheadMs += OVERHEAD_WEIGHT * (Math.max(0, now - slot.dueAt) - slot.overheadMs);
    if (!outcome) {
      this.opts.onError?.(slot.stream.key, err);
      slot.failures += 1;
      slot.dueAt = now + backoffMs(slot.failures - 1, { baseMs: Math.min(pollMs, 5_000), capMs: maxPollMs });
      return;
    }
    slot.failures = 0;
    this.opts.onOutcome?.(slot.stream.key, outcome);
    switch (outcome.kind) {
      case "found":
        slot.hintable = true;
        slot.intervalMs = outcome.pace ? paceMs(outcome.pace, pollMs) : pollMs;
        slot.dueAt = now + slot.intervalMs * spread();
        return;
      case "empty":
        slot.intervalMs = Math.min(Math.max(slot.intervalMs, pollMs) * 2, maxPollMs);
        slot.dueAt = now + slot.intervalMs * spread();
        return;
      case "more":
      case "interrupted":
        slot.dueAt = now;
        return;
      case "stopped":
        slot.removed = true;
        this.slots.delete(slot.stream.key);
        return;
    }
  }

  /** Stop starting reads, abort those in progress and wait for them. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer.cancel();
    for (const slot of this.slots.values()) slot.stop?.abort(new Error("shutting down"));
    await Promise.allSettled([...this.slots.values()].map((s) => s.reading));
  }

  /** Wait for reads in progress without aborting them (shutdown with a deadline is the caller's). */
  async drain(): Promise<void> {
    this.stopped = true;
    this.timer.cancel();
    await Promise.allSettled([...this.slots.values()].map((s) => s.reading));
  }
}
