/**
 * The lock's directory, `<checkpointDir>/lock/`: one file per generation, `<generation>.json`; the
 * highest generation is the lock. A generation is created with O_EXCL (of two contenders exactly one
 * succeeds), rewritten atomically (temporary file and rename), and older ones are removed once a
 * newer one is confirmed.
 */
import { mkdir, open, readdir, readFile, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { TMP_MARK } from "../util/atomicFile.js";
import type { LockHolder } from "./lockHolder.js";

const NAME = /^(\d+)\.json$/;

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

  private fileOf(generation: number): string {
    return join(this.dir, `${generation}.json`);
  }

  /** The highest generation present; 0 when there is none. */
  async highest(): Promise<number> {
    let top = 0;
    for (const name of await readdir(this.dir)) {
      const m = NAME.exec(name);
      if (m) top = Math.max(top, Number(m[1]));
    }
    return top;
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

  /** Create a generation, durably; false when it exists already (another contender won it). */
  async create(holder: LockHolder): Promise<boolean> {
    let file;
    try {
      file = await open(this.fileOf(holder.generation), "wx");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw err;
    }
    try {
      await file.writeFile(JSON.stringify(holder, null, 2) + "\n");
      await file.sync();
    } finally {
      await file.close();
    }
    return true;
  }

  /** Rewrite a generation atomically. */
  async write(holder: LockHolder): Promise<void> {
    const file = this.fileOf(holder.generation);
    const tmp = `${file}${TMP_MARK}${this.owner}-${++this.tmpCounter}`;
    const handle = await open(tmp, "w");
    try {
      await handle.writeFile(JSON.stringify(holder, null, 2) + "\n");
    } finally {
      await handle.close();
    }
    await rename(tmp, file);
  }

  /** Earlier generations, and temporary files other (killed) processes left behind. */
  async removeOlderThan(generation: number): Promise<void> {
    for (const name of await readdir(this.dir)) {
      const m = NAME.exec(name);
      const old = m ? Number(m[1]) < generation : name.includes(TMP_MARK) && !name.includes(this.owner);
      if (old) await unlink(join(this.dir, name)).catch(() => undefined);
    }
  }
}
