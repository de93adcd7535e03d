/**
 * Whether the checkpoint directory can be used, checked when the configuration is loaded: the
 * log tailers would otherwise find out only after the daemon started (and Node's recursive mkdir
 * never returns for a path under /proc).
 */
import { randomBytes } from "node:crypto";
import { mkdir, rmdir, stat, unlink, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";

const REASONS: Record<string, string> = {
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EROFS: "read-only file system",
  ENOTDIR: "a part of the path is not a directory",
  ENOSPC: "no space left on the device",
  EDQUOT: "disk quota exceeded",
  // mkdir in an existing directory that refuses new entries (/proc, /sys).
  ENOENT: "this file system does not allow creating it",
};

function reason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code ?? "error";
  return REASONS[code] ? `${REASONS[code]}, ${code}` : code;
}

async function isDirectory(path: string): Promise<boolean | undefined> {
  try {
    return (await stat(path)).isDirectory();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // ENOTDIR: a parent is a file; the walk up finds and names it.
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw err;
  }
}

/** The path itself, or the nearest ancestor that exists, and the missing components below it. */
async function nearestExisting(path: string): Promise<{ existing: string; missing: string[] }> {
  const missing: string[] = [];
  let current = path;
  for (;;) {
    if ((await isDirectory(current)) !== undefined) return { existing: current, missing };
    const parent = dirname(current);
    if (parent === current) return { existing: current, missing };
    missing.unshift(current);
    current = parent;
  }
}

/** Another process created the directory between the look and the mkdir: fine. */
async function mkdirRace(err: unknown, path: string): Promise<void> {
  if ((err as NodeJS.ErrnoException).code !== "EEXIST" || !(await isDirectory(path))) throw err;
}

/** Creates and removes a file (or, with `dir`, a directory) to prove that `parent` takes new entries. */
async function probe(parent: string, kind: "file" | "dir"): Promise<void> {
  const name = join(parent, `.sitehost-exporter-probe-${process.pid}-${randomBytes(4).toString("hex")}`);
  if (kind === "dir") {
    await mkdir(name);
    await rmdir(name);
  } else {
    await writeFile(name, "", { flag: "wx" });
    await unlink(name);
  }
}

/**
 * Why the checkpoint directory is unusable, or undefined. `create` (the daemon) creates the
 * directory and its missing parents; `probe` (check-config) leaves the file system as it found it,
 * proving with a short-lived probe entry that the directory, or its nearest existing parent, is writable.
 */
export async function checkpointDirProblem(
  dir: string,
  mode: "create" | "probe",
  key = "logs.checkpointDir",
): Promise<string | undefined> {
  const full = resolve(dir);
  const expected = "a writable directory (it holds the log checkpoints and must survive restarts)";
  let where: { existing: string; missing: string[] };
  try {
    where = await nearestExisting(full);
  } catch (err) {
    return `${key}: cannot inspect ${full} (${reason(err)}); expected ${expected}`;
  }
  if (!(await isDirectory(where.existing).catch(() => false)))
    return `${key}: ${where.existing} is not a directory; expected ${expected}`;
  try {
    if (where.missing.length === 0) {
      await probe(full, "file");
    } else if (mode === "probe") {
      await probe(where.existing, "dir");
    } else {
      // One level at a time: mkdir({ recursive: true }) loops forever where the kernel answers ENOENT.
      for (const path of where.missing) await mkdir(path).catch((err: unknown) => mkdirRace(err, path));
      await probe(full, "file");
    }
  } catch (err) {
    const what = where.missing.length === 0 ? `cannot write in ${full}` : `cannot create ${full}`;
    return `${key}: ${what} (${reason(err)}); expected ${expected}`;
  }
  return undefined;
}
