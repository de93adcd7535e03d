/**
 * One stream (a site's PHP, web-server or activity log, or the account's activity log): each `read`
 * opens a fresh scroll (or continues a held one), pages until it reaches the checkpoint's lower bound
 * or the end, drops what was already delivered, and ships what is new oldest first.
 *
 * The lower bound is the high-water mark minus a window. Most reads use a short window sized from the
 * lateness this stream has shown (entries that appeared behind the mark): a busy stream then costs one
 * page per read instead of re-reading everything written during `logs.overlap`. The first read after
 * start, and one read every DEEP_READ_INTERVAL_MS, use the whole `logs.overlap` window, which catches
 * entries later than the short window and widens it.
 *
 * A failed page request abandons the read: the next one starts again from the checkpoint and the
 * dedupe absorbs what is read twice. Reads that meet only entries without a usable time stop after
 * MAX_TIMELESS_PAGES pages (they give no place to stop at), so malformed data cannot cost a walk
 * through the whole retention.
 */
import type { LogStream } from "../api/schemas.js";
import type { Clock } from "../util/time.js";
import { CorruptCheckpointError, prune, type Checkpoint } from "./checkpoint.js";
import type { CheckpointStore, StreamCheckpoint } from "./journal.js";
import type { StreamEntry } from "./pending.js";
import type { RecordEncoder } from "./prepared.js";
import type { ReadBounds } from "./read.js";
import { ReadRun, type ReadResult } from "./readRun.js";
import type { StreamShipper } from "./shipper.js";
import type { BufferBudget } from "./spool.js";
import type { NumberedSource, ScrollSource } from "./sources.js";

export const DEEP_READ_INTERVAL_MS = 10 * 60_000;
/**
 * Lateness (decayed) below this counts as none. With none seen, the short window is empty: a read
 * still re-reads the high-water mark's own second (times have one-second precision, and entries of
 * that second may have arrived since), and whatever else its last page holds below the mark is
 * checked too, which is how lateness is first noticed between full-overlap reads.
 */
const NEGLIGIBLE_LATENESS_MS = 100;
/** Entries stamped more than this ahead of the exporter's clock count as from the future. */
export const FUTURE_TOLERANCE_MS = 60_000;
/** How fast the lateness seen long ago stops widening the short window (half-life). */
const LATENESS_HALF_LIFE_MS = 3_600_000;

/** A site as the log pipeline names it; a rename is a new identity handed to each part (never mutated). */
export interface SiteIdentity {
  /** 0 for the account's own activity log. */
  readonly id: number;
  readonly name: string;
}

export type ReadOutcome =
  /** New records were shipped. */
  | { kind: "found"; shipped: number }
  /** Nothing new. */
  | { kind: "empty" }
  /** Stopped at the page cap with more waiting: read again at once. */
  | { kind: "more"; shipped: number }
  /** The collector is down: read again once it is back. */
  | { kind: "interrupted" }
  /** The checkpoint cannot be trusted: never read again. */
  | { kind: "stopped" };

export interface TailerEvents {
  deduplicated(n: number): void;
  malformed(n: number): void;
  future(n: number): void;
  late(n: number): void;
  gap(fromMs: number, toMs: number): void;
  checkpointError(err: CorruptCheckpointError): void;
  /** The stream was read up to its end at `atMs`. */
  readToEnd(atMs: number): void;
  /** The stream had no checkpoint and starts at `fromMs` (logs.startFrom): nothing before is shipped. */
  startedFresh(fromMs: number): void;
}

export interface TailerOptions {
  overlapMs: number;
  /** Where a stream without a checkpoint starts (logs.startFrom resolved at process start). */
  startFromMs: () => number;
  /** Page requests per read at most (a growing cursor could otherwise never end). */
  maxPagesPerRead: number;
  /** Activity streams: may this stream ship an entry another stream may also list? */
  claim?: (fingerprint: string) => boolean;
  retentionMs: number;
  spoolDir: string;
  bufferBudget: BufferBudget;
  fingerprint: (entry: StreamEntry) => string;
  /** Encodes a new record for the collector as soon as it is read. */
  encoder: RecordEncoder;
  clock: Clock;
  /** Whether the collector is down (then nothing more is fetched). */
  collectorDown: () => boolean;
}

/** Where a stream's pages come from: a scroll (PHP and web-server logs) or numbered pages (activity). */
export type StreamSource =
  { kind: "scroll"; scroll: ScrollSource } | { kind: "numbered"; numbered: NumberedSource };

export class Tailer {
  private stored: StreamCheckpoint | undefined;
  private shipper: StreamShipper | undefined;
  failed: CorruptCheckpointError | undefined;
  /** Decaying largest lateness seen, ms, and when it was seen. */
  private lateness = { ms: 0, at: 0 };
  private lastDeepReadAt = -Infinity;
  private spoolCounter = 0;

  constructor(
    readonly site: SiteIdentity,
    readonly stream: LogStream,
    private readonly source: StreamSource,
    private readonly checkpoints: CheckpointStore,
    private readonly makeShipper: (cp: StreamCheckpoint) => StreamShipper,
    private readonly events: TailerEvents,
    private readonly opts: TailerOptions,
  ) {}

  /** Let go of the checkpoint's files (after its last read: the stream was removed). */
  async close(): Promise<void> {
    await this.stored?.close();
  }

  /** The checkpoint as it stands (undefined before the first read or after a corrupt one). */
  get checkpoint(): Checkpoint | undefined {
    return this.stored?.state;
  }

  /** Open (or create) the checkpoint. A corrupt one stops this stream for good, loudly. */
  async prepare(): Promise<StreamCheckpoint | undefined> {
    if (this.failed) return undefined;
    if (this.stored) return this.stored;
    try {
      const stored = await this.checkpoints.open(
        this.site.id,
        this.stream,
        this.opts.startFromMs,
        this.opts.overlapMs,
      );
      this.stored = stored;
      this.shipper = this.makeShipper(stored);
      if (stored.created) this.events.startedFresh(stored.state.floorMs);
      return stored;
    } catch (err) {
      if (err instanceof CorruptCheckpointError) {
        this.failed = err;
        this.events.checkpointError(err);
        return undefined;
      }
      throw err;
    }
  }

  /** The short window: the lateness seen (decaying), with room to spare, never above the overlap. */
  lateWindowMs(now: number): number {
    const age = Math.max(0, now - this.lateness.at);
    const seen = this.lateness.ms * 0.5 ** (age / LATENESS_HALF_LIFE_MS);
    if (seen < NEGLIGIBLE_LATENESS_MS) return 0;
    return Math.min(this.opts.overlapMs, Math.ceil(seen * 1.5) + 1000);
  }

  private noteLateness(ms: number, now: number): void {
    const current = this.lateWindowMs(now) / 1.5;
    if (ms > current) this.lateness = { ms, at: now };
  }

  async read(signal: AbortSignal): Promise<ReadOutcome> {
    const stored = await this.prepare();
    if (!stored || !this.shipper) return { kind: "stopped" };
    const now = this.opts.clock.now();
    const deep = now - this.lastDeepReadAt >= DEEP_READ_INTERVAL_MS;
    const state = stored.state;
    const highWaterBefore = state.highWaterMs;
    const deliveredBefore = state.highWaterMs > state.floorMs;
    const bounds = (): ReadBounds => ({
      lowerMs: Math.max(
        state.highWaterMs - (deep ? this.opts.overlapMs : this.lateWindowMs(now)),
        state.floorMs,
      ),
      dedupeFloorMs: Math.max(state.highWaterMs - this.opts.overlapMs, state.floorMs),
      highWaterMs: state.highWaterMs,
      nowMs: now,
      futureToleranceMs: FUTURE_TOLERANCE_MS,
    });
    const context = { events: this.events, opts: this.opts, site: this.site, stream: this.stream };
    const run = new ReadRun(context, stored, bounds, signal, ++this.spoolCounter);
    this.shipper.begin(now);
    let result: ReadResult;
    try {
      result =
        this.source.kind === "scroll"
          ? await run.scroll(this.source.scroll, this.shipper)
          : await run.numbered(this.source.numbered, this.shipper);
    } finally {
      await run.buffer.discard();
    }
    if (result.end === "interrupted") {
      stored.release();
      return { kind: "interrupted" };
    }
    prune(state, this.opts.overlapMs);
    await stored.compactIfLarge();
    stored.release();
    if (result.maxLatenessMs > 0) this.noteLateness(result.maxLatenessMs, now);
    if (deep) this.lastDeepReadAt = now;
    if (result.end === "end" || result.end === "lower") this.events.readToEnd(now);
    // Retention passed the checkpoint: the oldest entry still there is newer than what was delivered.
    if (
      deliveredBefore &&
      result.fresh &&
      result.end === "end" &&
      !result.reachedLower &&
      result.oldestSeen !== Infinity &&
      result.oldestSeen > highWaterBefore &&
      highWaterBefore < now - this.opts.retentionMs + 3_600_000
    ) {
      this.events.gap(highWaterBefore, result.oldestSeen);
    }
    if (result.end === "cap") return { kind: "more", shipped: result.shipped };
    return result.shipped > 0 ? { kind: "found", shipped: result.shipped } : { kind: "empty" };
  }
}
