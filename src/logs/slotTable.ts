/**
 * The scheduler's per-stream state as columns: a stream is a slot number, and each field of its
 * schedule one typed array indexed by it. Every stream has one (15,000 at 5,000 sites), so a slot
 * costs about 40 bytes instead of an object and the boxed numbers of its times (136).
 *
 * A slot freed is reused; its version goes on counting, so an entry left in the due heap for the
 * stream that had it before never matches the one that has it now.
 */
import type { ReadOutcome } from "./read/types.js";

/** What the scheduler reads (scheduler.ts); here, beside the table that holds it, so neither imports the other. */
export interface ScheduledStream {
  readonly key: string;
  /**
   * The stream's slot in its scheduler while scheduled, -1 otherwise; set by the scheduler alone
   * (held by the stream, so the scheduler needs no map of its own: 15,000 streams at 5,000 sites).
   */
  scheduleSlot: number;
  /** Its longest interval, when not `logs.maxPollInterval` (an activity log read on webhook events). */
  readonly maxPollMs?: number | undefined;
  read(signal: AbortSignal): Promise<ReadOutcome>;
}

/** flags: a hint may bring the stream forward (none did since a read of it last found entries). */
export const HINTABLE = 1;
/** flags: the stream was removed; its slot is freed once no read of it is in progress. */
export const REMOVED = 2;
/** flags: a read of the stream is in progress. */
export const READING = 4;
/** flags: a `wake` asked for one more read shortly after the next one ends. */
export const FOLLOW_UP = 8;
/** flags: a hint brought the read in progress (or due) forward. */
export const HINTED = 16;

const INITIAL_CAPACITY = 64;

export class SlotTable {
  private readonly streams: (ScheduledStream | undefined)[] = [];
  dueAt = new Float64Array(INITIAL_CAPACITY);
  /** Whole milliseconds (paced and backed-off intervals are). */
  intervalMs = new Uint32Array(INITIAL_CAPACITY);
  /** How long after their due time the stream's reads end lately (waiting for a worker, reading), ms. */
  overheadMs = new Float32Array(INITIAL_CAPACITY);
  /** Failed reads in a row (stays at its largest value: the backoff is at its cap long before). */
  failures = new Uint16Array(INITIAL_CAPACITY);
  version = new Uint32Array(INITIAL_CAPACITY);
  flags = new Uint8Array(INITIAL_CAPACITY);
  /** Until when hints are not taken for the stream (a hinted read found little), epoch ms. */
  hintsMutedUntil = new Float64Array(INITIAL_CAPACITY);
  private readonly free: number[] = [];

  /** A slot for `stream`, due at `dueAt`, polled every `intervalMs`. */
  add(stream: ScheduledStream, dueAt: number, intervalMs: number): number {
    const slot = this.free.pop() ?? this.streams.length;
    if (slot >= this.dueAt.length) this.grow();
    this.streams[slot] = stream;
    this.dueAt[slot] = dueAt;
    this.intervalMs[slot] = intervalMs;
    this.overheadMs[slot] = 0;
    this.failures[slot] = 0;
    this.flags[slot] = HINTABLE;
    this.hintsMutedUntil[slot] = 0;
    return slot;
  }

  /** The slots that hold a stream still scheduled. */
  *scheduled(): Iterable<number> {
    const { streams, flags } = this;
    for (let slot = 0; slot < streams.length; slot++)
      if (streams[slot] !== undefined && ((flags[slot] as number) & REMOVED) === 0) yield slot;
  }

  /** The stream in `slot` (only while it has one). */
  stream(slot: number): ScheduledStream {
    return this.streams[slot] as ScheduledStream;
  }

  is(slot: number, flag: number): boolean {
    return ((this.flags[slot] as number) & flag) !== 0;
  }

  set(slot: number, flag: number, on: boolean): void {
    const flags = this.flags[slot] as number;
    this.flags[slot] = on ? flags | flag : flags & ~flag;
  }

  /** A new version of the slot's due time: heap entries of the older ones no longer count. */
  bump(slot: number): number {
    const version = ((this.version[slot] as number) + 1) >>> 0;
    this.version[slot] = version;
    return version;
  }

  /** The slot is free for another stream. */
  release(slot: number): void {
    this.streams[slot] = undefined;
    this.flags[slot] = REMOVED;
    this.bump(slot);
    this.free.push(slot);
  }

  private grow(): void {
    const capacity = Math.ceil(this.dueAt.length * 1.5);
    const grown = <T extends Float64Array | Float32Array | Uint32Array | Uint16Array | Uint8Array>(
      a: T,
      make: (n: number) => T,
    ): T => {
      const b = make(capacity);
      b.set(a);
      return b;
    };
    this.dueAt = grown(this.dueAt, (n) => new Float64Array(n));
    this.intervalMs = grown(this.intervalMs, (n) => new Uint32Array(n));
    this.overheadMs = grown(this.overheadMs, (n) => new Float32Array(n));
    this.failures = grown(this.failures, (n) => new Uint16Array(n));
    this.version = grown(this.version, (n) => new Uint32Array(n));
    this.flags = grown(this.flags, (n) => new Uint8Array(n));
    this.hintsMutedUntil = grown(this.hintsMutedUntil, (n) => new Float64Array(n));
  }
}

/**
 * A binary min-heap of (due time, slot, version); entries whose version is no longer the slot's are
 * skipped by the scheduler. Kept as three parallel arrays, not an object per entry.
 */
export class DueHeap {
  private readonly dueAts: number[] = [];
  private readonly slots: number[] = [];
  private readonly versions: number[] = [];

  get size(): number {
    return this.slots.length;
  }

  /** The earliest entry's slot, version and due time (undefined when empty). */
  get topSlot(): number | undefined {
    return this.slots[0];
  }
  get topVersion(): number {
    return this.versions[0] as number;
  }
  get topDueAt(): number {
    return this.dueAts[0] as number;
  }

  push(dueAt: number, slot: number, version: number): void {
    const { dueAts } = this;
    let i = this.slots.length;
    dueAts.push(dueAt);
    this.slots.push(slot);
    this.versions.push(version);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((dueAts[parent] as number) <= (dueAts[i] as number)) break;
      this.swap(parent, i);
      i = parent;
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
    const slot = slots[a] as number;
    slots[a] = slots[b] as number;
    slots[b] = slot;
    const version = versions[a] as number;
    versions[a] = versions[b] as number;
    versions[b] = version;
  }
}
