/**
 * Test helper: a small real filesystem mounted on a temporary directory, to fill up (ENOSPC) or
 * break into read-only mode (EROFS) under the code being tested: the kernel's faults, not a
 * simulation. A tmpfs fills up; an ext4 image on a loop device mounted with errors=remount-ro turns
 * read-only for every writer, open descriptors included, when ext4's own fault trigger fires
 * (`/sys/fs/ext4/<dev>/trigger_fs_error`), and is repaired by mounting it afresh.
 *
 * Mounting needs root (CAP_SYS_ADMIN); without it `TMPFS_UNAVAILABLE` / `EXT4_UNAVAILABLE` say why
 * and the tests that need them are skipped.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmdirSync } from "node:fs";
import { mkdtemp, open, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";

function run(cmd: string, args: string[]): void {
  execFileSync(cmd, args, { stdio: ["ignore", "ignore", "pipe"] });
}

function whyNot(): string | undefined {
  if (process.platform !== "linux") return "not Linux";
  if (process.getuid?.() !== 0) return "mounting a test volume needs root";
  const probe = mkdtempSync(join(tmpdir(), "volume-probe-"));
  try {
    if (spawnSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe]).status !== 0)
      return "mount -t tmpfs failed (no CAP_SYS_ADMIN?)";
    spawnSync("umount", [probe]);
    return undefined;
  } finally {
    rmdirSync(probe);
  }
}

export const TMPFS_UNAVAILABLE = whyNot();
export const EXT4_UNAVAILABLE =
  TMPFS_UNAVAILABLE ??
  (existsSync("/sys/fs/ext4") && spawnSync("mkfs.ext4", ["-V"]).status === 0
    ? undefined
    : "no ext4 support or mkfs.ext4");

export interface TestVolume {
  /** The mounted directory. */
  dir: string;
  /** Write a filler file until the volume answers ENOSPC. */
  fill(): Promise<void>;
  /** Remove the filler. */
  free(): Promise<void>;
  /** ext4 only: the filesystem turns read-only under everyone (EROFS), open files included. */
  breakReadOnly(): void;
  /** ext4 only: detach the broken mount (open files keep it) and mount the image afresh, writable. */
  repair(): void;
  close(): Promise<void>;
}

const FILLER = ".test-filler";

/** Fill the volume to its last byte: chunks halving in size until not even one byte fits. */
async function fillUp(dir: string): Promise<void> {
  const handle = await open(join(dir, FILLER), "a");
  try {
    for (let n = 64 * 1024; n >= 1; n = Math.floor(n / 2)) {
      const chunk = Buffer.alloc(n, 1);
      for (;;) {
        try {
          if ((await handle.write(chunk)).bytesWritten < n) break;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === "ENOSPC") break;
          throw err;
        }
      }
    }
  } finally {
    await handle.close();
  }
}

/** A tmpfs of `sizeKiB` on a new temporary directory. */
export async function mountTmpfs(sizeKiB = 2048): Promise<TestVolume> {
  const dir = await mkdtemp(join(tmpdir(), "tmpfs-volume-"));
  run("mount", ["-t", "tmpfs", "-o", `size=${sizeKiB}k,mode=0755`, "tmpfs", dir]);
  return {
    dir,
    fill: () => fillUp(dir),
    free: () => unlink(join(dir, FILLER)).catch(() => undefined),
    breakReadOnly: () => {
      throw new Error("a tmpfs cannot be broken read-only under open files; use mountExt4");
    },
    repair: () => undefined,
    close: async () => {
      spawnSync("umount", ["-l", dir]);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** An ext4 image of `sizeMiB` on a loop device, mounted with errors=remount-ro. */
export async function mountExt4(sizeMiB = 16): Promise<TestVolume> {
  const home = await mkdtemp(join(tmpdir(), "ext4-volume-"));
  const image = join(home, "fs.img");
  const dir = join(home, "mnt");
  await writeFile(image, "");
  run("truncate", ["-s", `${sizeMiB}M`, image]);
  run("mkfs.ext4", ["-q", "-F", "-m", "0", image]);
  run("mkdir", [dir]);
  const mount = () => run("mount", ["-o", "loop,errors=remount-ro", image, dir]);
  mount();
  const device = () =>
    basename(execFileSync("findmnt", ["-n", "-o", "SOURCE", dir], { encoding: "utf8" }).trim());
  return {
    dir,
    fill: () => fillUp(dir),
    free: () => unlink(join(dir, FILLER)).catch(() => undefined),
    breakReadOnly: () => {
      execFileSync("sh", ["-c", `echo test > /sys/fs/ext4/${device()}/trigger_fs_error`]);
    },
    repair: () => {
      run("umount", ["-l", dir]);
      spawnSync("e2fsck", ["-f", "-y", image], { stdio: "ignore" });
      mount();
    },
    close: async () => {
      spawnSync("umount", ["-l", dir]);
      await rm(home, { recursive: true, force: true });
    },
  };
}
