/**
 * The lock's directory, `<checkpointDir>/lock/`: one file per generation, `<generation>.json`; the
 * highest generation is the lock.
 * - A generation is created whole or not at all: its content is written to a temporary file, synced,
 *   and hard-linked to its name (a link fails with EEXIST when the name exists, so of two contenders
 *   exactly one succeeds, and nobody ever sees a created generation empty). A failed creation removes
 *   its temporary file.
 * - The holder keeps its file open and rewrites it in place, padded to one fixed length, so a
 *   heartbeat writes only into the file this process created: if the name now belongs to another
 *   file (the directory was deleted and recreated, another exporter took the name), its writes go
 *   to its own file, never to the other one, and `checkOwn` says so. A rewrite needs no new space.
 * - Names are parsed safely: a generation that is not a safe integer below 2^53 - 1 (or has leading
 *   zeros) is never taken for a lock; it is reported as absurd for the caller to judge.
 */
import { fstatSync, readdirSync, statSync } from "node:fs";
import { link, mkdir, open, readdir, readFile, unlink, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { TMP_MARK } from "../util/atomicFile.js";
import type { LockHolder } from "./lockHolder.js";

const NAME = /^(\d+)\.json$/;

/** The largest generation that can be claimed and still have a next one. */
export const MAX_GENERATION = Number.MAX_SAFE_INTEGER - 1;

/** A generation file's number, or undefined when the name is not one (or an absurd one). */
export function generationOf(name: string): number | undefined {
  const m = NAME.exec(name);
  if (!m) return undefined;
  const digits = m[1] as string;
  const n = Number(digits);
  return Number.isSafeInteger(n) && n >= 1 && n <= MAX_GENERATION && String(n) === digits ? n : undefined;
}

/** What the directory holds: the highest generation (0 when none) and names that look like generations but are not. */
export interface GenerationListing {
  top: number;
  absurd: string[];
}

/** A generation this process created and holds open. */
export interface OwnGeneration {
  generation: number;
  handle: FileHandle;
  /** Every rewrite has this length (padded), so it fits where the first one was. */
  size: number;
}

function render(holder: LockHolder): string {
  return JSON.stringify(holder, null, 2) + "\n";
}

export class GenerationFiles {
  private tmpCounter = 0;

  constructor(
    readonly dir: string,
    /** Marks this process's temporary files, so it never removes another's. */
    private readonly owner: string,
  ) {}

  async ensureDir(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
  }

  fileOf(generation: number): string {
    return join(this.dir, `${generation}.json`);
  }

  async list(): Promise<GenerationListing> {
    return listing(await readdir(this.dir));
  }

  /** A generation's text; undefined when it is gone. */
  async read(generation: number): Promise<string | undefined> {
    try {
      return await readFile(this.fileOf(generation), "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw err;
    }
  }

  /**
   * Create a generation, durably and whole; undefined when it exists already (another contender won
   * it). The file stays open: it is this process's from now on.
   */
  async create(holder: LockHolder): Promise<OwnGeneration | undefined> {
    const file = this.fileOf(holder.generation);
    const tmp = `${file}${TMP_MARK}${this.owner}-${++this.tmpCounter}`;
    // Room for the released mark a graceful stop adds.
    const size = Buffer.byteLength(render({ ...holder, released: true }));
    let handle: FileHandle | undefined;
    try {
      handle = await open(tmp, "w+");
      await handle.writeFile(render(holder).padEnd(size));
      await handle.sync();
      await link(tmp, file);
    } catch (err) {
      await handle?.close().catch(() => undefined);
      if ((err as NodeJS.ErrnoException).code === "EEXIST") return undefined;
      throw err;
    } finally {
      await unlink(tmp).catch(() => undefined);
    }
    return { generation: holder.generation, handle: handle as FileHandle, size };
  }

  /** Rewrite the content of this process's own generation in place. */
  async rewrite(own: OwnGeneration, holder: LockHolder): Promise<void> {
    const bytes = Buffer.from(render(holder).padEnd(own.size));
    const { bytesWritten } = await own.handle.write(bytes, 0, bytes.length, 0);
    if (bytesWritten !== bytes.length) throw Object.assign(new Error("short write"), { code: "ENOSPC" });
  }

  /**
   * Why `own` is no longer the lock, or undefined while it is: its name must still be its file (same
   * device and inode) and no later generation may exist. Synchronous: it runs before every write.
   */
  checkOwn(own: OwnGeneration): string | undefined {
    const file = this.fileOf(own.generation);
    let named;
    try {
      named = statSync(file);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      return code === "ENOENT"
        ? `its lock file ${file} is gone (was the checkpoint directory deleted?)`
        : `its lock file ${file} cannot be checked (${code ?? String(err)})`;
    }
    const mine = fstatSync(own.handle.fd);
    if (named.ino !== mine.ino || named.dev !== mine.dev) {
      return `its lock file ${file} is now another exporter's (was the checkpoint directory recreated?)`;
    }
    const { top } = listing(readdirSync(this.dir));
    if (top > own.generation) return `another exporter took over the checkpoint lock (generation ${top})`;
    return undefined;
  }

  /** Remove one file by name (an absurd generation); gone already is fine. */
  async removeName(name: string): Promise<void> {
    await unlink(join(this.dir, name)).catch(() => undefined);
  }

  /** Earlier generations, and temporary files other (killed) processes left behind. */
  async removeOlderThan(generation: number): Promise<void> {
    for (const name of await readdir(this.dir)) {
      const g = generationOf(name);
      const old = g !== undefined ? g < generation : name.includes(TMP_MARK) && !name.includes(this.owner);
      if (old) await unlink(join(this.dir, name)).catch(() => undefined);
    }
  }
}

function listing(names: readonly string[]): GenerationListing {
  let top = 0;
  const absurd: string[] = [];
  for (const name of names) {
    const g = generationOf(name);
    if (g !== undefined) top = Math.max(top, g);
    else if (NAME.test(name)) absurd.push(name);
  }
  return { top, absurd: absurd.sort() };
}
