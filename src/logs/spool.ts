/**
 * What a newest-first read holds until it reaches the checkpoint: pages of new records (prepared:
 * already encoded), shipped oldest-first once the read is complete. Pages stay in memory while the
 * byte budget shared by all tailers allows (so memory stays bounded however large a backlog is); the
 * rest goes to one append-only spool file per read under `<checkpointDir>/.spool/`, read back with
 * positioned reads. The file is removed when the read ends, whatever way it ends, and at every start.
 */
import { closeSync, openSync, read, writev } from "node:fs";
import { mkdir, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { writeError } from "../ha/volume.js";
import { deserializePage, serializePage, type PreparedPage } from "./prepared.js";

const writevAsync = promisify(writev);
const readAsync = promisify(read);

/** Bytes of prepared records held in memory by all reads together. */
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

type Held = { page: PreparedPage } | { offset: number; length: number };

export class ReadBuffer {
  private readonly pages: Held[] = [];
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

  /** A page of new records (each page oldest first; pages added newest page first). */
  async add(page: PreparedPage): Promise<void> {
    if (page.count === 0) return;
    const size = page.bytes.length;
    if (this.budget.tryReserve(size)) {
      this.reserved += size;
      this.pages.push({ page });
      return;
    }
    const parts = serializePage(page);
    let length = 0;
    for (const part of parts) length += part.length;
    const file = this.file ?? join(this.spoolDir, `${this.name}.jsonl`);
    try {
      if (this.fd === undefined) {
        await mkdir(this.spoolDir, { recursive: true });
        this.file = file;
        this.fd = openSync(file, "a+");
      }
      const { bytesWritten } = await writevAsync(this.fd, parts);
      if (bytesWritten !== length) throw Object.assign(new Error("short write"), { code: "ENOSPC" });
    } catch (err) {
      // The read is abandoned and retried (the volume reports it and pauses shipping).
      throw writeError("spool", file, err);
    }
    this.pages.push({ offset: this.size, length });
    this.size += length;
  }

  /** The pages from the oldest records to the newest. */
  async *oldestFirst(): AsyncGenerator<PreparedPage> {
    for (let i = this.pages.length - 1; i >= 0; i--) {
      const held = this.pages[i] as Held;
      let page: PreparedPage;
      if ("page" in held) {
        page = held.page;
        this.budget.release(page.bytes.length);
        this.reserved -= page.bytes.length;
      } else {
        const bytes = Buffer.allocUnsafe(held.length);
        await readAsync(this.fd as number, bytes, 0, held.length, held.offset);
        page = deserializePage(bytes);
      }
      this.pages.length = i;
      yield page;
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

/**
 * Remove every spool file (at start: those of a process that did not end cleanly). One that cannot
 * be removed (a read-only volume) is left: it was never in force, only its space is lost.
 */
export async function clearSpool(spoolDir: string): Promise<void> {
  for (const name of await readdir(spoolDir).catch(() => [] as string[])) {
    await rm(join(spoolDir, name), { force: true, recursive: true }).catch(() => undefined);
  }
}
