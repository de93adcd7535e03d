/**
 * The checkpoint journal's file: one JSON object a line, `{"s":<seq>,"h":<high-water ms>,"a":[…],
 * "c":{…}}` for a delta appended before its export is sent, `{"k":<seq>}` for its commit marker.
 * Replaying applies, in order, the deltas that have a marker and ignores the rest (an export never
 * acknowledged, a torn last line). Appends are whole lines or nothing.
 */
import { closeSync, fdatasync, fsyncSync, ftruncateSync, openSync, write, writeSync } from "node:fs";
import { promisify } from "node:util";
import { applyDelta, type Checkpoint, type CheckpointDelta, CorruptCheckpointError } from "./checkpoint.js";

const writeAsync = promisify(write);
const datasyncAsync = promisify(fdatasync);

/** The journal beside a snapshot file (`site-1-server.json` → `site-1-server.journal`). */
export function journalFileOf(snapshotFile: string): string {
  return `${snapshotFile.slice(0, -".json".length)}.journal`;
}

export function deltaLine(delta: CheckpointDelta): string {
  return `${JSON.stringify({ s: delta.seq, h: delta.highWaterMs, a: delta.add, c: delta.counts })}\n`;
}

export function commitLine(seq: number): string {
  return `{"k":${seq}}\n`;
}

/** Apply the committed deltas of a journal's text, in order; stop at a torn tail. */
export function replayJournal(cp: Checkpoint, text: string, file: string): void {
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

/**
 * The journal file, opened for appending on first use. Every append is whole or not at all: a
 * failed or short write is cut back, so no partial line is left for the next one to be glued to.
 */
export class JournalAppender {
  private fd: number | undefined;
  /** Bytes in the file as this process wrote it. */
  size = 0;

  constructor(readonly file: string) {}

  get isOpen(): boolean {
    return this.fd !== undefined;
  }

  private open(): number {
    this.fd ??= openSync(this.file, "a");
    return this.fd;
  }

  /** Append and fdatasync (a delta: durable before its export is sent). */
  async append(text: string): Promise<void> {
    const bytes = Buffer.from(text, "utf8");
    const fd = this.open();
    try {
      const { bytesWritten } = await writeAsync(fd, bytes);
      if (bytesWritten !== bytes.length) throw shortWrite();
      await datasyncAsync(fd);
    } catch (err) {
      this.cutBack(fd);
      throw err;
    }
    this.size += bytes.length;
  }

  /** Append with one synchronous write, no sync (commit markers rely on the page cache). */
  appendSync(text: string): void {
    const fd = this.open();
    try {
      const written = writeSync(fd, text);
      if (written !== Buffer.byteLength(text)) throw shortWrite();
      this.size += written;
    } catch (err) {
      this.cutBack(fd);
      throw err;
    }
  }

  private cutBack(fd: number): void {
    try {
      ftruncateSync(fd, this.size);
    } catch {
      // the next open reads the journal afresh and ignores a torn tail
    }
  }

  /** fsync what was appended (before a snapshot replaces the journal, or at close). */
  sync(): void {
    if (this.fd !== undefined) fsyncSync(this.fd);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

function shortWrite(): Error {
  return Object.assign(new Error("short write to the checkpoint journal"), { code: "ENOSPC" });
}
