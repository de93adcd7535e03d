/**
 * Durable checkpoints, one JSON file per (site, stream): the high-water time,
 * the fingerprints (with occurrence counts) delivered within the overlap
 * window below it, and the cumulative log-derived counts. Written atomically:
 * temporary file, fsync, rename, fsync of the directory.
 *
 * A delivery is committed in two steps so that a SIGKILL between the
 * collector's acknowledgement and the checkpoint write (the one way a record
 * can be shipped twice) has almost no window: the next checkpoint is written
 * and fsynced to a temporary file *before* the export (`prepare`), and the
 * acknowledgement only has to rename it into place (`commit`, one synchronous
 * system call).
 */
import { renameSync } from "node:fs";
import { mkdir, open, readdir, readFile, unlink } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import type { ScrollStream } from "../api/schemas.js";

export const CHECKPOINT_VERSION = 1;

const CheckpointFileSchema = z.strictObject({
  version: z.literal(CHECKPOINT_VERSION),
  siteId: z.number().int(),
  stream: z.enum(["php", "server"]),
  /** Entries older than this are never shipped (logs.startFrom at first start). */
  floorMs: z.number(),
  /** Time of the newest delivered entry (ms); equals floorMs before anything was delivered. */
  highWaterMs: z.number(),
  /** fingerprint → [occurrences delivered, entry time ms], entries within the overlap window. */
  recent: z.record(z.string(), z.tuple([z.number().int().min(1), z.number()])),
  /** Cumulative log-derived counts by counter key. */
  counts: z.record(z.string(), z.number().min(0)),
  updatedAt: z.string(),
});

type CheckpointFile = z.infer<typeof CheckpointFileSchema>;

/** A fingerprint delivered within the overlap window. */
export interface RecentEntry {
  /** Occurrences delivered. */
  n: number;
  /** Entry time, ms. */
  t: number;
  /** This entry as it appears in the file, cached: a checkpoint is written after every export. */
  json?: string;
}

/**
 * A checkpoint in memory: the file's fields, with `recent` as an insertion-ordered Map (delivery
 * order), so the overlap window is pruned from its oldest end and updated in place.
 */
export interface Checkpoint extends Omit<CheckpointFile, "recent"> {
  recent: Map<string, RecentEntry>;
}

/** Record `n` occurrences of `fp` at time `t` (moved to the newest end of the window). */
export function remember(cp: Checkpoint, fp: string, n: number, t: number): void {
  cp.recent.delete(fp);
  cp.recent.set(fp, { n, t });
}

/**
 * The file's bytes, written into `scratch` (replaced by a larger one when too small): `bytes` is a view
 * of `buffer`, the buffer to pass as scratch next time. A
 * checkpoint is written after every export, and its window can hold tens of thousands of
 * fingerprints: each entry is formatted once (cached) and copied, no text the size of the file is built.
 */
export function serializeCheckpoint(
  cp: Checkpoint,
  scratch: Buffer = Buffer.alloc(0),
): { bytes: Buffer; buffer: Buffer } {
  const { recent: _recent, ...rest } = cp;
  const head = JSON.stringify({ ...rest, updatedAt: new Date().toISOString() }).slice(0, -1);
  let size = Buffer.byteLength(head) + 16;
  for (const [fp, e] of cp.recent) size += (e.json ??= `${JSON.stringify(fp)}:[${e.n},${e.t}]`).length + 1;
  let buf = scratch;
  // Not from Node's shared pool: this buffer is kept and written again.
  if (buf.length < size) buf = Buffer.allocUnsafeSlow(Math.ceil(size * 1.25));
  let at = buf.write(head, 0, "utf8");
  at += buf.write(',"recent":{', at, "latin1");
  let first = true;
  for (const e of cp.recent.values()) {
    if (!first) buf[at++] = 0x2c; // ,
    first = false;
    // Fingerprints are hex and the numbers ASCII: latin1 writes them byte for byte.
    at += buf.write(e.json as string, at, "latin1");
  }
  at += buf.write("}}", at, "latin1");
  return { bytes: buf.subarray(0, at), buffer: buf };
}

export class CorruptCheckpointError extends Error {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(
      `checkpoint ${file} is unreadable (${reason}); this stream is stopped so nothing is shipped twice or skipped. ` +
        `To reset it, stop the exporter, delete the file, set logs.startFrom to where shipping should resume ` +
        `(for example -1h or a timestamp), and start again.`,
    );
    this.name = "CorruptCheckpointError";
  }
}

/** A checkpoint written and fsynced beside the real file, not yet in force. */
export interface PreparedCheckpoint {
  /**
   * Put it in force: one synchronous rename, so nothing else runs between an ack and this. The
   * returned promise is the directory's fsync (durability against power loss), which need not be awaited.
   */
  commit(): Promise<void>;
  /** The export it was prepared for failed: remove it. */
  discard(): Promise<void>;
}

const TMP_MARK = ".tmp-";
const SCRATCH_KEEP_BYTES = 64 * 1024;

export class CheckpointStore {
  private tmpCounter = 0;
  /** One write buffer per file, reused: a stream has one tailer, so never two writes of a file at once. */
  private readonly scratch = new Map<string, Buffer>();

  constructor(private readonly dir: string) {}

  fileFor(siteId: number, stream: ScrollStream): string {
    return join(this.dir, `site-${siteId}-${stream}.json`);
  }

  /** Create the directory and remove prepared files a killed process left behind (never in force). */
  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    for (const name of await readdir(this.dir)) {
      if (name.includes(TMP_MARK)) await unlink(join(this.dir, name)).catch(() => undefined);
    }
  }

  /** undefined when there is no checkpoint yet; throws CorruptCheckpointError when it cannot be trusted. */
  async load(siteId: number, stream: ScrollStream): Promise<Checkpoint | undefined> {
    const file = this.fileFor(siteId, stream);
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return undefined;
      throw new CorruptCheckpointError(file, code ?? "read error");
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      throw new CorruptCheckpointError(file, "not valid JSON");
    }
    if (
      typeof raw === "object" &&
      raw !== null &&
      (raw as { version?: unknown }).version !== CHECKPOINT_VERSION
    ) {
      throw new CorruptCheckpointError(
        file,
        `unknown version ${JSON.stringify((raw as { version?: unknown }).version)}`,
      );
    }
    const parsed = CheckpointFileSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new CorruptCheckpointError(
        file,
        `${issue?.path.join(".") || "content"}: ${issue?.message ?? "invalid"}`,
      );
    }
    if (parsed.data.siteId !== siteId || parsed.data.stream !== stream) {
      throw new CorruptCheckpointError(file, "it belongs to another site or stream");
    }
    // Oldest first, so the window prunes from its start (the file keeps delivery order too).
    const recent = Object.entries(parsed.data.recent)
      .map(([fp, [n, t]]) => [fp, { n, t }] as const)
      .sort((a, b) => a[1].t - b[1].t);
    return { ...parsed.data, recent: new Map(recent) };
  }

  /** Write and fsync the checkpoint to a temporary file; `commit` renames it into place. */
  async prepare(checkpoint: Checkpoint): Promise<PreparedCheckpoint> {
    const file = this.fileFor(checkpoint.siteId, checkpoint.stream);
    const tmp = `${file}${TMP_MARK}${process.pid}-${++this.tmpCounter}`;
    const handle = await open(tmp, "w");
    try {
      const { bytes, buffer } = serializeCheckpoint(checkpoint, this.scratch.get(file));
      // Worth keeping only for a large window; a small checkpoint is cheap to build anew.
      if (buffer.length >= SCRATCH_KEEP_BYTES) this.scratch.set(file, buffer);
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    let done = false;
    return {
      commit: () => {
        if (done) return Promise.resolve();
        done = true;
        renameSync(tmp, file);
        // Durability of the rename itself (power loss, not a process kill): the directory's fsync.
        return this.syncDir();
      },
      discard: async () => {
        if (done) return;
        done = true;
        await unlink(tmp).catch(() => undefined);
      },
    };
  }

  async save(checkpoint: Checkpoint): Promise<void> {
    await (await this.prepare(checkpoint)).commit();
  }

  private async syncDir(): Promise<void> {
    try {
      const dir = await open(this.dir, "r");
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
    } catch {
      // Some filesystems refuse fsync on a directory; the rename is still atomic.
    }
  }

  /** The stream's tailer stopped: let go of its write buffer (the file stays). */
  release(siteId: number, stream: ScrollStream): void {
    this.scratch.delete(this.fileFor(siteId, stream));
  }

  async remove(siteId: number, stream: ScrollStream): Promise<void> {
    this.release(siteId, stream);
    await unlink(this.fileFor(siteId, stream)).catch(() => undefined);
  }
}

export function newCheckpoint(siteId: number, stream: ScrollStream, floorMs: number): Checkpoint {
  return {
    version: CHECKPOINT_VERSION,
    siteId,
    stream,
    floorMs,
    highWaterMs: floorMs,
    recent: new Map(),
    counts: {},
    updatedAt: new Date().toISOString(),
  };
}
