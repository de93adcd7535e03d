/**
 * Checkpoints on disk: per stream a snapshot (`site-<id>-<stream>.json`, written atomically: temporary
 * file, fsync, rename, directory fsync) and a journal beside it (`.journal`, format in journalFile.ts),
 * so that what one export costs on disk is proportional to the export, not to the overlap window. The
 * journal's protocol (prepare before send, commit in order, quiet compaction) is StreamCheckpoint's,
 * in streamCheckpoint.ts.
 *
 * Loading applies the deltas that have a commit marker, in order, and ignores the rest: a delta
 * whose export was never acknowledged, and a torn last line. A process killed between an
 * acknowledgement and its commit marker ships that one export again at the next start (the records
 * carry the same log.record.uid).
 *
 * Loading, and `compact` once the journal has grown, write a fresh snapshot and start an empty
 * journal; the snapshot records the last delta it includes, so a journal left behind by a crash
 * during compaction is not applied twice.
 */
import { mkdir, readdir, readFile, rm, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { LogStream } from "../api/schemas.js";
import { type CheckpointFileKind, writeError, type WriteFailures } from "../ha/volume.js";
import { TMP_MARK } from "../util/atomicFile.js";
import {
  type Checkpoint,
  CorruptCheckpointError,
  newCheckpoint,
  parseSnapshot,
  prune,
  serializeSnapshot,
} from "./checkpoint.js";
import type { CheckpointMemory } from "./checkpointMemory.js";
import { journalFileOf, replayJournal } from "./journalFile.js";
import { CheckpointFencedError, type JournalWrites, StreamCheckpoint } from "./streamCheckpoint.js";

export {
  CheckpointFencedError,
  JournalProtocolError,
  type PreparedDelta,
  StreamCheckpoint,
} from "./streamCheckpoint.js";

export interface CheckpointStoreOptions {
  /** Where failed writes are reported (the daemon's CheckpointVolume). */
  failures?: WriteFailures;
  /** Why this process may not write under the directory now (it does not hold the lock), or undefined. */
  fence?: () => string | undefined;
  /** Epoch ms; a checkpoint's floor is never after it. */
  now?: () => number;
  /** A checkpoint's floor was after now (a future logs.startFrom of an earlier run) and was moved back. */
  floorRepaired?: (file: string, wasMs: number, nowMs: number) => void;
  /** Where streams closed while fenced leave their state, and missing files are resumed from. */
  memory?: CheckpointMemory;
  /** A stream's file was missing and it resumed from what this process last knew of it. */
  resumedFromMemory?: (file: string) => void;
}

export class CheckpointStore implements JournalWrites {
  private created: Promise<unknown> | undefined;
  private readonly now: () => number;

  constructor(
    readonly dir: string,
    private readonly opts: CheckpointStoreOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
  }

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

  /** Throws CheckpointFencedError when this process may not write here. */
  assertUnfenced(): void {
    const reason = this.opts.fence?.();
    if (reason !== undefined) throw new CheckpointFencedError(reason);
  }

  closedAcknowledged(state: Checkpoint): void {
    const { memory, fence } = this.opts;
    if (memory && fence?.() !== undefined) {
      memory.keep(this.fileFor(state.siteId, state.stream), serializeSnapshot(state));
    }
  }

  /** A failed write as a CheckpointWriteError, reported. */
  failed(kind: CheckpointFileKind, path: string, err: unknown): Error {
    if (err instanceof CheckpointFencedError) return err;
    const e = writeError(kind, path, err);
    this.opts.failures?.report(e);
    return e;
  }

  /**
   * The stream's checkpoint with its committed journal applied, or a new one starting at `floorMs`
   * (written at once, so a crash before the first export does not move the start point). Either
   * way the journal starts empty. A floor is never after now: a later one (a future logs.startFrom)
   * would hold back every entry until then, so it is moved back to now.
   */
  async open(
    siteId: number,
    stream: LogStream,
    floorMs: () => number,
    overlapMs: number,
  ): Promise<StreamCheckpoint> {
    await this.ensureDir();
    const file = this.fileFor(siteId, stream);
    const journalFile = journalFileOf(file);
    const remembered = this.opts.memory?.take(file);
    let text: string | undefined;
    try {
      text = await readFile(file, "utf8");
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "ENOENT") throw new CorruptCheckpointError(file, code ?? "read error");
      if (remembered !== undefined) {
        text = remembered;
        this.opts.resumedFromMemory?.(file);
      }
    }
    const now = Math.floor(this.now() / 1000) * 1000;
    let cp: Checkpoint;
    if (text === undefined) {
      cp = newCheckpoint(siteId, stream, Math.min(floorMs(), now));
    } else {
      cp = parseSnapshot(text, file, siteId, stream);
      replayJournal(cp, await readFile(journalFile, "utf8").catch(() => ""), journalFile);
      if (cp.floorMs > now) {
        this.opts.floorRepaired?.(file, cp.floorMs, now);
        // Nothing can have been delivered past a floor that is still ahead.
        if (cp.highWaterMs > now) cp.highWaterMs = now;
        cp.floorMs = now;
      }
    }
    prune(cp, overlapMs);
    const stream_ = new StreamCheckpoint(this, cp, text === undefined, overlapMs);
    await stream_.writeSnapshot();
    return stream_;
  }

  /** Remove a stream's checkpoint (snapshot and journal). */
  async remove(siteId: number, stream: LogStream): Promise<void> {
    const file = this.fileFor(siteId, stream);
    this.opts.memory?.take(file);
    await rm(file, { force: true });
    await rm(journalFileOf(file), { force: true });
  }
}
