/**
 * Checkpoints on disk: per stream a snapshot (`site-<id>-<stream>.json`, written atomically: temporary
 * file, fsync, rename, directory fsync) and a journal beside it (`.journal`, format in journalFile.ts),
 * so that what one export costs on disk is proportional to the export, not to the overlap window.
 *
 * The protocol is held by types and checks, not by its callers' care:
 * - `prepare` appends an export's delta and fsyncs it BEFORE the export is sent: what the export
 *   sends is handed back inside the PreparedDelta, the only way to reach it.
 * - A PreparedDelta ends in exactly one of two ways, in the order prepared (anything else throws
 *   JournalProtocolError at once): `commit()` once the collector acknowledged it and every earlier
 *   export (one synchronous append whose return value is the checkpoint as it now stands, so no
 *   `await` fits between the acknowledgement and the marker), or `abandon()` (shutdown).
 * - Compaction and releasing the journal's descriptor throw while a delta is outstanding.
 * Loading applies the deltas that have a commit marker, in order, and ignores the rest: a delta
 * whose export was never acknowledged, and a torn last line. A process killed between an
 * acknowledgement and its commit marker ships that one export again at the next start (the records
 * carry the same log.record.uid).
 *
 * Loading, and `compact` once the journal has grown, write a fresh snapshot and start an empty
 * journal; the snapshot records the last delta it includes, so a journal left behind by a crash
 * during compaction is not applied twice.
 */
import { closeSync, fdatasync, fsyncSync, ftruncateSync, openSync, write, writeSync } from "node:fs";
import { mkdir, readdir, readFile, rm, unlink } from "node:fs/promises";
import { promisify } from "node:util";
import { join } from "node:path";
import type { LogStream } from "../api/schemas.js";
import { TMP_MARK, writeFileAtomic } from "../util/atomicFile.js";
import {
  applyDelta,
  type Checkpoint,
  type CheckpointDelta,
  CorruptCheckpointError,
  newCheckpoint,
  parseSnapshot,
  prune,
  serializeSnapshot,
} from "./checkpoint.js";
import { commitLine, deltaLine, replayJournal } from "./journalFile.js";

const writeAsync = promisify(write);
const datasyncAsync = promisify(fdatasync);
/** A journal this large (or larger than twice the snapshot) is folded into a new snapshot. */
const COMPACT_MIN_BYTES = 256 * 1024;

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

export class CheckpointStore {
  private created: Promise<unknown> | undefined;

  constructor(readonly dir: string) {}

  /** Snapshot file of a stream; the account's own activity log uses site id 0. */
  fileFor(siteId: number, stream: LogStream): string {
    return join(this.dir, siteId === 0 ? `account-${stream}.json` : `site-${siteId}-${stream}.json`);
  }

  /** Create the directory and remove temporary files a killed process left behind (never in force). */
  async init(): Promise<void> {
    await this.ensureDir();
    for (const name of await readdir(this.dir)) {
      if (name.includes(TMP_MARK)) await unlink(join(this.dir, name)).catch(() => undefined);
    }
  }

  private ensureDir(): Promise<unknown> {
    this.created ??= mkdir(this.dir, { recursive: true });
    return this.created;
  }

  /** Whether the directory holds any checkpoint at all (a first start, or state that was lost). */
  async isEmpty(): Promise<boolean> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    return !names.some((n) => n.endsWith(".json") && (n.startsWith("site-") || n.startsWith("account-")));
  }

  /**
   * The stream's checkpoint with its committed journal applied, or a new one starting at `floorMs`
   * (written at once, so a crash before the first export does not move the start point). Either
   * way the journal starts empty.
   */
  async open(
    siteId: number,
    stream: LogStream,
    floorMs: () => number,
    overlapMs: number,
  ): Promise<StreamCheckpoint> {
    await this.ensureDir();
    const file = this.fileFor(siteId, stream);
    const journalFile = `${file.slice(0, -".json".length)}.journal`;
    let text: string | undefined;
    try {
      text = await readFile(file, "utf8");
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "ENOENT") throw new CorruptCheckpointError(file, code ?? "read error");
    }
    let cp: Checkpoint;
    if (text === undefined) {
      cp = newCheckpoint(siteId, stream, floorMs());
    } else {
      cp = parseSnapshot(text, file, siteId, stream);
      replayJournal(cp, await readFile(journalFile, "utf8").catch(() => ""), journalFile);
    }
    prune(cp, overlapMs);
    const stream_ = new StreamCheckpoint(this, cp, file, journalFile, text === undefined, overlapMs);
    await stream_.writeSnapshot();
    return stream_;
  }

  /** Remove a stream's checkpoint (snapshot and journal). */
  async remove(siteId: number, stream: LogStream): Promise<void> {
    const file = this.fileFor(siteId, stream);
    await rm(file, { force: true });
    await rm(`${file.slice(0, -".json".length)}.journal`, { force: true });
  }
}

/** The journal's own record of a prepared delta, oldest first. */
interface Outstanding {
  readonly seq: number;
}

export class StreamCheckpoint {
  /** The journal, opened for appending. */
  private fd: number | undefined;
  private journalBytes = 0;
  private snapshotBytes = 0;
  private nextSeq: number;
  /** Prepared and not yet committed or abandoned, in the order prepared. */
  private readonly outstanding: Outstanding[] = [];
  /** A prepare or compaction is writing: neither may start beside it. */
  private busy: "prepare" | "compact" | undefined;
  /** A delta was abandoned: the in-memory state is ahead of the disk. */
  private diverged = false;
  private closing = false;

  constructor(
    private readonly store: CheckpointStore,
    /** The checkpoint with every prepared delta applied (what dedupe must assume delivered). */
    readonly state: Checkpoint,
    readonly file: string,
    private readonly journalFile: string,
    /** True when the stream had no checkpoint before. */
    readonly created: boolean,
    /** Fingerprints older than the high-water mark minus this are forgotten as deltas apply. */
    private readonly overlapMs: number,
  ) {
    this.nextSeq = state.seq + 1;
  }

  /** Deltas prepared and not yet committed or abandoned. */
  get pending(): number {
    return this.outstanding.length;
  }

  /** Throws unless nothing is outstanding or being written (what compaction and release need). */
  private assertQuiet(what: string): void {
    if (this.outstanding.length > 0) {
      throw new JournalProtocolError(
        this.journalFile,
        `${what} while ${this.outstanding.length} prepared delta(s) wait for their commit`,
      );
    }
    if (this.busy) throw new JournalProtocolError(this.journalFile, `${what} during a ${this.busy}`);
  }

  /** Write the state as the snapshot and start an empty journal. Only with nothing outstanding. */
  async writeSnapshot(): Promise<void> {
    this.assertQuiet("a snapshot");
    this.busy = "compact";
    try {
      const text = serializeSnapshot(this.state);
      await writeFileAtomic(this.file, text);
      this.snapshotBytes = Buffer.byteLength(text);
      this.closeJournal();
      await rm(this.journalFile, { force: true });
      this.journalBytes = 0;
    } finally {
      this.busy = undefined;
      this.settled();
    }
  }

  private openJournal(): number {
    this.fd ??= openSync(this.journalFile, "a");
    return this.fd;
  }

  /**
   * Append the delta `make` builds and make it durable; it is applied to `state` at once (dedupe
   * treats records in flight as delivered). Returns the prepared delta, which carries `payload` (what
   * the export sends) and must be committed or abandoned, in the order prepared.
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
      await this.append(Buffer.from(deltaLine(delta), "utf8"));
    } catch (err) {
      this.busy = undefined;
      this.settled();
      throw err;
    }
    this.busy = undefined;
    this.nextSeq += 1;
    applyDelta(this.state, delta);
    prune(this.state, this.overlapMs);
    const entry: Outstanding = { seq: delta.seq };
    this.outstanding.push(entry);
    return {
      seq: delta.seq,
      payload,
      commit: () => this.commit(entry),
      abandon: () => this.abandon(entry),
    };
  }

  /** Append and fdatasync; on failure cut the journal back so no partial line is left. */
  private async append(bytes: Buffer): Promise<void> {
    const fd = this.openJournal();
    try {
      const { bytesWritten } = await writeAsync(fd, bytes);
      if (bytesWritten !== bytes.length)
        throw Object.assign(new Error("short write to the checkpoint journal"), { code: "ENOSPC" });
      await datasyncAsync(fd);
    } catch (err) {
      // Leave no partial line behind: the next line appended would be glued to it.
      try {
        ftruncateSync(fd, this.journalBytes);
      } catch {
        // the next open reads the journal afresh and ignores a torn tail
      }
      throw err;
    }
    this.journalBytes += bytes.length;
  }

  /** Throws unless `entry` is the oldest outstanding delta. */
  private assertOldest(entry: Outstanding, verb: string): void {
    const oldest = this.outstanding[0];
    if (oldest === entry) return;
    throw new JournalProtocolError(
      this.journalFile,
      this.outstanding.includes(entry)
        ? `delta ${entry.seq} ${verb} before delta ${(oldest as Outstanding).seq}, which was prepared first`
        : `delta ${entry.seq} ${verb} after it was committed or abandoned`,
    );
  }

  private commit(entry: Outstanding): Checkpoint {
    this.assertOldest(entry, "committed");
    this.journalBytes += writeSync(this.openJournal(), commitLine(entry.seq));
    this.outstanding.shift();
    this.settled();
    return this.state;
  }

  private abandon(entry: Outstanding): void {
    this.assertOldest(entry, "abandoned");
    this.outstanding.shift();
    this.diverged = true;
    this.settled();
  }

  /** A close waiting for the last outstanding delta goes ahead once it is settled. */
  private settled(): void {
    if (this.closing && this.outstanding.length === 0 && !this.busy) this.closeNow();
  }

  /** Fold the journal into a new snapshot once it has grown. Only with nothing outstanding. */
  async compactIfLarge(): Promise<void> {
    this.assertQuiet("compaction");
    if (this.journalBytes < Math.max(COMPACT_MIN_BYTES, 2 * this.snapshotBytes)) return;
    if (this.fd !== undefined) fsyncSync(this.fd);
    await this.writeSnapshot();
  }

  private closeJournal(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  /**
   * Close the journal between reads (it reopens on the next append): thousands of mostly idle
   * streams would otherwise hold a descriptor each. Only with nothing outstanding. No fsync: the
   * commit markers already rely on the kernel's page cache, which outlives the process.
   */
  release(): void {
    this.assertQuiet("release");
    this.closeJournal();
  }

  /**
   * Let go of the files (the checkpoint stays on disk); with deltas outstanding, once the last of
   * them is committed or abandoned.
   */
  async close(): Promise<void> {
    this.closing = true;
    if (this.outstanding.length === 0 && !this.busy) this.closeNow();
  }

  private closeNow(): void {
    if (this.fd !== undefined && !this.diverged) fsyncSync(this.fd);
    this.closeJournal();
  }
}
