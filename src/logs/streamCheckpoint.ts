/**
 * One stream's checkpoint in use: its state in memory and its journal, through which every export
 * passes. The protocol is held by types and checks, not by its callers' care:
 * - `prepare` appends an export's delta and fsyncs it BEFORE the export is sent: what the export
 *   sends is handed back inside the PreparedDelta, the only way to reach it.
 * - A PreparedDelta ends in exactly one of two ways, in the order prepared (anything else throws
 *   JournalProtocolError at once): `commit()` once the collector acknowledged it and every earlier
 *   export (one synchronous append whose return value is the checkpoint as it now stands, so no
 *   `await` fits between the acknowledgement and the marker), or `abandon()` (shutdown).
 * - Compaction and releasing the journal's descriptor throw while a delta is outstanding.
 * - Every write first checks the fence (the checkpoint lock is still this process's): a process that
 *   lost the lock writes nothing more, and sends nothing more (CheckpointFencedError).
 * - A write the volume refuses (full, read-only) is a CheckpointWriteError, reported: a delta that
 *   cannot be written is not sent; a commit marker that cannot be written stays owed in memory and is
 *   written before the next delta (the export was acknowledged: a process that dies meanwhile ships
 *   it again, like any kill between acknowledgement and marker).
 */
import { rm } from "node:fs/promises";
import type { LogStream } from "../api/schemas.js";
import type { CheckpointFileKind } from "../ha/volume.js";
import { writeFileAtomic } from "../util/atomicFile.js";
import { applyDelta, type Checkpoint, type CheckpointDelta, prune, serializeSnapshot } from "./checkpoint.js";
import type { OverlapWindow } from "./overlapWindow.js";
import { commitLine, deltaLine, JournalAppender, journalFileOf } from "./journalFile.js";

/** A journal this large (or larger than twice the snapshot) is folded into a new snapshot. */
const COMPACT_MIN_BYTES = 256 * 1024;

/** This process may not write under the checkpoint directory any more (it lost the lock). */
export class CheckpointFencedError extends Error {
  constructor(reason: string) {
    super(
      `the checkpoint lock on logs.checkpointDir is no longer held (${reason}); nothing more is written or shipped`,
    );
    this.name = "CheckpointFencedError";
  }
}

/** The journal's protocol was broken by its caller: a bug in the exporter, never a disk problem. */
export class JournalProtocolError extends Error {
  constructor(file: string, what: string) {
    super(`checkpoint journal ${file}: ${what}`);
    this.name = "JournalProtocolError";
  }
}

/**
 * An export's delta, appended to the journal and durable, whose export is not answered yet. What
 * the export sends (`payload`) is reachable only through it. It ends by `commit()` or `abandon()`,
 * called once, oldest outstanding first.
 */
export interface PreparedDelta<T> {
  readonly seq: number;
  readonly payload: T;
  /**
   * The export and every earlier one were acknowledged: append the commit marker (one synchronous
   * write) and return the checkpoint as it now stands.
   */
  commit(): Checkpoint;
  /**
   * The export will never be acknowledged (shutdown): it stays uncommitted on disk and is read
   * again at the next start. The in-memory checkpoint is then ahead of the disk, so this journal
   * takes no more deltas.
   */
  abandon(): void;
}

/** What a stream's journal needs of its store: file names, the fence, and where a failed write goes. */
export interface JournalWrites {
  /** Snapshot file of a stream (its journal is beside it). */
  fileFor(siteId: number, stream: LogStream): string;
  /** Throws CheckpointFencedError when this process may not write here. */
  assertUnfenced(): void;
  /** A failed write as an error to throw, reported (a CheckpointFencedError passes unchanged). */
  failed(kind: CheckpointFileKind, path: string, err: unknown): Error;
  /** A stream closed with its state acknowledged: kept in memory if this process may not write now. */
  closedAcknowledged?(state: Checkpoint): void;
}

const CREATED = 1;
const DIVERGED = 2;
const CLOSING = 4;
const PREPARING = 8;
const COMPACTING = 16;

/** The journal's own record of a prepared delta, oldest first. */
interface Outstanding {
  readonly seq: number;
}

/**
 * A stream's checkpoint in use: it is the checkpoint itself (Checkpoint, with every prepared delta
 * applied: what dedupe must assume delivered) and its journal. One per stream, thousands of streams,
 * so the state is this object's own fields rather than an object of its own.
 */
export class StreamCheckpoint implements Checkpoint {
  readonly siteId: number;
  readonly stream: LogStream;
  floorMs: number;
  highWaterMs: number;
  seq: number;
  recent: OverlapWindow;
  counts: Record<string, number>;
  /** The journal's file while this process has appended to it since the last snapshot (or holds it open). */
  private appender: JournalAppender | undefined;
  private snapshotBytes = 0;
  /**
   * Prepared and not yet committed or abandoned, in the order prepared; undefined when none (most
   * streams, most of the time: no array each).
   */
  private outstanding: Outstanding[] | undefined;
  /** Committed (acknowledged) deltas whose markers could not be written yet, oldest first; or undefined. */
  private owed: number[] | undefined;
  /** CREATED, DIVERGED, CLOSING and what is writing (PREPARING, COMPACTING), as bits (one field). */
  private flags: number;

  constructor(
    private readonly store: JournalWrites,
    /** The checkpoint as loaded (its fields become this one's). */
    loaded: Checkpoint,
    /** True when the stream had no checkpoint before. */
    created: boolean,
    /** Fingerprints older than the high-water mark minus this are forgotten as deltas apply. */
    private readonly overlapMs: number,
  ) {
    this.flags = created ? CREATED : 0;
    this.siteId = loaded.siteId;
    this.stream = loaded.stream;
    this.floorMs = loaded.floorMs;
    this.highWaterMs = loaded.highWaterMs;
    this.seq = loaded.seq;
    this.recent = loaded.recent;
    this.counts = loaded.counts;
  }

  /** True when the stream had no checkpoint before. */
  get created(): boolean {
    return (this.flags & CREATED) !== 0;
  }

  /** A delta was abandoned: the in-memory state is ahead of the disk. */
  private get diverged(): boolean {
    return (this.flags & DIVERGED) !== 0;
  }

  private get closing(): boolean {
    return (this.flags & CLOSING) !== 0;
  }

  /** A prepare or compaction is writing: neither may start beside it. */
  private get busy(): "prepare" | "compact" | undefined {
    if (this.flags & PREPARING) return "prepare";
    return this.flags & COMPACTING ? "compact" : undefined;
  }

  private set busy(what: "prepare" | "compact" | undefined) {
    this.flags &= ~(PREPARING | COMPACTING);
    if (what) this.flags |= what === "prepare" ? PREPARING : COMPACTING;
  }

  /** The checkpoint as it stands, with every prepared delta applied. */
  get state(): Checkpoint {
    return this;
  }

  /** The sequence number the next delta gets (the state's advances with each one prepared). */
  private get nextSeq(): number {
    return this.seq + 1;
  }

  /** The snapshot file (named when needed: thousands of streams would otherwise hold a name each). */
  get file(): string {
    return this.store.fileFor(this.state.siteId, this.state.stream);
  }

  /** The journal, opened for appending on first use. */
  private get journal(): JournalAppender {
    this.appender ??= new JournalAppender(journalFileOf(this.file));
    return this.appender;
  }

  private get journalFile(): string {
    return this.appender?.file ?? journalFileOf(this.file);
  }

  /** Deltas prepared and not yet committed or abandoned. */
  get pending(): number {
    return this.outstanding?.length ?? 0;
  }

  /** Commit markers owed to the journal (acknowledged, not yet on disk). */
  get owedMarkers(): number {
    return this.owed?.length ?? 0;
  }

  /** Throws unless nothing is outstanding or being written (what compaction and release need). */
  private assertQuiet(what: string): void {
    if (this.outstanding) {
      throw new JournalProtocolError(
        this.journalFile,
        `${what} while ${this.outstanding.length} prepared delta(s) wait for their commit`,
      );
    }
    if (this.busy) throw new JournalProtocolError(this.journalFile, `${what} during a ${this.busy}`);
  }

  /**
   * Write the state as the snapshot and start an empty journal (it then holds every owed marker's
   * delta). Only with nothing outstanding. Throws CheckpointWriteError (reported) when it cannot.
   */
  async writeSnapshot(): Promise<void> {
    this.assertQuiet("a snapshot");
    this.store.assertUnfenced();
    this.busy = "compact";
    try {
      const text = serializeSnapshot(this.state);
      try {
        this.appender?.sync();
        await writeFileAtomic(this.file, text);
      } catch (err) {
        throw this.store.failed("snapshot", this.file, err);
      }
      this.snapshotBytes = Buffer.byteLength(text);
      this.owed = undefined;
      this.appender?.close();
      // The snapshot is in force; a journal left behind is skipped at loading (its deltas are older).
      await rm(this.journalFile, { force: true }).then(
        () => (this.appender = undefined),
        (err: unknown) => this.store.failed("journal", this.journalFile, err),
      );
    } finally {
      this.busy = undefined;
      this.settled();
    }
  }

  /**
   * Append the delta `make` builds and make it durable; it is applied to `state` at once (dedupe
   * treats records in flight as delivered). Returns the prepared delta, which carries `payload` (what
   * the export sends) and must be committed or abandoned, in the order prepared. Throws
   * CheckpointFencedError or CheckpointWriteError (nothing then may be sent).
   */
  async prepare<T>(make: (seq: number) => CheckpointDelta, payload: T): Promise<PreparedDelta<T>> {
    if (this.busy) throw new JournalProtocolError(this.journalFile, `prepare during a ${this.busy}`);
    if (this.diverged || this.closing) {
      throw new JournalProtocolError(
        this.journalFile,
        this.diverged ? "prepare after a delta was abandoned (reopen the checkpoint)" : "prepare after close",
      );
    }
    const delta = make(this.nextSeq);
    if (delta.seq !== this.nextSeq) {
      throw new JournalProtocolError(this.journalFile, `delta ${delta.seq} prepared as ${this.nextSeq}`);
    }
    this.busy = "prepare";
    try {
      this.store.assertUnfenced();
      // Markers first: the journal's order is the commits' order.
      this.writeOwedMarkers();
      await this.journal.append(deltaLine(delta));
    } catch (err) {
      this.busy = undefined;
      this.settled();
      throw this.store.failed("journal", this.journalFile, err);
    }
    this.busy = undefined;
    applyDelta(this.state, delta);
    prune(this.state, this.overlapMs);
    const entry: Outstanding = { seq: delta.seq };
    (this.outstanding ??= []).push(entry);
    return {
      seq: delta.seq,
      payload,
      commit: () => this.commit(entry),
      abandon: () => this.abandon(entry),
    };
  }

  /** Throws unless `entry` is the oldest outstanding delta. */
  private assertOldest(entry: Outstanding, verb: string): void {
    const oldest = this.outstanding?.[0];
    if (oldest === entry) return;
    throw new JournalProtocolError(
      this.journalFile,
      this.outstanding?.includes(entry)
        ? `delta ${entry.seq} ${verb} before delta ${(oldest as Outstanding).seq}, which was prepared first`
        : `delta ${entry.seq} ${verb} after it was committed or abandoned`,
    );
  }

  private commit(entry: Outstanding): Checkpoint {
    this.assertOldest(entry, "committed");
    this.dropOldest();
    (this.owed ??= []).push(entry.seq);
    this.flushOwed();
    this.settled();
    return this.state;
  }

  private abandon(entry: Outstanding): void {
    this.assertOldest(entry, "abandoned");
    this.dropOldest();
    this.flags |= DIVERGED;
    this.settled();
  }

  /** The oldest outstanding delta (checked by assertOldest) is settled. */
  private dropOldest(): void {
    const outstanding = this.outstanding as Outstanding[];
    outstanding.shift();
    if (outstanding.length === 0) this.outstanding = undefined;
  }

  /** Append every owed marker, oldest first, in one synchronous write; throws when it cannot. */
  private writeOwedMarkers(): void {
    const owed = this.owed;
    if (!owed) return;
    this.store.assertUnfenced();
    this.journal.appendSync(owed.map(commitLine).join(""));
    this.owed = undefined;
  }

  /** Like writeOwedMarkers, but what cannot be written stays owed (a failed write is reported). */
  private flushOwed(): void {
    try {
      this.writeOwedMarkers();
    } catch (err) {
      this.store.failed("journal", this.journalFile, err);
    }
  }

  /** A close waiting for the last outstanding delta goes ahead once it is settled. */
  private settled(): void {
    if (this.closing && !this.outstanding && !this.busy) this.closeNow();
  }

  /**
   * Fold the journal into a new snapshot once it has grown. Only with nothing outstanding. A
   * snapshot that cannot be written is reported and the journal kept (tried again next time).
   */
  async compactIfLarge(): Promise<void> {
    this.assertQuiet("compaction");
    if ((this.appender?.size ?? 0) < Math.max(COMPACT_MIN_BYTES, 2 * this.snapshotBytes)) return;
    await this.writeSnapshot().catch(() => undefined);
  }

  /**
   * Close the journal between reads (it reopens on the next append): thousands of mostly idle
   * streams would otherwise hold a descriptor each. Only with nothing outstanding. No fsync: the
   * commit markers already rely on the kernel's page cache, which outlives the process.
   */
  release(): void {
    this.assertQuiet("release");
    this.appender?.close();
    // Nothing appended since the snapshot: nothing to remember of the file (idle streams hold none).
    if (this.appender?.size === 0) this.appender = undefined;
  }

  /**
   * Let go of the files (the checkpoint stays on disk); with deltas outstanding, once the last of
   * them is committed or abandoned.
   */
  async close(): Promise<void> {
    this.flags |= CLOSING;
    if (!this.outstanding && !this.busy) this.closeNow();
  }

  private closeNow(): void {
    this.flushOwed();
    // Diverged: the state holds an export never acknowledged, so it may not stand for the disk's.
    if (!this.diverged) this.store.closedAcknowledged?.(this.state);
    try {
      if (!this.diverged && this.appender?.isOpen) this.appender.sync();
    } catch (err) {
      this.store.failed("journal", this.journalFile, err);
    }
    this.appender?.close();
  }
}
