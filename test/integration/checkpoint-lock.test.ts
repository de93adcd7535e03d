/**
 * The built daemon on one checkpoint directory, against the simulator and a real OTLP receiver:
 * a stop and a new process continue where the first left off; of two exporters on one directory
 * exactly one collects and ships while the other stands by and says who holds the lock, and takes
 * over when the holder is killed or stops. Marked log lines count what arrived.
 */
import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startSimulator } from "../../src/simulator/index.js";
import { sleep } from "../../src/util/time.js";
import {
  metricValue,
  scrape,
  startDaemonProcess,
  waitForReadsSince,
  type DaemonProcess,
} from "../helpers/daemon.js";
import { Marks } from "../helpers/log-marks.js";
import { startOtlpReceiver } from "../helpers/otlp-receiver.js";
import { waitFor } from "../helpers/wait.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

/** Waits for `cond` (polled every 200 ms); fails after `timeoutMs` saying what it waited for. */
const until = (what: string, cond: () => Promise<boolean> | boolean, timeoutMs: number) =>
  waitFor(what, cond, { timeoutMs, intervalMs: 200 });

/**
 * `rm -r` of a directory its exporters keep writing to: a file written during the removal makes
 * the last rmdir fail with ENOTEMPTY, and the removal is tried again, as a person would.
 */
const removeUnderWriters = (dir: string) =>
  rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 20 });

const holds = async (d: DaemonProcess) =>
  metricValue(await scrape(d), "sitehost_exporter_checkpoint_lock_held") === 1;

async function setup(logs: Record<string, unknown> = {}) {
  const sim = await startSimulator({ sites: 3, seed: 23, logRatePerSite: 0.5 });
  const receiver = await startOtlpReceiver();
  const checkpointDir = await mkdtemp(join(tmpdir(), "sitehost-lock-it-"));
  cleanups.push(
    () => sim.close(),
    () => receiver.close(),
  );
  const start = async (): Promise<DaemonProcess> => {
    const d = await startDaemonProcess({
      sim,
      checkpointDir,
      config: {
        // Idle streams are still read every few seconds, so "every stream read again" comes soon.
        logs: { ship: true, pollInterval: "1s", maxPollInterval: "4s", startFrom: "now", ...logs },
        collectors: { traffic: { enabled: false }, performance: { enabled: false } },
      },
      env: { OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: receiver.logsEndpoint },
    });
    cleanups.push(() => d.kill());
    return d;
  };
  /** Every tailer has fixed its start point on disk (3 sites × 2 streams). */
  const tailing = () =>
    until(
      "six checkpoints",
      async () => (await readdir(checkpointDir)).filter((f) => /^site-.*\.json$/.test(f)).length >= 6,
      30_000,
    );
  return { sim, receiver, checkpointDir, start, tailing };
}

describe("checkpoint directory across processes", () => {
  it("a new process on the directory of a stopped one ships what was written meanwhile, nothing twice", async () => {
    const { sim, receiver, start, tailing } = await setup();
    const marks = new Marks(sim, "restart");
    const first = await start();
    await tailing();
    for (let i = 0; i < 4; i++) {
      marks.write();
      await sleep(300);
    }
    expect(await first.stop("SIGTERM")).toBe(0);
    // Written while no exporter runs: shipped by the next one, from the checkpoints.
    for (let i = 0; i < 3; i++) marks.write();
    const second = await start();
    for (let i = 0; i < 3; i++) {
      marks.write();
      await sleep(300);
    }
    expect(await marks.allArrived(receiver, 30_000), second.logs()).toBe(true);
    // Every stream read to its end again: a late duplicate would have arrived by then.
    await waitForReadsSince(second, Date.now(), 6);
    expect(marks.wrong(receiver), second.logs()).toEqual([]);
    expect(await second.stop("SIGTERM")).toBe(0);
  }, 90_000);

  it("of two exporters on one directory one ships, the other stands by, names the holder, and takes over when it is killed", async () => {
    const { sim, receiver, start, tailing } = await setup();
    const marks = new Marks(sim, "pair");
    const a = await start();
    await until("the first exporter to hold the lock", () => holds(a), 20_000);
    await tailing();
    const b = await start();

    // B stands by: it says who holds the lock, serves its own metrics, and neither collects nor ships.
    await until("the standby's log line", () => b.logs().includes("standing by"), 10_000);
    const said = b
      .logs()
      .split("\n")
      .find((l) => l.includes("standing by")) as string;
    expect(said).toContain(`"pid":${a.pid}`);
    const standby = await scrape(b);
    expect(metricValue(standby, "sitehost_exporter_checkpoint_lock_held")).toBe(0);
    expect(metricValue(standby, "sitehost_exporter_checkpoint_lock_holder_info", `pid="${a.pid}"`)).toBe(1);
    expect(standby).not.toContain("sitehost_exporter_shard_info");
    expect(standby).not.toContain("sitehost_site_info");
    expect(standby).not.toMatch(/^sitehost_up /m);
    const ready = await fetch(`${b.url}/-/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.text()).toContain(`pid ${a.pid}`);
    expect((await fetch(`${b.url}/-/healthy`)).status).toBe(200);
    expect(metricValue(await scrape(a), "sitehost_exporter_shard_info", 'shard="0/1"')).toBe(1);

    for (let i = 0; i < 4; i++) {
      marks.write();
      await sleep(400);
    }
    expect(await marks.allArrived(receiver, 20_000), a.logs()).toBe(true);
    expect(metricValue(await scrape(b), "sitehost_exporter_log_records_shipped_total")).toBeUndefined();

    // The holder dies without releasing the lock; the standby takes over and ships the rest.
    await a.kill();
    for (let i = 0; i < 3; i++) {
      marks.write();
      await sleep(300);
    }
    await until("the standby to take over", () => holds(b), 30_000);
    expect(b.logs()).toMatch(/acquired the checkpoint lock|took over the checkpoint lock/);
    for (let i = 0; i < 3; i++) {
      marks.write();
      await sleep(300);
    }
    expect(await marks.allArrived(receiver, 30_000), b.logs()).toBe(true);
    await waitForReadsSince(b, Date.now(), 6);
    // Exactly once each, counting a record whose log.record.uid already arrived once: a SIGKILL
    // between the collector's acknowledgement and the checkpoint rename can replay one export.
    expect(marks.wrong(receiver, true), b.logs()).toEqual([]);
    expect(marks.replayed(receiver)).toBeLessThanOrEqual(2 * 3);
    expect(metricValue(await scrape(b), "sitehost_exporter_shard_info", 'shard="0/1"')).toBe(1);
    expect(await b.stop("SIGTERM")).toBe(0);
  }, 120_000);

  it("a checkpoint directory deleted and recreated under its holder: the holder stops at once, and one exporter ships, once", async () => {
    const { sim, receiver, checkpointDir, start, tailing } = await setup({ lockTimeout: "4s" });
    const a = await start();
    await until("the first exporter to hold the lock", () => holds(a), 20_000);
    await tailing();
    const b = await start();
    await until("the standby's log line", () => b.logs().includes("standing by"), 10_000);

    await removeUnderWriters(checkpointDir);
    await mkdir(checkpointDir);
    // A finds out at its next checkpoint write or heartbeat, stops collecting and shipping, and
    // stands by; the recreated directory is free, so one of the two takes it properly.
    await until("A to lose the lock", () => a.logs().includes("lost the checkpoint lock"), 20_000);
    const held = async () => [await holds(a), await holds(b)];
    await until(
      "one exporter to hold the lock",
      async () => (await held()).filter(Boolean).length === 1,
      30_000,
    );
    const [aHolds] = await held();
    const [holder, standby] = aHolds ? [a, b] : [b, a];
    await until(
      "the standby to name the holder",
      async () => (await (await fetch(`${standby.url}/-/ready`)).text()).includes(`pid ${holder.pid}`),
      20_000,
    );
    const shippedByStandby = metricValue(
      await scrape(standby),
      "sitehost_exporter_log_records_shipped_total",
    );
    expect(await scrape(standby)).not.toMatch(/^sitehost_site_info/m);

    // From now on only the holder ships: every line once.
    const marks = new Marks(sim, "recreated");
    for (let i = 0; i < 4; i++) {
      marks.write();
      await sleep(400);
    }
    expect(await marks.allArrived(receiver, 30_000), holder.logs()).toBe(true);
    await waitForReadsSince(holder, Date.now(), 6);
    expect(marks.wrong(receiver), `${a.logs()}\n${b.logs()}`).toEqual([]);
    expect(metricValue(await scrape(standby), "sitehost_exporter_log_records_shipped_total")).toBe(
      shippedByStandby,
    );
    expect(await held()).toEqual(aHolds ? [true, false] : [false, true]);
    // The lock file is the holder's, generation 1 of the new directory: nobody wrote over it.
    const [lockFile] = await readdir(join(checkpointDir, "lock"));
    expect(JSON.parse(await readFile(join(checkpointDir, "lock", lockFile as string), "utf8"))).toMatchObject(
      {
        pid: holder.pid,
        generation: 1,
      },
    );
    expect(await holder.stop("SIGTERM")).toBe(0);
    await until("the standby to take over", () => holds(standby), 20_000);
    expect(await standby.stop("SIGTERM")).toBe(0);
  }, 150_000);

  it("a checkpoint directory recreated under a lone holder: it takes the lock again and resumes where it was, shipping nothing twice", async () => {
    const { sim, receiver, checkpointDir, start, tailing } = await setup({
      lockTimeout: "4s",
      startFrom: "-30m",
    });
    const a = await start();
    await until("the exporter to hold the lock", () => holds(a), 20_000);
    await tailing();
    const marks = new Marks(sim, "before");
    for (let i = 0; i < 3; i++) marks.write();
    expect(await marks.allArrived(receiver, 30_000), a.logs()).toBe(true);
    await waitForReadsSince(a, Date.now(), 6);
    const shippedBefore = receiver.records.length;
    expect(shippedBefore).toBeGreaterThan(3);

    await removeUnderWriters(checkpointDir);
    await mkdir(checkpointDir);
    await until("A to lose the lock", () => a.logs().includes("lost the checkpoint lock"), 20_000);
    await until("A to hold the lock again", () => holds(a), 30_000);
    await tailing();
    const after = new Marks(sim, "after");
    for (let i = 0; i < 3; i++) after.write();
    expect(await after.allArrived(receiver, 30_000), a.logs()).toBe(true);
    await waitForReadsSince(a, Date.now(), 6);

    const uids = receiver.records.map((r) => String(r.attributes["log.record.uid"]));
    expect(uids.length - new Set(uids).size, a.logs()).toBe(0);
    expect([...marks.wrong(receiver), ...after.wrong(receiver)]).toEqual([]);
    expect(a.logs()).toContain("its stream resumes where this exporter last had it");
    expect(await a.stop("SIGTERM")).toBe(0);
  }, 150_000);

  it("a standby takes over at once when the holder stops gracefully, long before lockTimeout", async () => {
    const { start } = await setup();
    const a = await start();
    await until("the first exporter to hold the lock", () => holds(a), 20_000);
    const b = await start();
    await until("the standby's log line", () => b.logs().includes("standing by"), 10_000);
    const stopped = Date.now();
    expect(await a.stop("SIGTERM")).toBe(0);
    await until("the standby to take over", () => holds(b), 10_000);
    // The default logs.lockTimeout is a minute; a released lock is taken at the next look.
    expect(Date.now() - stopped).toBeLessThan(10_000);
    expect(b.logs()).toContain('"how":"released"');
    expect(await b.stop("SIGTERM")).toBe(0);
  }, 60_000);
});
