/**
 * Whether the checkpoint directory can be used, checked when the configuration is loaded: the
 * log tailers would otherwise find out only after the daemon started (and Node's recursive mkdir
 * never returns for a path under /proc). A directory that exists but cannot take writes right now
 * (a full or read-only volume) is a warning, not a problem: the daemon starts, serves its metrics,
 * stands by and reports it, and starts shipping by itself once the volume takes writes.
 */
import { randomBytes } from "node:crypto";
import { mkdir, rmdir, stat } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { writeProbe } from "../util/writeProbe.js";

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

/** Creates and removes a directory to prove that `parent` takes new entries. */
async function probeDir(parent: string): Promise<void> {
  const name = join(parent, `.sitehost-exporter-probe-${process.pid}-${randomBytes(4).toString("hex")}`);
  await mkdir(name);
  await rmdir(name);
}

/** Codes of a volume that cannot take writes for now, but may again (space freed, remounted). */
const PASSING = new Set(["ENOSPC", "EDQUOT", "EROFS"]);

export interface CheckpointDirCheck {
  /** The directory cannot be used: the daemon does not start. */
  problem?: string;
  /** The directory cannot take writes now: the daemon starts and stands by until it can. */
  warning?: string;
}

/**
 * Whether the checkpoint directory is usable. `create` (the daemon) creates the directory and its
 * missing parents; `probe` (check-config) leaves the file system as it found it, proving with a
 * short-lived probe entry that the directory, or its nearest existing parent, is writable.
 */
export async function checkCheckpointDir(
  dir: string,
  mode: "create" | "probe",
  key = "logs.checkpointDir",
): Promise<CheckpointDirCheck> {
  const problem = (text: string): CheckpointDirCheck => ({ problem: text });
  const full = resolve(dir);
  const expected = "a writable directory (it holds the log checkpoints and must survive restarts)";
  let where: { existing: string; missing: string[] };
  try {
    where = await nearestExisting(full);
  } catch (err) {
    return problem(`${key}: cannot inspect ${full} (${reason(err)}); expected ${expected}`);
  }
  if (!(await isDirectory(where.existing).catch(() => false)))
    return problem(`${key}: ${where.existing} is not a directory; expected ${expected}`);
  const existed = where.missing.length === 0;
  try {
    if (existed) {
      await writeProbe(full);
    } else if (mode === "probe") {
      await probeDir(where.existing);
    } else {
      // One level at a time: mkdir({ recursive: true }) loops forever where the kernel answers ENOENT.
      for (const path of where.missing) await mkdir(path).catch((err: unknown) => mkdirRace(err, path));
      await writeProbe(full);
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "";
    if (existed && PASSING.has(code)) {
      return {
        warning:
          `${key}: ${full} cannot take writes now (${reason(err)}); the exporter starts, serves its ` +
          "metrics and stands by (no log shipping) until it can",
      };
    }
    const what = existed ? `cannot write in ${full}` : `cannot create ${full}`;
    return problem(`${key}: ${what} (${reason(err)}); expected ${expected}`);
  }
  return {};
}
