/**
 * When each stream is read: a fixed number of workers take the most overdue stream first, so when
 * reads cannot keep up (the request budget is full) every stream falls behind by about the same,
 * and none waits forever.
 *
 * Polling by arrival rate (pace.ts): a read that found entries sets the next by the stream's measured
 * rate: a quarter page's worth of arrivals, between `logs.pollInterval` and the stream's longest
 * interval (`logs.maxPollInterval`, its freshness bound), paced for whole pages when busy. A read that
 * found nothing waits twice as long as the last (up to the longest), and never less than its rate
 * asks; one that stopped at the page cap goes again at once. Waits are shortened at random by up to a
 * twenty-fifth, so streams spread out and never wait longer than their interval.
 *
 * Hints can only shorten a wait. `nudge` (its site's uncached traffic): a stream is brought forward
 * once when the hint's rate would read it at most half as far apart as now; again only after a read
 * found entries, so a hint whose reads find nothing never holds a stream short; and when the hinted
 * read found less than a quarter page, the stream's hints are not taken for an hour (its site's
 * uncached requests are not its lines: bots, another log). `wake` (a webhook
 * event for the stream's site): read within `logs.pollInterval` of the last read, and once more
 * `followUpMs` after that read, for entries the platform writes late.
 */
import { backoffMs, type Clock } from "../util/time.js";
import { WakeTimer } from "../util/wakeTimer.js";
import { entriesPerRead, readIntervalMs } from "./pace.js";
import { SCROLL_PAGE_SIZE } from "./read/decide.js";
import {
  DueHeap,
  FOLLOW_UP,
  HINTABLE,
  HINTED,
  READING,
  REMOVED,
  type ScheduledStream,
  SlotTable,
} from "./slotTable.js";

export type { ScheduledStream } from "./slotTable.js";
import type { ReadOutcome } from "./read/types.js";

export interface SchedulerOptions {
  workers: number;
  pollMs: number;
  maxPollMs: number;
  clock: Pick<Clock, "now">;
  random?: () => number;
  /** After a read a `wake` brought, the next is due at most this much later (default 2 × pollMs). */
  followUpMs?: number;
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

/**
 * Each wait is shortened to a random share of its interval from this much, so reads spread out: a
 * twenty-fifth (12 s of 5 minutes) is spread enough, and a tenth cost a quiet site's three streams
 * more than a request an hour.
 */
const SPREAD_FROM = 0.96;
const MEAN_SPREAD = (1 + SPREAD_FROM) / 2;
/** How much the latest read moves a stream's overhead (an exponentially weighted average). */
const OVERHEAD_WEIGHT = 0.3;

/** After a hinted read that found little, the stream's hints are not taken for this long. */
const HINT_MUTE_MS = 60 * 60_000;

/** A read found what a hint promised: at least the share of a page a read is due for. */
function foundWorthARead(outcome: ReadOutcome): boolean {
  if (outcome.kind === "more") return true;
  if (outcome.kind !== "found") return false;
  return outcome.shipped >= entriesPerRead(outcome.pace?.pageSize ?? SCROLL_PAGE_SIZE);
}

/** A read in progress: its promise and what aborts it (only while the stream is read). */
interface Reading {
  done: Promise<void>;
  stop: AbortController;
}

export class LogScheduler {
  /** Streams scheduled. */
  private scheduled = 0;
  private readonly table = new SlotTable();
  private readonly heap = new DueHeap();
  private readonly reads = new Map<number, Reading>();
  private active = 0;
  private readonly timer: WakeTimer;
  private stopped = false;
  private readonly random: () => number;

  constructor(private readonly opts: SchedulerOptions) {
    this.random = opts.random ?? Math.random;
    this.timer = new WakeTimer(() => this.pump(), opts.clock);
  }

  get size(): number {
    return this.scheduled;
  }

  get reading(): number {
    return this.active;
  }

  has(stream: ScheduledStream): boolean {
    return stream.scheduleSlot >= 0;
  }

  /** Add a stream, first read due at `dueAt` (default: now). */
  add(stream: ScheduledStream, dueAt = this.opts.clock.now()): void {
    if (this.stopped || stream.scheduleSlot >= 0) return;
    const slot = this.table.add(stream, dueAt, this.opts.pollMs);
    stream.scheduleSlot = slot;
    this.scheduled += 1;
    this.heap.push(dueAt, slot, this.table.bump(slot));
    this.pump();
  }

  /** The stream is no longer scheduled (its slot is freed by the caller, now or after its read). */
  private unschedule(stream: ScheduledStream): void {
    stream.scheduleSlot = -1;
    this.scheduled -= 1;
  }

  /** Remove a stream; its read in progress is aborted and awaited. */
  async remove(stream: ScheduledStream): Promise<void> {
    const slot = stream.scheduleSlot;
    if (slot < 0) return;
    this.unschedule(stream);
    const read = this.reads.get(slot);
    if (!read) return this.table.release(slot);
    // Freed when the read ends (see start).
    this.table.set(slot, REMOVED, true);
    read.stop.abort(new Error("stream removed"));
    await read.done;
  }

  /**
   * The stream is likely to have new entries, arriving fast enough to read it every
   * `expectedIntervalMs`: read it within `logs.pollInterval` of its last read, once, if that is at
   * most half its interval now. Its interval stays: if that read finds nothing, it backs off from
   * where it was.
   */
  nudge(stream: ScheduledStream, expectedIntervalMs = this.opts.pollMs): void {
    const slot = stream.scheduleSlot;
    const { table } = this;
    if (slot < 0 || table.is(slot, READING) || !table.is(slot, HINTABLE)) return;
    if (this.opts.clock.now() < (table.hintsMutedUntil[slot] as number)) return;
    const intervalMs = table.intervalMs[slot] as number;
    if (intervalMs <= this.opts.pollMs || expectedIntervalMs > intervalMs / 2) return;
    table.set(slot, HINTABLE, false);
    table.set(slot, HINTED, true);
    this.bringForward(slot);
  }

  /**
   * Something happened to the stream's source (a webhook event): read it within `logs.pollInterval`
   * of its last read, and again `followUpMs` after that read. During a read, only the second.
   */
  wake(stream: ScheduledStream): void {
    const slot = stream.scheduleSlot;
    if (slot < 0) return;
    this.table.set(slot, FOLLOW_UP, true);
    if (!this.table.is(slot, READING)) this.bringForward(slot);
  }

  private bringForward(slot: number): void {
    const { table } = this;
    const intervalMs = table.intervalMs[slot] as number;
    const dueAt = table.dueAt[slot] as number;
    this.reschedule(slot, Math.min(dueAt, dueAt - intervalMs + this.opts.pollMs));
  }

  /**
   * How the streams are polled now (for the request plan): each stream once per its interval, as
   * spread, plus the time its reads lately ended after they were due (on a busy machine or with a
   * slow API, that is what spaces the reads as much as the interval).
   */
  polling(): LogPolling {
    let atPollInterval = 0;
    let readsPerSecond = 0;
    const { intervalMs, overheadMs } = this.table;
    for (const slot of this.table.scheduled()) {
      const interval = intervalMs[slot] as number;
      if (interval <= this.opts.pollMs) atPollInterval += 1;
      readsPerSecond += 1000 / Math.max(interval * MEAN_SPREAD + (overheadMs[slot] as number), 1);
    }
    return { streams: this.scheduled, atPollInterval, readsPerSecond };
  }

  /** When the stream's next read is due (epoch ms), for tests and the landing page. */
  dueAt(stream: ScheduledStream): number | undefined {
    const slot = stream.scheduleSlot;
    return slot < 0 ? undefined : this.table.dueAt[slot];
  }

  private reschedule(slot: number, dueAt: number): void {
    this.table.dueAt[slot] = dueAt;
    this.heap.push(dueAt, slot, this.table.bump(slot));
    this.pump();
  }

  /** The slot of the earliest entry still in force (not read now, not removed), or undefined. */
  private next(): number | undefined {
    const { heap, table } = this;
    for (;;) {
      const slot = heap.topSlot;
      if (slot === undefined) return undefined;
      if (
        heap.topVersion === table.version[slot] &&
        ((table.flags[slot] as number) & (REMOVED | READING)) === 0
      )
        return slot;
      heap.pop();
    }
  }

  private pump(): void {
    if (this.stopped) return;
    const now = this.opts.clock.now();
    while (this.active < this.opts.workers) {
      const next = this.next();
      if (next === undefined) return;
      const dueAt = this.heap.topDueAt;
      if (dueAt > now) return this.timer.wakeAt(dueAt);
      if (this.opts.paused()) return this.timer.wakeAt(now + 500);
      this.heap.pop();
      this.start(next);
    }
  }

  private start(slot: number): void {
    this.active += 1;
    const { table } = this;
    const stop = new AbortController();
    table.set(slot, READING, true);
    const done = table
      .stream(slot)
      .read(stop.signal)
      .then(
        (outcome) => this.settle(slot, outcome, undefined),
        (err: unknown) => this.settle(slot, undefined, err),
      )
      .finally(() => {
        this.reads.delete(slot);
        table.set(slot, READING, false);
        this.active -= 1;
        if (table.is(slot, REMOVED)) table.release(slot);
        else if (!this.stopped)
          this.heap.push(table.dueAt[slot] as number, slot, table.version[slot] as number);
        this.pump();
      });
    this.reads.set(slot, { done, stop });
  }

  /** The next due time after a read, by its outcome. */
  private settle(slot: number, outcome: ReadOutcome | undefined, err: unknown): void {
    const { table } = this;
    if (table.is(slot, REMOVED) || this.stopped) return;
    const now = this.opts.clock.now();
    const { pollMs, maxPollMs } = this.opts;
    const spread = () => SPREAD_FROM + (1 - SPREAD_FROM) * this.random();
    const stream = table.stream(slot);
    const { key } = stream;
    table.bump(slot);
    const overhead = table.overheadMs[slot] as number;
    table.overheadMs[slot] =
      overhead + OVERHEAD_WEIGHT * (Math.max(0, now - (table.dueAt[slot] as number)) - overhead);
    if (!outcome) {
      this.opts.onError?.(key, err);
      const failures = Math.min((table.failures[slot] as number) + 1, 0xffff);
      table.failures[slot] = failures;
      table.dueAt[slot] =
        now + backoffMs(failures - 1, { baseMs: Math.min(pollMs, 5_000), capMs: maxPollMs });
      return;
    }
    table.failures[slot] = 0;
    this.opts.onOutcome?.(key, outcome);
    if (table.is(slot, HINTED) && outcome.kind !== "interrupted") {
      // A hinted read that found less than a read is worth: this stream's hints are not its lines.
      table.set(slot, HINTED, false);
      if (!foundWorthARead(outcome)) table.hintsMutedUntil[slot] = now + HINT_MUTE_MS;
    }
    const longestMs = Math.max(pollMs, stream.maxPollMs ?? maxPollMs);
    switch (outcome.kind) {
      case "found":
        table.set(slot, HINTABLE, true);
        table.intervalMs[slot] = outcome.pace ? readIntervalMs(outcome.pace, pollMs, longestMs) : pollMs;
        break;
      case "empty": {
        const doubled = Math.min(Math.max(table.intervalMs[slot] as number, pollMs) * 2, longestMs);
        const byRate = outcome.pace ? readIntervalMs(outcome.pace, pollMs, longestMs) : 0;
        table.intervalMs[slot] = Math.max(doubled, byRate);
        break;
      }
      case "more":
      case "interrupted":
        table.dueAt[slot] = now;
        return;
      case "stopped":
        table.set(slot, REMOVED, true);
        this.unschedule(stream);
        return;
    }
    table.dueAt[slot] = now + (table.intervalMs[slot] as number) * spread();
    if (table.is(slot, FOLLOW_UP)) {
      table.set(slot, FOLLOW_UP, false);
      table.dueAt[slot] = Math.min(table.dueAt[slot] as number, now + (this.opts.followUpMs ?? 2 * pollMs));
    }
  }

  /** Stop starting reads, abort those in progress and wait for them. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer.cancel();
    for (const read of this.reads.values()) read.stop.abort(new Error("shutting down"));
    await Promise.allSettled([...this.reads.values()].map((r) => r.done));
  }

  /** Wait for reads in progress without aborting them (shutdown with a deadline is the caller's). */
  async drain(): Promise<void> {
    this.stopped = true;
    this.timer.cancel();
    await Promise.allSettled([...this.reads.values()].map((r) => r.done));
  }
}
