/**
 * Replacing a file whole, atomically and durably: written to a temporary file beside it (named
 * `<file>.tmp-<pid>-<n>`, which the checkpoint store removes at start if a killed process left one),
 * fsynced, renamed over the file, and the directory fsynced so the rename itself survives a crash.
 */
import { open, rename, unlink } from "node:fs/promises";
import { dirname } from "node:path";

/** What marks a temporary file as never in force. */
export const TMP_MARK = ".tmp-";

let tmpCounter = 0;

export async function writeFileAtomic(file: string, text: string): Promise<void> {
  const tmp = `${file}${TMP_MARK}${process.pid}-${++tmpCounter}`;
  const handle = await open(tmp, "w");
  try {
    await handle.writeFile(text);
    await handle.sync();
  } catch (err) {
    await handle.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await handle.close();
  await rename(tmp, file);
  await syncDir(dirname(file));
}

export async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Some filesystems refuse fsync on a directory; the rename is still atomic.
  }
}
