/**
 * /-/ready says why the exporter is not ready, one reason at a time: standing by for a lock another
 * host holds, a checkpoint directory that takes no writes, a discovery that failed (with its error)
 * or has not run, first runs still going.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { Activation } from "../../../src/daemon/activation.js";
import { CheckpointLock } from "../../../src/ha/lock.js";
import { CheckpointVolume, CheckpointWriteError } from "../../../src/ha/volume.js";
import { ReadinessPolicy, readinessWith, type Readiness } from "../../../src/scheduling/readiness.js";
import { startHttpServer, type RunningHttpServer } from "../../../src/server/http.js";
import { makeExposition, silentLogger, statusOf } from "../server/helpers.js";
import { waitFor } from "../../helpers/wait.js";

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** What /-/ready answers for this readiness: its status and body. */
async function ready(readiness: () => Readiness): Promise<{ status: number; body: string }> {
  const server: RunningHttpServer = await startHttpServer({
    listenAddress: "127.0.0.1:0",
    telemetryPath: "/metrics",
    exposition: makeExposition().exposition,
    readiness,
    status: () => statusOf(),
    logger: silentLogger,
  });
  cleanups.push(() => server.close());
  const res = await fetch(`${server.url}/-/ready`);
  return { status: res.status, body: await res.text() };
}

function policy(inputs: { discoveredAt?: number; error?: string; waiting?: string[] }): ReadinessPolicy {
  return new ReadinessPolicy({
    discoveredAt: () => inputs.discoveredAt,
    withoutFirstRun: () => (inputs.waiting ?? []) as never,
    discoveryError: () => inputs.error,
    readyTimeout: "5m",
    logger: silentLogger,
    now: () => 1_000,
  });
}

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "sitehost-ready-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe("/-/ready says why it is not ready", () => {
  it("standing by: names the host, pid and exporter that hold the checkpoint lock", async () => {
    const dir = await tempDir();
    const logger = pino({ level: "silent" });
    /** A lock on `dir` as the exporter on `host` holds it (another boot: its pid says nothing here). */
    const lockOn = (host: string) => {
      const l = new CheckpointLock({
        dir,
        timeoutMs: 60_000,
        logger,
        identity: { host, bootId: `boot-${host}` },
      });
      cleanups.push(() => l.release());
      return l;
    };
    const holder = lockOn("node-a");
    expect(await holder.tryAcquire()).toBe("free");
    const lock = lockOn("node-b");
    const activation = new Activation({
      lock,
      standBy: true,
      activate: () => Promise.reject(new Error("a standby must not start")),
      onFailed: () => undefined,
      logger,
    });
    cleanups.push(() => activation.stop());
    await activation.start();
    expect(activation.standingBy).toBe(true);
    const seen = await waitFor("the holder seen by the standby", () => lock.holder);
    const r = await ready(() => activation.readiness());
    expect(r.status).toBe(503);
    expect(r.body).toBe(
      `Not ready: standby: the checkpoint lock on ${dir} is held by exporter ${holder.owner} (host node-a, pid ${process.pid}, last heartbeat ${seen.heartbeatAt})\n`,
    );
  });

  it("a checkpoint directory that turned read-only: names the file, the directory and the errno", async () => {
    const dir = await tempDir();
    const volume = new CheckpointVolume({ dir, logger: silentLogger, probeIntervalMs: 3_600_000 });
    cleanups.push(() => volume.close());
    const active: Readiness = { ready: true };
    expect((await ready(() => readinessWith(active, volume.status()))).status).toBe(200);
    const path = join(dir, "journal", "1.log");
    volume.report(
      new CheckpointWriteError("journal", path, Object.assign(new Error("EROFS"), { code: "EROFS" })),
    );
    const r = await ready(() => readinessWith(active, volume.status()));
    expect(r.status).toBe(503);
    expect(r.body).toBe(
      `Not ready: cannot write the checkpoint journal ${path} under logs.checkpointDir (read-only file system, EROFS); log shipping is paused (nothing is acknowledged that could be lost) and resumes by itself once the directory takes writes again\n`,
    );
    // A standby's own reason (who holds the lock, or why it cannot be taken) goes first.
    const standby: Readiness = { ready: false, reason: "standby: waiting for the checkpoint lock on /x" };
    expect(readinessWith(standby, volume.status())).toBe(standby);
  });

  it("discovery failed: names its error; not run yet: says so", async () => {
    const error =
      "POST https://auth.example/auth/token: the platform rejected the client credentials (HTTP 401)";
    const failed = await ready(() => policy({ error }).check());
    expect(failed).toEqual({
      status: 503,
      body: `Not ready: site discovery has not succeeded yet: ${error}\n`,
    });
    expect((await ready(() => policy({}).check())).body).toBe(
      "Not ready: site discovery has not succeeded yet\n",
    );
  });

  it("first runs still going: names the collectors", async () => {
    const r = await ready(() => policy({ discoveredAt: 900, waiting: ["backups", "domains"] }).check());
    expect(r).toEqual({ status: 503, body: "Not ready: waiting for a first run of backups, domains\n" });
  });
});
