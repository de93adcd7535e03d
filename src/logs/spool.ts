/**
 * What a newest-first read holds until it reaches the checkpoint: pages of new entries, shipped
 * oldest-first once the read is complete. Pages stay in memory while the budget shared by all tailers
 * allows (so memory stays bounded however large a backlog is); the rest goes to one append-only spool
 * file per read under `<checkpointDir>/.spool/`, read back with positioned reads. The file is removed
 * when the read ends, whatever way it ends, and at every start.
 */
import { closeSync, openSync, read, write } from "node:fs";
import { mkdir, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import type { PendingRecord } from "./pending.js";

const writeAsync = promisify(write);
const readAsync = promisify(read);

/** Entries held in memory by all reads together. */
export class BufferBudget {
  private used = 0;
  constructor(readonly limit: number) {}
  tryReserve(n: number): boolean {
    if (this.used + n > this.limit) return false;
    this.used += n;
    return true;
  }
  release(n: number): void {
    this.used = Math.max(0, this.used - n);
  }
  get inUse(): number {
    return this.used;
  }
}

/** A spool write failed (no space left, a read-only volume): the read cannot go on. */
export class SpoolError extends Error {
  constructor(file: string, cause: unknown) {
    const code = (cause as NodeJS.ErrnoException).code;
    super(
      `cannot spool log entries to ${file} (${code === "ENOSPC" ? "no space left on the device" : (code ?? String(cause))}); ` +
        "the read is abandoned and retried; free space under logs.checkpointDir",
      { cause },
    );
    this.name = "SpoolError";
  }
}

type Held<T> = { records: T[] } | { offset: number; length: number };

export class ReadBuffer<T extends PendingRecord = PendingRecord> {
  private readonly pages: Array<Held<T>> = [];
  private reserved = 0;
  private fd: number | undefined;
  private size = 0;
  private file: string | undefined;

  constructor(
    private readonly spoolDir: string,
    private readonly name: string,
    private readonly budget: BufferBudget,
  ) {}

  get pageCount(): number {
    return this.pages.length;
  }

  /** A page of new entries, in the order the read met them (newest first). */
  async add(records: T[]): Promise<void> {
    if (records.length === 0) return;
    if (this.budget.tryReserve(records.length)) {
      this.reserved += records.length;
      this.pages.push({ records });
      return;
    }
    const line = Buffer.from(`${JSON.stringify(records)}\n`, "utf8");
    const file = this.file ?? join(this.spoolDir, `${this.name}.jsonl`);
    try {
      if (this.fd === undefined) {
        await mkdir(this.spoolDir, { recursive: true });
        this.file = file;
        this.fd = openSync(file, "a+");
      }
      const { bytesWritten } = await writeAsync(this.fd, line);
      if (bytesWritten !== line.length) throw Object.assign(new Error("short write"), { code: "ENOSPC" });
    } catch (err) {
      throw new SpoolError(file, err);
    }
    this.pages.push({ offset: this.size, length: line.length });
    this.size += line.length;
  }

  /** The pages from the oldest entries to the newest, each page oldest first. */
  async *oldestFirst(): AsyncGenerator<T[]> {
    for (let i = this.pages.length - 1; i >= 0; i--) {
      const page = this.pages[i] as Held<T>;
      let records: T[];
      if ("records" in page) {
        records = page.records;
        this.budget.release(records.length);
        this.reserved -= records.length;
      } else {
        const bytes = Buffer.allocUnsafe(page.length);
        await readAsync(this.fd as number, bytes, 0, page.length, page.offset);
        records = JSON.parse(bytes.toString("utf8")) as T[];
      }
      this.pages[i] = { records: [] };
      yield records.reverse();
    }
  }

  /** Release the memory and remove the spool file. */
  async discard(): Promise<void> {
    this.budget.release(this.reserved);
    this.reserved = 0;
    this.pages.length = 0;
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    if (this.file) await rm(this.file, { force: true });
    this.file = undefined;
    this.size = 0;
  }
}

/** Remove every spool file (at start: those of a process that did not end cleanly). */
export async function clearSpool(spoolDir: string): Promise<void> {
  for (const name of await readdir(spoolDir).catch(() => [] as string[])) {
    await rm(join(spoolDir, name), { force: true, recursive: true });
  }
}
