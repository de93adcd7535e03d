/**
 * The durable queue of accepted webhook events: a record is on disk (written and fdatasync'ed)
 * before the platform is told it was accepted, and stays there until the OTLP collector has
 * acknowledged it. A webhook cannot be read again from the platform the way logs can, so this file,
 * not a checkpoint, is what makes a crash lose nothing.
 *
 * One append-only file, `<checkpointDir>/webhook-queue.jsonl`:
 * - `{"q":<seq>,"r":<record>}` per record. Requests arriving together share one write and one sync.
 * - `{"k":[<seq>,…]}` once the collector acknowledged those records; not synced (a marker lost in a
 *   crash ships its records again, with the same log.record.uid, for a downstream store to drop).
 * Opening reads the file back: records without a marker wait again, a torn last line (a write the
 * platform was never answered for) is dropped, and the file is rewritten with only what waits.
 * Once nothing waits and the file has grown, it is emptied; when it is mostly acknowledged lines it
 * is rewritten (temporary file, fsync, rename). Bounded: past `maxRecords` or `maxBytes` waiting
 * (counting records being written), enqueue fails with QueueFullError (the platform is answered 503
 * and retries). A write the volume refuses (full, read-only) fails the records being written with a
 * CheckpointWriteError (reported: the platform is answered 503 and retries); the file is opened again
 * at the next enqueue, so the queue works again by itself once the volume takes writes.
 */
import { closeSync, fdatasync, ftruncateSync, openSync, write } from "node:fs";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";
import type { OutgoingRecord } from "../logs/otlp/encode.js";
import { writeError, type WriteFailures } from "../ha/volume.js";
import { writeFileAtomic } from "../util/atomicFile.js";
import { ackLine, parseQueueFile, queueLine, type QueuedRecord } from "./queueFile.js";

export { parseQueueFile, type QueuedRecord } from "./queueFile.js";

const writeAsync = promisify(write);
const datasyncAsync = promisify(fdatasync);

export const QUEUE_FILE = "webhook-queue.jsonl";
/** An empty queue's file is truncated once it is larger than this. */
const EMPTY_COMPACT_BYTES = 1024 * 1024;
/** A file this large and four times what waits is rewritten with only what waits. */
const REWRITE_BYTES = 16 * 1024 * 1024;

export class QueueFullError extends Error {
  constructor(waiting: number) {
    super(`the webhook queue is full (${waiting} records wait for the OTLP collector)`);
    this.name = "QueueFullError";
  }
}

export interface QueueLimits {
  maxRecords: number;
  maxBytes: number;
}

export const DEFAULT_QUEUE_LIMITS: QueueLimits = { maxRecords: 10_000, maxBytes: 64 * 1024 * 1024 };

interface Incoming {
  entry: QueuedRecord;
  line: string;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class WebhookQueue {
  private fd: number | undefined;
  private size = 0;
  private nextSeq = 1;
  /** Durable and not yet acknowledged, oldest first (a Map keeps insertion order). */
  private readonly waiting = new Map<number, QueuedRecord>();
  private waitingBytes = 0;
  private incoming: Incoming[] = [];
  private incomingBytes = 0;
  /** Records taken from `incoming` and being written: they count against the limits too. */
  private writing = { records: 0, bytes: 0 };
  private opened = false;
  private flushQueued = false;
  /** Every file operation runs in this chain, one at a time. */
  private chain: Promise<unknown> = Promise.resolve();
  private readonly listeners = new Set<() => void>();

  constructor(
    readonly file: string,
    private readonly limits: QueueLimits = DEFAULT_QUEUE_LIMITS,
    /** Told the number of waiting records whenever it changes. */
    private readonly onDepth: (depth: number) => void = () => undefined,
    /** Where writes the volume refused are reported. */
    private readonly failures?: WriteFailures,
  ) {}

  /** Read what a previous run left waiting; returns how many records wait again. */
  async open(): Promise<{ replayed: number; skippedLines: number }> {
    const text = await readFile(this.file, "utf8").catch((err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return "";
      throw err;
    });
    const { records, skipped } = parseQueueFile(text);
    for (const r of records) {
      this.waiting.set(r.seq, r);
      this.waitingBytes += r.bytes;
      this.nextSeq = Math.max(this.nextSeq, r.seq + 1);
    }
    this.opened = true;
    // A volume that takes no writes now: what waits is shipped anyway, new events wait for it.
    await this.rewrite().catch(() => undefined);
    this.onDepth(this.waiting.size);
    return { replayed: records.length, skippedLines: skipped };
  }

  get depth(): number {
    return this.waiting.size;
  }

  /** Records taken for the write in progress (durable soon, not yet waiting). */
  get writingRecords(): number {
    return this.writing.records;
  }

  /** Called whenever records become available to ship. */
  onAvailable(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves once the record is durable; rejects when the queue is full or the disk write failed. */
  enqueue(record: OutgoingRecord): Promise<void> {
    if (!this.opened) return Promise.reject(new Error("the webhook queue is not open"));
    const count = this.waiting.size + this.incoming.length + this.writing.records;
    const seq = this.nextSeq;
    const line = queueLine(seq, record);
    const bytes = Buffer.byteLength(line);
    if (
      count >= this.limits.maxRecords ||
      this.waitingBytes + this.incomingBytes + this.writing.bytes + bytes > this.limits.maxBytes
    ) {
      return Promise.reject(new QueueFullError(this.waiting.size));
    }
    this.nextSeq += 1;
    return new Promise<void>((resolve, reject) => {
      this.incoming.push({ entry: { seq, record, bytes }, line, resolve, reject });
      this.incomingBytes += bytes;
      if (!this.flushQueued) {
        this.flushQueued = true;
        void this.serial(() => this.flushIncoming());
      }
    });
  }

  /** The oldest waiting records, up to `maxRecords` of them and about `maxBytes`. */
  oldest(maxRecords: number, maxBytes: number): QueuedRecord[] {
    const out: QueuedRecord[] = [];
    let bytes = 0;
    for (const entry of this.waiting.values()) {
      if (out.length >= maxRecords || (out.length > 0 && bytes + entry.bytes > maxBytes)) break;
      out.push(entry);
      bytes += entry.bytes;
    }
    return out;
  }

  /**
   * The collector took these records (or refused them for good): they leave the queue at once. Rejects
   * when the marker could not be written; the records are then shipped again after a restart.
   */
  acknowledge(seqs: readonly number[]): Promise<void> {
    const known = seqs.filter((s) => this.waiting.has(s));
    for (const s of known) {
      this.waitingBytes -= (this.waiting.get(s) as QueuedRecord).bytes;
      this.waiting.delete(s);
    }
    if (known.length === 0) return Promise.resolve();
    this.onDepth(this.waiting.size);
    return this.serial(async () => {
      if (this.fd === undefined) return;
      await this.append(Buffer.from(ackLine(known), "utf8"));
      await this.compact();
    });
  }

  /** Wait for file operations in progress and let go of the file (what waits stays on disk). */
  async close(): Promise<void> {
    await this.serial(async () => {
      this.opened = false;
      if (this.fd !== undefined) closeSync(this.fd);
      this.fd = undefined;
    });
  }

  private serial<T>(op: () => Promise<T>): Promise<T> {
    const next = this.chain.then(op);
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** One write and one sync for every record that arrived since the last one. */
  private async flushIncoming(): Promise<void> {
    this.flushQueued = false;
    const group = this.incoming;
    this.writing = { records: group.length, bytes: this.incomingBytes };
    this.incoming = [];
    this.incomingBytes = 0;
    if (group.length === 0) return;
    try {
      if (!this.opened) throw new Error("the webhook queue is closed");
      // Not open after a failed write or a failed start: open it again (a fresh file of what waits).
      if (this.fd === undefined) await this.rewrite();
      await this.append(Buffer.from(group.map((g) => g.line).join(""), "utf8"), true);
    } catch (err) {
      this.writing = { records: 0, bytes: 0 };
      for (const g of group) g.reject(err);
      return;
    }
    this.writing = { records: 0, bytes: 0 };
    for (const g of group) {
      this.waiting.set(g.entry.seq, g.entry);
      this.waitingBytes += g.entry.bytes;
      g.resolve();
    }
    this.onDepth(this.waiting.size);
    for (const listener of this.listeners) listener();
  }

  /** Append `bytes`; on failure cut the file back so no partial line is left to glue the next one to. */
  private async append(bytes: Buffer, sync = false): Promise<void> {
    const fd = this.fd as number;
    try {
      let at = 0;
      while (at < bytes.length) {
        const { bytesWritten } = await writeAsync(fd, bytes, at, bytes.length - at);
        if (bytesWritten <= 0) throw Object.assign(new Error("short write"), { code: "ENOSPC" });
        at += bytesWritten;
      }
      if (sync) await datasyncAsync(fd);
    } catch (err) {
      try {
        ftruncateSync(fd, this.size);
      } catch {
        // the next open drops a torn tail anyway
      }
      throw this.failed(err);
    }
    this.size += bytes.length;
  }

  private async compact(): Promise<void> {
    if (this.waiting.size === 0 && this.incoming.length === 0 && this.size > EMPTY_COMPACT_BYTES) {
      try {
        ftruncateSync(this.fd as number, 0);
        await datasyncAsync(this.fd as number);
      } catch (err) {
        throw this.failed(err);
      }
      this.size = 0;
    } else if (this.size > REWRITE_BYTES && this.size > 4 * this.waitingBytes) {
      await this.rewrite();
    }
  }

  /** Replace the file with one holding only the waiting records, atomically, and append to it. */
  private async rewrite(): Promise<void> {
    const text = [...this.waiting.values()].map((e) => queueLine(e.seq, e.record)).join("");
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    try {
      await writeFileAtomic(this.file, text);
      this.fd = openSync(this.file, "a");
    } catch (err) {
      throw this.failed(err);
    }
    this.size = Buffer.byteLength(text);
  }

  /** A failed write as a CheckpointWriteError, reported. */
  private failed(err: unknown): Error {
    const e = writeError("webhook_queue", this.file, err);
    this.failures?.report(e);
    return e;
  }
}
