/**
 * One stream (a site's PHP, web-server or activity log, or the account's activity log): its
 * checkpoint, the lateness it has shown, and its reads. Each `read` opens a fresh scroll (or continues
 * a held one), pages until it reaches the checkpoint's lower bound or the end, drops what was already
 * delivered, and ships what is new oldest first; the read itself is in read/.
 *
 * The lower bound is the high-water mark minus a window. Most reads use a short window sized from the
 * lateness this stream has shown (entries that appeared behind the mark): a busy stream then costs one
 * page per read instead of re-reading everything written during `logs.overlap`. The first read after
 * start, and one read every DEEP_READ_INTERVAL_MS (each stream at its own phase: the second comes up
 * to half an interval later), use the whole `logs.overlap` window, which catches entries later than
 * the short window and widens it.
 *
 * A failed page request abandons the read: the next one starts again from the checkpoint and the
 * dedupe absorbs what is read twice. How the platform pages cannot keep a read going for ever (a
 * scroll that loops, pages without one usable entry, the bounds of one read: read/decide.ts); a read
 * that ships past the checkpoint without reaching it counts a gap (read/gap.ts), and its rate and
 * window tell the scheduler when to read it next (pace.ts).
 */
import type { LogStream } from "../api/schemas.js";
import { CorruptCheckpointError, prune, type Checkpoint } from "./checkpoint.js";
import type { CheckpointStore, StreamCheckpoint } from "./journal.js";
import { readGap } from "./read/gap.js";
import { type ReadContext, ReadRun } from "./read/run.js";
import type { PreparedPage, RecordEncoder } from "./prepared.js";
import type { ReadPace } from "./pace.js";
import type {
  ClaimEntry,
  EndReason,
  PageOutlet,
  PageSource,
  ReadOutcome,
  ReadResult,
  SiteIdentity,
  StreamParts,
  TailerEvents,
  TailerOptions,
} from "./read/types.js";
import type { StreamShipper } from "./shipper.js";
import { failureTrouble, maySkipTooLarge, noteTrouble, type Stall, stallOf, type Trouble } from "./stall.js";

export type { ReadOutcome, SiteIdentity, StreamParts, TailerEvents, TailerOptions } from "./read/types.js";

/** Ends of a read that stopped before its scroll's end (see readGap). */
const STOPPED_SHORT: ReadonlySet<EndReason> = new Set(["repeated", "pages", "bytes", "unusable"]);

export const DEEP_READ_INTERVAL_MS = 10 * 60_000;
/** Numbers the reads of the process (their spool files' names). */
let readSerial = 0;
/** Numbers the streams of the process, to spread their deep reads. */
let streamSerial = 0;

/**
 * How much later than the interval a stream's second deep read comes: streams started together
 * would otherwise all come due together every interval (at 5,000 sites, 15,001 reads of the whole
 * overlap within seconds, the resident memory's peak). Spread over half an interval by golden-ratio
 * steps, so any run of consecutive streams is spread evenly; later deep reads keep the phase. Later,
 * not sooner: a busy stream's deep read costs pages, and it should not cost them twice as often.
 */
export function deepReadPhaseMs(serial: number): number {
  return Math.floor((((serial * 0.6180339887498949) % 1) * DEEP_READ_INTERVAL_MS) / 2);
}
/**
 * Lateness (decayed) below this counts as none. With none seen, the short window is empty: a read
 * still re-reads the high-water mark's own second (times have one-second precision, and entries of
 * that second may have arrived since), and whatever else its last page holds below the mark is
 * checked too, which is how lateness is first noticed between full-overlap reads.
 */
const NEGLIGIBLE_LATENESS_MS = 100;
/** How much of the rate seen by the reads before each read keeps (see noteRate). */
const RATE_DECAY = 0.9;
/** How fast the lateness seen long ago stops widening the short window (half-life). */
const LATENESS_HALF_LIFE_MS = 3_600_000;

/**
 * What the end of a read does to the stream, by why it ended. Every read, however it ended, lets go
 * of the checkpoint's files the same way (prune, compact when large, release).
 */
const AFTER: Record<EndReason, { complete: boolean; readToEnd: boolean }> = {
  /** complete: the read counts for the deep-read interval and its lateness is noted. */
  end: { complete: true, readToEnd: true },
  lower: { complete: true, readToEnd: true },
  cap: { complete: true, readToEnd: false },
  unusable: { complete: true, readToEnd: false },
  repeated: { complete: true, readToEnd: false },
  pages: { complete: true, readToEnd: false },
  bytes: { complete: true, readToEnd: false },
  interrupted: { complete: false, readToEnd: false },
  too_large: { complete: true, readToEnd: false },
};

/**
 * The parts of its stream a tailer uses: the encoder and claim of its reads, and what makes its
 * shipper (an object, not closures: one per stream, thousands of streams).
 */
export interface TailedParts extends StreamParts {
  shipperFor(cp: StreamCheckpoint): StreamShipper;
}

/** What a stream has shown lately, kept once a read of it ships or sees lateness (most never do). */
interface StreamPace {
  /** Decaying largest lateness seen, ms, and when it was seen. */
  latenessMs: number;
  latenessAt: number;
  /** Entries shipped and time passed between reads, both decaying. */
  rateShipped: number;
  rateElapsedMs: number;
}

/**
 * A stream's reads, as the base of the stream's own object: the stream gives the tailer its site,
 * source, checkpoints, settings and parts (one object per stream, thousands of streams, so nothing
 * is held twice). A tailer is also where its reads' pages go (PageOutlet): to its shipper, made when
 * a read first ships something and let go once a read ends with nothing left in it, so that
 * thousands of idle streams hold none.
 */
export abstract class Tailer implements PageOutlet, ReadContext, TailedParts {
  abstract readonly site: SiteIdentity;
  abstract readonly stream: LogStream;
  abstract readonly opts: TailerOptions;
  abstract readonly events: TailerEvents;
  abstract readonly encoder: RecordEncoder;
  abstract readonly claim: ClaimEntry | undefined;
  /** A scroll (PHP and web-server logs) or numbered pages (activity). */
  protected abstract readonly source: PageSource;
  protected abstract readonly checkpoints: CheckpointStore;
  abstract shipperFor(cp: StreamCheckpoint): StreamShipper;

  /** The checkpoint once opened, or why it could not be (a corrupt one stops the stream for good). */
  private opened: StreamCheckpoint | CorruptCheckpointError | undefined;
  private shipper: StreamShipper | undefined;
  private pace: StreamPace | undefined;
  /** When the last read of the whole overlap began (undefined before the first). */
  private lastDeepReadAt: number | undefined;
  private readonly deepPhaseMs = deepReadPhaseMs(++streamSerial);
  /** When the last complete read began. */
  private lastReadAtMs: number | undefined;
  /** When the read in progress began: no record of it moves the high-water mark past that. */
  private readStartedAt: number | undefined;
  /** What has kept the stream from advancing lately (see stall.ts); undefined while it advances. */
  private trouble: Trouble | undefined;

  /** The parts a read uses are the stream's own. */
  get parts(): StreamParts {
    return this;
  }

  /** Let go of the checkpoint's files (after its last read: the stream was removed). */
  async releaseCheckpoint(): Promise<void> {
    await this.stored?.close();
  }

  private get stored(): StreamCheckpoint | undefined {
    return this.opened instanceof CorruptCheckpointError ? undefined : this.opened;
  }

  /** What keeps the stream from advancing, once it has lasted (see stall.ts). */
  get stall(): Stall | undefined {
    return stallOf(this.trouble);
  }

  /** The checkpoint as it stands (undefined before the first read or after a corrupt one). */
  get checkpoint(): Checkpoint | undefined {
    return this.stored?.state;
  }

  /** Open (or create) the checkpoint. A corrupt one stops this stream for good, loudly. */
  async prepare(): Promise<StreamCheckpoint | undefined> {
    if (this.opened) return this.stored;
    try {
      const stored = await this.checkpoints.open(
        this.site.id,
        this.stream,
        this.opts.startFromMs,
        this.opts.overlapMs,
      );
      this.opened = stored;
      if (stored.created) this.events.startedFresh(stored.state.floorMs);
      return stored;
    } catch (err) {
      if (err instanceof CorruptCheckpointError) {
        this.opened = err;
        this.trouble = noteTrouble(undefined, "checkpoint_corrupt", this.opts.clock.now(), err.message);
        this.events.checkpointError(err);
        return undefined;
      }
      throw err;
    }
  }

  /** The short window: the lateness seen (decaying), with room to spare, never above the overlap. */
  lateWindowMs(now: number): number {
    const pace = this.pace;
    if (!pace) return 0;
    const age = Math.max(0, now - pace.latenessAt);
    const seen = pace.latenessMs * 0.5 ** (age / LATENESS_HALF_LIFE_MS);
    if (seen < NEGLIGIBLE_LATENESS_MS) return 0;
    return Math.min(this.opts.overlapMs, Math.ceil(seen * 1.5) + 1000);
  }

  private noteLateness(ms: number, now: number): void {
    const current = this.lateWindowMs(now) / 1.5;
    if (ms > current) {
      const pace = this.paceState();
      pace.latenessMs = ms;
      pace.latenessAt = now;
    }
  }

  private paceState(): StreamPace {
    this.pace ??= { latenessMs: 0, latenessAt: 0, rateShipped: 0, rateElapsedMs: 0 };
    return this.pace;
  }

  /** One read; a failure, unless it is no fault of the stream's, is trouble the stream keeps. */
  async read(signal: AbortSignal): Promise<ReadOutcome> {
    try {
      return await this.readFrom(signal);
    } catch (err) {
      const reason = signal.aborted ? undefined : failureTrouble(err);
      if (reason) {
        const detail = err instanceof Error ? err.message : String(err);
        this.trouble = noteTrouble(this.trouble, reason, this.opts.clock.now(), detail);
      }
      throw err;
    }
  }

  private async readFrom(signal: AbortSignal): Promise<ReadOutcome> {
    const stored = await this.prepare();
    if (!stored) return { kind: "stopped" };
    const now = this.opts.clock.now();
    const deep = this.lastDeepReadAt === undefined || now - this.lastDeepReadAt >= DEEP_READ_INTERVAL_MS;
    const { overlapMs } = this.opts;
    const before = { highWaterMs: stored.state.highWaterMs, floorMs: stored.state.floorMs };
    const lateWindowMs = this.lateWindowMs(now);
    const window = {
      windowMs: deep ? overlapMs : lateWindowMs,
      overlapMs,
      nowMs: now,
      lateMs: lateWindowMs,
    };
    const skipTooLarge = maySkipTooLarge(this.trouble, now);
    const run = new ReadRun(this, stored, window, signal, ++readSerial, skipTooLarge);
    this.readStartedAt = now;
    this.shipper?.begin(now);
    let result: ReadResult;
    try {
      result = await run.run(this.source, this);
    } finally {
      this.readStartedAt = undefined;
      if (this.shipper?.idle) this.shipper = undefined;
      await run.buffer.discard();
      prune(stored.state, overlapMs);
      await stored.compactIfLarge();
      stored.release();
    }
    const after = AFTER[result.end];
    if (after.complete) {
      if (result.maxLatenessMs > 0) this.noteLateness(result.maxLatenessMs, now);
      if (deep) this.lastDeepReadAt = this.lastDeepReadAt === undefined ? now + this.deepPhaseMs : now;
    }
    if (after.readToEnd) this.events.readToEnd(now);
    if (after.complete) this.noteRate(result.shipped, now);
    if (result.end === "too_large") {
      // The page given up, and whatever lay below it down to the checkpoint.
      this.events.gap(before.highWaterMs, Math.max(before.highWaterMs, result.oldestSeen), "too_large");
    } else {
      const gap = readGap({
        deliveredBefore: before.highWaterMs > before.floorMs,
        highWaterBeforeMs: before.highWaterMs,
        fresh: result.fresh,
        shipped: result.shipped,
        reachedLower: result.reachedLower,
        oldestSeenMs: result.oldestSeen,
        stoppedShort: STOPPED_SHORT.has(result.end),
      });
      if (gap) this.events.gap(gap.fromMs, gap.toMs);
    }
    if (after.complete) this.noteMalformed(result, now);
    if (result.end === "interrupted") return { kind: "interrupted" };
    if (result.end === "cap") return { kind: "more", shipped: result.shipped };
    const pace = this.readPace(now);
    if (result.shipped === 0) return pace ? { kind: "empty", pace } : { kind: "empty" };
    return pace
      ? { kind: "found", shipped: result.shipped, pace }
      : { kind: "found", shipped: result.shipped };
  }

  /** The stream's rate and what its reads re-read, once a read has shipped something. */
  private readPace(now: number): ReadPace | undefined {
    const seen = this.pace;
    if (!seen || seen.rateElapsedMs === 0) return undefined;
    return {
      ratePerSecond: (seen.rateShipped * 1000) / seen.rateElapsedMs,
      // The next read re-reads its short window and the high-water mark's own second.
      rereadMs: this.lateWindowMs(now) + 1000,
      pageSize: this.source.pageSize,
    };
  }

  /** A read that met nothing but malformed entries keeps that trouble; any other complete read clears it. */
  private noteMalformed(result: ReadResult, now: number): void {
    if (!result.malformedOnly) {
      this.trouble = undefined;
      return;
    }
    const detail =
      `the last read met ${result.malformed} malformed entr${result.malformed === 1 ? "y" : "ies"} and nothing it could ship: ` +
      "they have no readable time or do not fit the schema (sitehost_exporter_api_invalid_records_total names the field; `sitehost-exporter doctor` checks the log endpoints)";
    this.trouble = noteTrouble(this.trouble, "malformed", now, detail);
  }

  /**
   * The stream's rate: entries shipped over the time between reads, both summed with the older reads
   * weighing less and less (about the last ten reads count), so whole-second batches even out. It is
   * counted from the first read that ships something: before that the rate is none, and a stream
   * that wakes up after a long quiet is paced by what it ships, not diluted by the quiet.
   */
  private noteRate(shipped: number, now: number): void {
    const last = this.lastReadAtMs;
    this.lastReadAtMs = now;
    if (last === undefined || now <= last) return;
    if (!this.pace && shipped === 0) return;
    const pace = this.paceState();
    pace.rateShipped = pace.rateShipped * RATE_DECAY + shipped;
    pace.rateElapsedMs = pace.rateElapsedMs * RATE_DECAY + (now - last);
  }

  /** A read ships a page: to the shipper, made now if the stream holds none. */
  add(page: PreparedPage): Promise<void> {
    if (!this.shipper) {
      this.shipper = this.shipperFor(this.stored as StreamCheckpoint);
      this.shipper.begin(this.readStartedAt ?? this.opts.clock.now());
    }
    return this.shipper.add(page);
  }

  /** A read ends: what its shipper holds is sent and committed. */
  async flush(): Promise<void> {
    await this.shipper?.flush();
  }
}
