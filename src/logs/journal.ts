/**
 * Checkpoints on disk: per stream a snapshot (`site-<id>-<stream>.json`, written atomically: temporary
 * file, fsync, rename, directory fsync) and a journal beside it (`.journal`), so that what one export
 * costs on disk is proportional to the export, not to the overlap window.
 *
 * The journal holds one line per export: the checkpoint delta, appended and fsynced BEFORE the export
 * is sent (`prepare`), and a commit marker appended when the collector acknowledged it (`commit`: one
 * synchronous write, nothing else runs between the acknowledgement and it). Loading applies the
 * deltas that have a commit marker, in order, and ignores the rest: a delta whose export was never
 * acknowledged, and a torn last line. A process killed between an acknowledgement and its commit
 * marker ships that one export again at the next start (the records carry the same log.record.uid).
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

const writeAsync = promisify(write);
const datasyncAsync = promisify(fdatasync);
/** A journal this large (or larger than twice the snapshot) is folded into a new snapshot. */
const COMPACT_MIN_BYTES = 256 * 1024;

export interface PreparedDelta {
  readonly delta: CheckpointDelta;
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

/** Apply the committed deltas of a journal's text, in order; stop at a torn tail. */
function replayJournal(cp: Checkpoint, text: string, file: string): void {
  const pending = new Map<number, CheckpointDelta>();
  let at = 0;
  let lineNo = 0;
  while (at < text.length) {
    const end = text.indexOf("\n", at);
    if (end < 0) break; // a torn last line: its export was never committed
    const line = text.slice(at, end);
    at = end + 1;
    lineNo += 1;
    let record: { k?: unknown; s?: unknown; h?: unknown; a?: unknown; c?: unknown };
    try {
      record = JSON.parse(line) as typeof record;
    } catch {
      throw new CorruptCheckpointError(file, `line ${lineNo} is not valid JSON`);
    }
    if (typeof record.k === "number") {
      const delta = pending.get(record.k);
      // Commits older than the snapshot were folded into it already.
      if (record.k <= cp.seq) continue;
      if (!delta || record.k !== cp.seq + 1) {
        throw new CorruptCheckpointError(file, `line ${lineNo} commits record ${record.k} out of order`);
      }
      applyDelta(cp, delta);
      pending.delete(record.k);
    } else if (typeof record.s === "number" && typeof record.h === "number" && Array.isArray(record.a)) {
      pending.set(record.s, {
        seq: record.s,
        highWaterMs: record.h,
        add: record.a as CheckpointDelta["add"],
        counts: (record.c ?? {}) as Record<string, number>,
      });
    } else {
      throw new CorruptCheckpointError(file, `line ${lineNo} is neither a delta nor a commit`);
    }
  }
}

export class StreamCheckpoint {
  /** The journal, opened for appending. */
  private fd: number | undefined;
  private journalBytes = 0;
  private snapshotBytes = 0;
  private uncommitted = 0;
  private nextSeq: number;

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

  /** Write the state as the snapshot and start an empty journal. Only with nothing uncommitted. */
  async writeSnapshot(): Promise<void> {
    const text = serializeSnapshot(this.state);
    await writeFileAtomic(this.file, text);
    this.snapshotBytes = Buffer.byteLength(text);
    await this.closeJournal();
    await rm(this.journalFile, { force: true });
    this.journalBytes = 0;
  }

  private openJournal(): number {
    this.fd ??= openSync(this.journalFile, "a");
    return this.fd;
  }

  /**
   * Append a delta and make it durable; it is applied to `state` at once (dedupe treats records in
   * flight as delivered). Its export must then be committed, in the order prepared.
   */
  async prepare(make: (seq: number) => CheckpointDelta): Promise<PreparedDelta> {
    const delta = make(this.nextSeq++);
    const line = `${JSON.stringify({ s: delta.seq, h: delta.highWaterMs, a: delta.add, c: delta.counts })}\n`;
    const fd = this.openJournal();
    const bytes = Buffer.from(line, "utf8");
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
      this.nextSeq -= 1;
      throw err;
    }
    this.journalBytes += bytes.length;
    applyDelta(this.state, delta);
    prune(this.state, this.overlapMs);
    this.uncommitted += 1;
    return { delta };
  }

  /** The export of `prepared` was acknowledged: one synchronous append, no await before it returns. */
  commit(prepared: PreparedDelta): void {
    const line = `{"k":${prepared.delta.seq}}\n`;
    this.journalBytes += writeSync(this.fd as number, line);
    this.uncommitted -= 1;
  }

  get pending(): number {
    return this.uncommitted;
  }

  /** Fold the journal into a new snapshot once it has grown, when nothing is waiting for a commit. */
  async compactIfLarge(): Promise<void> {
    if (this.uncommitted > 0) return;
    if (this.journalBytes < Math.max(COMPACT_MIN_BYTES, 2 * this.snapshotBytes)) return;
    if (this.fd !== undefined) fsyncSync(this.fd);
    await this.writeSnapshot();
  }

  private async closeJournal(): Promise<void> {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  /**
   * Close the journal between reads, when no export waits for its commit (it reopens on the next
   * append): thousands of mostly idle streams would otherwise hold a descriptor each. No fsync: the
   * commit markers already rely on the kernel's page cache, which outlives the process.
   */
  release(): void {
    if (this.uncommitted > 0 || this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }

  /** Let go of the files (the checkpoint stays on disk). */
  async close(): Promise<void> {
    if (this.fd !== undefined && this.uncommitted === 0) fsyncSync(this.fd);
    await this.closeJournal();
  }
}
