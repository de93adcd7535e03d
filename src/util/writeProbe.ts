/**
 * Whether a directory takes writes now: the checkpoint volume's pause (src/ha/volume.ts) and the
 * configuration check (src/config/checkpointDir.ts) ask the same way.
 */
import { randomBytes } from "node:crypto";
import { open, unlink } from "node:fs/promises";
import { join } from "node:path";
import { TMP_MARK } from "./atomicFile.js";

/** Bytes the probe writes: enough to fail on a volume that cannot take a journal append. */
const PROBE_BYTES = 64 * 1024;

/**
 * Prove that `dir` takes writes now: a new file of PROBE_BYTES written, synced and removed (its name
 * carries the temporary mark, so one a killed process left is removed at the next start).
 */
export async function writeProbe(dir: string): Promise<void> {
  const file = join(
    dir,
    `.sitehost-exporter-probe${TMP_MARK}${process.pid}-${randomBytes(4).toString("hex")}`,
  );
  const handle = await open(file, "wx");
  try {
    await handle.writeFile(Buffer.alloc(PROBE_BYTES));
    await handle.sync();
  } finally {
    await handle.close();
    await unlink(file).catch(() => undefined);
  }
}
