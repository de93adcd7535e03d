/**
 * The checkpoint lock: one holder per directory, standbys that say who holds it, takeover when the
 * holder releases, dies or stops heartbeating, and never two winners.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, readlinkSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CheckpointLock, type CheckpointLockOptions } from "../../../src/ha/lock.js";
import type { LockHolder } from "../../../src/ha/lockHolder.js";
import { CheckpointWriteError } from "../../../src/ha/volume.js";
import { waitFor } from "../../helpers/wait.js";
import {
  EXT4_UNAVAILABLE,
  mountExt4,
  mountTmpfs,
  TMPFS_UNAVAILABLE,
  type TestVolume,
} from "../../helpers/volume.js";
import { captureLogs } from "../../helpers/logCapture.js";

const dirs: string[] = [];
const locks: CheckpointLock[] = [];
const stops: AbortController[] = [];
afterEach(async () => {
  for (const s of stops.splice(0)) s.abort();
  for (const l of locks.splice(0)) await l.release();
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), "sitehost-lock-"));
  dirs.push(d);
  return d;
}

function newLock(opts: Partial<CheckpointLockOptions> & { dir: string }): CheckpointLock {
  const lock = new CheckpointLock({ timeoutMs: 400, logger: pino({ level: "silent" }), ...opts });
  locks.push(lock);
  return lock;
}

function standBy(lock: CheckpointLock): Promise<boolean> {
  const stop = new AbortController();
  stops.push(stop);
  return lock.acquire(stop.signal);
}

async function lockFiles(dir: string): Promise<string[]> {
  return (await readdir(join(dir, "lock"))).filter((f) => /^\d+\.json$/.test(f));
}

async function readHolder(dir: string): Promise<LockHolder> {
  const files = (await lockFiles(dir)).sort((a, b) => parseInt(b) - parseInt(a));
  return JSON.parse(await readFile(join(dir, "lock", files[0] as string), "utf8")) as LockHolder;
}

/** A lock file as another exporter would have left it. */
async function foreignLock(dir: string, content: Partial<LockHolder> | string): Promise<void> {
  await mkdir(join(dir, "lock"), { recursive: true });
  const holder: LockHolder = {
    version: 1,
    owner: "other-exporter",
    host: "node-b",
    pid: 4242,
    startedAt: "2026-01-01T00:00:00.000Z",
    heartbeatAt: "2026-01-01T00:00:00.000Z",
    generation: 1,
  };
  const text = typeof content === "string" ? content : JSON.stringify({ ...holder, ...content });
  await writeFile(join(dir, "lock", "1.json"), text);
}

describe("checkpoint lock", () => {
  it("the first exporter on a directory holds it; the lock file names owner, host, pid, start and heartbeat", async () => {
    const dir = await tempDir();
    const registry = new Registry();
    const lock = newLock({ dir, registry });
    expect(await lock.tryAcquire()).toBe("free");
    expect(lock.held).toBe(true);
    const h = await readHolder(dir);
    expect(h).toMatchObject({ owner: lock.owner, pid: process.pid, generation: 1 });
    expect(h.host.length).toBeGreaterThan(0);
    expect(Date.parse(h.startedAt)).toBeLessThanOrEqual(Date.parse(h.heartbeatAt));
    const text = await registry.metrics();
    expect(text).toContain("sitehost_exporter_checkpoint_lock_held 1");
    expect(text).toMatch(
      new RegExp(
        `sitehost_exporter_checkpoint_lock_holder_info\\{owner="${lock.owner}",host="[^"]+",pid="${process.pid}"\\} 1`,
      ),
    );
  });

  it("the holder refreshes its heartbeat", async () => {
    const dir = await tempDir();
    const lock = newLock({ dir, timeoutMs: 200 });
    await lock.tryAcquire();
    const first = (await readHolder(dir)).heartbeatAt;
    await waitFor("a newer heartbeat", async () => (await readHolder(dir)).heartbeatAt !== first);
    expect((await readHolder(dir)).owner).toBe(lock.owner);
  });

  it("a second exporter stands by, says who holds the lock, and takes over at once when the holder releases it", async () => {
    const dir = await tempDir();
    const holder = newLock({ dir, timeoutMs: 60_000, identity: { host: "node-a", bootId: "boot-a" } });
    await holder.tryAcquire();
    const registry = new Registry();
    const { logger, lines } = captureLogs();
    const standby = newLock({
      dir,
      timeoutMs: 60_000,
      identity: { host: "node-b", bootId: "boot-b" },
      registry,
      logger,
    });
    let acquired = false;
    const looks = vi.spyOn(standby, "tryAcquire");
    const waiting = standBy(standby).then((ok) => (acquired = ok));
    await waitFor("the standby's log line", () => lines.some((l) => l.holder !== undefined));
    const said = lines.find((l) => l.holder !== undefined) as {
      holder: Record<string, unknown>;
      msg: string;
    };
    expect(said.holder).toMatchObject({ owner: holder.owner, host: "node-a", pid: process.pid });
    expect(said.msg).toMatch(/standing by/);
    expect(standby.standbyReason()).toContain(
      `held by exporter ${holder.owner} (host node-a, pid ${process.pid}`,
    );
    const text = await registry.metrics();
    expect(text).toContain("sitehost_exporter_checkpoint_lock_held 0");
    expect(text).toContain(`owner="${holder.owner}",host="node-a"`);
    // A second look at a lock that is held and heartbeating does not take it either.
    await waitFor("a second look by the standby", () => looks.mock.calls.length >= 2);
    expect(acquired).toBe(false);

    await holder.release();
    // Released: no waiting for lockTimeout (a minute here), only for the standby's next look.
    const released = performance.now();
    await waitFor("the standby to take over", () => acquired, { timeoutMs: 3000 });
    expect(performance.now() - released).toBeLessThan(3000);
    await waiting;
    expect(standby.held).toBe(true);
    expect(standby.standbyReason()).toMatch(/^starting/);
    expect((await readHolder(dir)).owner).toBe(standby.owner);
    expect(await lockFiles(dir)).toEqual(["2.json"]); // the released generation is cleaned up
  });

  it("a holder that stopped heartbeating is taken over after lockTimeout, not before", async () => {
    const dir = await tempDir();
    await foreignLock(dir, {}); // another host: its pid says nothing here
    const standby = newLock({ dir, timeoutMs: 800 });
    const started = performance.now();
    let acquiredAt = 0;
    const looks = vi.spyOn(standby, "tryAcquire");
    const waiting = standBy(standby).then(() => (acquiredAt = performance.now()));
    // Looking again before lockTimeout passed: the holder's file has not changed, but not for long enough.
    await waitFor("two looks by the standby", () => looks.mock.calls.length >= 2);
    expect(performance.now() - started).toBeLessThan(800);
    expect(standby.held).toBe(false);
    await waiting;
    expect(acquiredAt - started).toBeGreaterThanOrEqual(800);
    expect(standby.held).toBe(true);
    expect(await lockFiles(dir)).toEqual(["2.json"]);
  });

  it("an empty or torn lock file (an exporter failed while creating it) is taken at once, with a warning", async () => {
    for (const content of ["", '{"version":1,"owner":"other-exp']) {
      const dir = await tempDir();
      await foreignLock(dir, content);
      const { logger, lines } = captureLogs();
      const standby = newLock({ dir, timeoutMs: 60_000, logger });
      expect(await standby.tryAcquire()).toBe("unreadable");
      expect(standby.held).toBe(true);
      expect(lines.some((l) => /empty or unreadable/.test(String(l.msg)))).toBe(true);
      expect(await lockFiles(dir)).toEqual(["2.json"]);
    }
  });

  it("a generation too large to count on (2^53 and beyond) is stale after lockTimeout, not a lock for ever", async () => {
    const dir = await tempDir();
    await mkdir(join(dir, "lock"), { recursive: true });
    const huge = "9007199254740993";
    await writeFile(
      join(dir, "lock", `${huge}.json`),
      JSON.stringify({ owner: "other-exporter", host: "node-b", pid: 4242, generation: Number(huge) }),
    );
    const { logger, lines } = captureLogs();
    const standby = newLock({ dir, timeoutMs: 300, logger });
    const started = performance.now();
    expect(await standby.tryAcquire()).toBeUndefined();
    expect(lines.some((l) => /not a usable number/.test(String(l.msg)))).toBe(true);
    expect(await standBy(standby)).toBe(true);
    expect(performance.now() - started).toBeGreaterThanOrEqual(300);
    expect(await lockFiles(dir)).toEqual(["1.json"]);
  });

  it("the last generation that can be counted to (2^53 - 2) is taken over as generation 1, never as an absurd one", async () => {
    const dir = await tempDir();
    await mkdir(join(dir, "lock"), { recursive: true });
    const last = String(Number.MAX_SAFE_INTEGER - 1);
    await writeFile(
      join(dir, "lock", `${last}.json`),
      JSON.stringify({ owner: "other-exporter", host: "node-b", pid: 4242, generation: Number(last) }),
    );
    const { logger, lines } = captureLogs();
    const standby = newLock({ dir, timeoutMs: 300, logger });
    expect(await standBy(standby)).toBe(true);
    expect(await lockFiles(dir)).toEqual(["1.json"]);
    expect((await readHolder(dir)).generation).toBe(1);
    expect(lines.some((l) => /not a usable number/.test(String(l.msg)))).toBe(false);
  });

  it.skipIf(process.platform !== "linux")(
    "a holder process that is gone from this machine is taken over at once",
    async () => {
      const dir = await tempDir();
      const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]);
      const deadPid = Number(child.stdout.toString());
      await foreignLock(dir, {
        host: "this-host",
        pid: deadPid,
        bootId: readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim(),
        pidNamespace: readlinkSync("/proc/self/ns/pid"),
      });
      const standby = newLock({ dir, timeoutMs: 60_000 });
      expect(await standby.tryAcquire()).toBe("dead");

      // The same holder on another kernel (or PID namespace) could be alive: it waits for the timeout.
      const other = await tempDir();
      await foreignLock(other, {
        host: "this-host",
        pid: deadPid,
        bootId: "another-boot",
        pidNamespace: "pid:[1]",
      });
      const cautious = newLock({ dir: other, timeoutMs: 60_000 });
      expect(await cautious.tryAcquire()).toBeUndefined();
      expect(await cautious.tryAcquire()).toBeUndefined();
    },
  );

  it("of several exporters contending for a stale lock, exactly one wins", async () => {
    for (let round = 0; round < 5; round++) {
      const dir = await tempDir();
      await foreignLock(dir, {});
      const contenders = Array.from({ length: 6 }, (_, i) =>
        newLock({ dir, timeoutMs: 400, identity: { host: `node-${i}`, bootId: `boot-${i}` } }),
      );
      for (const c of contenders) void standBy(c);
      await waitFor("a winner", () => contenders.some((c) => c.held));
      // The winner heartbeats (each heartbeat checks that no later generation appeared) while the
      // others keep looking: nobody else may win meanwhile.
      const beats = new Set([(await readHolder(dir)).heartbeatAt]);
      await waitFor("two more heartbeats", async () => {
        beats.add((await readHolder(dir)).heartbeatAt);
        return beats.size >= 3;
      });
      expect(contenders.filter((c) => c.held)).toHaveLength(1);
      expect(await lockFiles(dir)).toEqual(["2.json"]);
      for (const s of stops.splice(0)) s.abort();
    }
  });

  it("a holder whose directory was deleted and recreated loses the lock at its next check, never writes the newcomer's lock file, and stands by for it", async () => {
    const dir = await tempDir();
    const registry = new Registry();
    const lost: string[] = [];
    const a = newLock({ dir, timeoutMs: 200, registry, onLost: (reason) => lost.push(reason) });
    await a.tryAcquire();
    expect(a.verify()).toBeUndefined();
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir);
    // The next checkpoint write checks first, before any heartbeat.
    expect(a.verify()).toMatch(/is gone/);
    expect(lost).toHaveLength(1);
    expect(a.held).toBe(false);
    expect(await registry.metrics()).toContain("sitehost_exporter_checkpoint_lock_held 0");

    const b = newLock({ dir, timeoutMs: 200, identity: { host: "node-b", bootId: "boot-b" } });
    expect(await b.tryAcquire()).toBe("free");
    // A's heartbeat period is 50 ms: several pass while B's file stays B's.
    const beats = new Set<string>();
    await waitFor("three heartbeats of B", async () => {
      beats.add((await readHolder(dir)).heartbeatAt);
      return beats.size >= 3;
    });
    expect(await readHolder(dir)).toMatchObject({ owner: b.owner, generation: 1 });
    expect(lost).toHaveLength(1);

    // A stands by and takes the lock properly (the next generation) once B lets go of it.
    const again = standBy(a);
    await b.release();
    expect(await again).toBe(true);
    expect(a.held).toBe(true);
    expect(a.verify()).toBeUndefined();
    expect(await readHolder(dir)).toMatchObject({ owner: a.owner, generation: 2 });
    expect(await registry.metrics()).toContain("sitehost_exporter_checkpoint_lock_held 1");
  });

  it("a holder notices at its next heartbeat when its lock file is replaced by another exporter's", async () => {
    const dir = await tempDir();
    const lost: string[] = [];
    const a = newLock({ dir, timeoutMs: 200, onLost: (reason) => lost.push(reason) });
    await a.tryAcquire();
    // Another exporter's file under the same name (the directory recreated, generation 1 taken again).
    const other = join(dir, "lock", "1.json.other");
    await writeFile(other, JSON.stringify({ owner: "newcomer", host: "node-c", pid: 1, generation: 1 }));
    await rename(other, join(dir, "lock", "1.json"));
    await waitFor("the loss", () => lost.length > 0, { timeoutMs: 2000 });
    expect(lost[0]).toMatch(/another exporter's/);
    expect((await readHolder(dir)).owner).toBe("newcomer");
  });

  it("a holder whose lock was taken over notices at its next heartbeat and reports the loss", async () => {
    const dir = await tempDir();
    const registry = new Registry();
    const lost: string[] = [];
    const holder = newLock({ dir, timeoutMs: 400, registry, onLost: (reason) => lost.push(reason) });
    await holder.tryAcquire();
    // What a contender does after judging the holder stale (say it was frozen for lockTimeout).
    await writeFile(
      join(dir, "lock", "2.json"),
      JSON.stringify({ owner: "newcomer", host: "node-c", pid: 1 }),
    );
    await waitFor("the loss", () => lost.length > 0, { timeoutMs: 2000 });
    expect(lost[0]).toMatch(/took over/);
    expect(holder.held).toBe(false);
    expect(await registry.metrics()).toContain("sitehost_exporter_checkpoint_lock_held 0");
    // It does not write the lock any more, not even to release it.
    await holder.release();
    expect(JSON.parse(await readFile(join(dir, "lock", "2.json"), "utf8")).owner).toBe("newcomer");
  });
});

describe("checkpoint lock on a volume that refuses writes", () => {
  const volumes: TestVolume[] = [];
  afterEach(async () => {
    for (const l of locks.splice(0)) await l.release();
    for (const v of volumes.splice(0)) await v.close();
  });

  it.skipIf(TMPFS_UNAVAILABLE)(
    "on a full volume an attempt fails naming logs.checkpointDir, leaves no lock file, and succeeds once space returns",
    async () => {
      const volume = await mountTmpfs(512);
      volumes.push(volume);
      await volume.fill();
      const reported: CheckpointWriteError[] = [];
      const lock = newLock({ dir: volume.dir, failures: { report: (e) => void reported.push(e) } });
      const err = await lock.tryAcquire().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CheckpointWriteError);
      expect((err as Error).message).toMatch(
        /under logs\.checkpointDir \(no space left on the device, ENOSPC\)/,
      );
      expect(reported.map((e) => e.reason)).toEqual(["no_space"]);
      expect(lock.standbyReason()).toMatch(/^standby: cannot take the checkpoint lock: .*ENOSPC/);
      // Neither an empty generation (the next start would wait for lockTimeout) nor a temporary file.
      expect(await readdir(join(volume.dir, "lock"))).toEqual([]);
      await volume.free();
      expect(await lock.tryAcquire()).toBe("free");
    },
  );

  it.skipIf(EXT4_UNAVAILABLE)(
    "heartbeats on a volume turned read-only fail without leaving files and give the lock up after lockTimeout",
    async () => {
      const volume = await mountExt4();
      volumes.push(volume);
      const reported: CheckpointWriteError[] = [];
      const lost: string[] = [];
      const lock = newLock({
        dir: volume.dir,
        timeoutMs: 400,
        failures: { report: (e) => void reported.push(e) },
        onLost: (reason) => lost.push(reason),
      });
      expect(await lock.tryAcquire()).toBe("free");
      volume.breakReadOnly();
      await waitFor("the lock given up", () => lost.length > 0, { timeoutMs: 5000 });
      expect(lost[0]).toMatch(/no heartbeat could be written/);
      expect(reported.length).toBeGreaterThan(0);
      expect(reported.every((e) => e.reason === "read_only" && e.kind === "lock")).toBe(true);
      expect(await readdir(join(volume.dir, "lock"))).toEqual(["1.json"]);
    },
  );
});
