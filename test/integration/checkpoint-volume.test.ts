/**
 * The built daemon on a checkpoint volume that fills up or turns read-only under it (a real tmpfs and
 * a real ext4 image: the kernel's ENOSPC and EROFS, no simulation). It never exits and never stops
 * serving /metrics; it says what is wrong (a metric, a paused gauge, one log line per cause naming
 * logs.checkpointDir, /-/ready while it stands by); shipping stops, so nothing acknowledged is lost;
 * and it resumes by itself once the volume takes writes again, every marked line arriving once.
 * Mounting needs root: without it these tests are skipped.
 */
import { randomBytes } from "node:crypto";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startSimulator } from "../../src/simulator/index.js";
import {
  metricSum,
  metricValue,
  scrape,
  startDaemonProcess,
  waitForReadsSince,
  waitReady,
  type DaemonProcess,
} from "../helpers/daemon.js";
import { Marks } from "../helpers/log-marks.js";
import { startOtlpReceiver } from "../helpers/otlp-receiver.js";
import {
  EXT4_UNAVAILABLE,
  mountExt4,
  mountTmpfs,
  TMPFS_UNAVAILABLE,
  type TestVolume,
} from "../helpers/volume.js";
import { waitFor } from "../helpers/wait.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const TOKEN = randomBytes(24).toString("hex");
const MARKED_STREAMS = 3 * 2;

async function setup(volume: TestVolume) {
  const sim = await startSimulator({ sites: 3, seed: 31, logRatePerSite: 0.5 });
  const receiver = await startOtlpReceiver();
  cleanups.push(
    () => sim.close(),
    () => receiver.close(),
    () => volume.close(),
  );
  const start = async (): Promise<DaemonProcess> => {
    const d = await startDaemonProcess({
      sim,
      checkpointDir: volume.dir,
      config: {
        webhooks: { enabled: true },
        logs: { ship: true, pollInterval: "1s", maxPollInterval: "4s", startFrom: "now", lockTimeout: "4s" },
        collectors: { traffic: { enabled: false }, performance: { enabled: false } },
      },
      env: { SITEHOST_WEBHOOK_TOKEN: TOKEN, OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: receiver.logsEndpoint },
    });
    cleanups.push(() => d.kill());
    return d;
  };
  const metric = async (d: DaemonProcess, name: string, labels = "") =>
    metricValue(await scrape(d), name, labels);
  const accepted: number[] = [];
  /** Posts a webhook event; the answer's status (each event answered 200 must arrive once). */
  const webhook = async (d: DaemonProcess) => {
    const n = accepted.length + Math.random();
    const res = await fetch(`${d.url}/webhook?token=${TOKEN}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ event: "site_disabled", site: { id: 1, state: "disabled" }, n }),
    });
    if (res.status === 200) accepted.push(n);
    return res.status;
  };
  const webhooksArrived = () =>
    receiver.records.filter((r) => r.attributes["sitehost.log.stream"] === "webhook").length;
  /** Error lines that name the checkpoint directory (one per cause, not one per write). */
  const volumeErrors = (d: DaemonProcess) =>
    d
      .logs()
      .split("\n")
      .filter((l) => l.includes('"level":"error"') && l.includes("under logs.checkpointDir"));
  return { sim, receiver, start, metric, webhook, accepted, webhooksArrived, volumeErrors };
}

describe.skipIf(TMPFS_UNAVAILABLE)("a checkpoint volume that fills up", () => {
  it("pauses shipping, keeps serving metrics, and resumes by itself once space returns, every line once", async () => {
    const volume = await mountTmpfs(4096);
    const { sim, receiver, start, metric, webhook, accepted, webhooksArrived, volumeErrors } =
      await setup(volume);
    const marks = new Marks(sim, "full");
    const d = await start();
    await waitReady(d.url, 30_000);
    marks.write();
    expect(await marks.allArrived(receiver, 20_000), d.logs()).toBe(true);
    expect(await webhook(d)).toBe(200);

    await volume.fill();
    // Lines keep coming; the first checkpoint write that needs space fails and pauses shipping.
    await waitFor(
      "shipping paused",
      async () => {
        marks.write();
        return (await metric(d, "sitehost_exporter_log_shipping_paused")) === 1;
      },
      { timeoutMs: 60_000, intervalMs: 500, last: () => d.logs().slice(-2000) },
    );
    expect(
      metricSum(await scrape(d), "sitehost_exporter_checkpoint_write_errors_total", 'reason="no_space"'),
    ).toBeGreaterThan(0);
    // Not ready while it ships nothing, saying which file could not be written and why.
    const ready = await fetch(`${d.url}/-/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.text()).toMatch(
      /^Not ready: cannot write the .* under logs\.checkpointDir \(no space left on the device, ENOSPC\)/,
    );
    // Events are answered 503 (the platform retries) once the queue's file needs space it has not.
    const statuses: number[] = [];
    for (let i = 0; i < 30 && !statuses.includes(503); i++) statuses.push(await webhook(d));
    expect(statuses).toContain(503);
    for (let i = 0; i < 3; i++) marks.write();
    // Still up, still serving, and saying so once per cause (not once per failed write).
    expect(d.child.exitCode).toBeNull();
    expect(await metric(d, "sitehost_exporter_build_info")).toBe(1);
    expect(volumeErrors(d).length).toBeGreaterThan(0);
    expect(volumeErrors(d).length).toBeLessThanOrEqual(12);
    expect(d.logs()).not.toMatch(/"level":"fatal"|uncaught|unhandled/i);

    await volume.free();
    await waitFor(
      "shipping resumed",
      async () => (await metric(d, "sitehost_exporter_log_shipping_paused")) === 0,
      {
        timeoutMs: 30_000,
        intervalMs: 250,
      },
    );
    for (let i = 0; i < 2; i++) marks.write();
    expect(await marks.allArrived(receiver, 40_000), d.logs()).toBe(true);
    await waitForReadsSince(d, Date.now(), MARKED_STREAMS);
    // Nothing twice, not even by uid: the process never died, so nothing was replayed.
    expect(marks.wrong(receiver), d.logs()).toEqual([]);
    expect(await webhook(d)).toBe(200);
    await waitFor("every accepted webhook event shipped", () => webhooksArrived() >= accepted.length);
    expect(webhooksArrived()).toBe(accepted.length);
    expect(await d.stop("SIGTERM")).toBe(0);
  }, 150_000);

  it("a start on a full volume serves metrics and stands by naming logs.checkpointDir, leaves no lock file, and starts once space returns", async () => {
    const volume = await mountTmpfs(1024);
    const { sim, receiver, start, metric } = await setup(volume);
    const marks = new Marks(sim, "start-full");
    await volume.fill();
    const d = await start();
    // The listener answers before the first attempt at the lock has ended: wait for its verdict.
    let why = "";
    await waitFor(
      "/-/ready to name the full volume",
      async () => {
        const ready = await fetch(`${d.url}/-/ready`);
        why = `${ready.status} ${await ready.text()}`;
        return /cannot take the checkpoint lock/.test(why);
      },
      { timeoutMs: 20_000, last: () => why },
    );
    expect(why).toMatch(
      /^503 .*cannot take the checkpoint lock: .*under logs\.checkpointDir \(no space left/,
    );
    expect(await metric(d, "sitehost_exporter_log_shipping_paused")).toBe(1);
    expect(await metric(d, "sitehost_exporter_checkpoint_lock_held")).toBe(0);
    expect(d.logs()).not.toContain("locked by another exporter");
    expect(await readdir(join(volume.dir, "lock")).catch(() => [])).toEqual([]);

    await volume.free();
    await waitReady(d.url, 30_000);
    expect(await metric(d, "sitehost_exporter_checkpoint_lock_held")).toBe(1);
    marks.write();
    expect(await marks.allArrived(receiver, 30_000), d.logs()).toBe(true);
    expect(await d.stop("SIGTERM")).toBe(0);
  }, 120_000);
});

describe.skipIf(EXT4_UNAVAILABLE)("a checkpoint volume that turns read-only", () => {
  it("keeps the daemon up and serving metrics, stops shipping and gives the lock up; mounted afresh, it takes the lock again and ships", async () => {
    const volume = await mountExt4(32);
    const { sim, receiver, start, metric, webhook } = await setup(volume);
    const marks = new Marks(sim, "read-only");
    const d = await start();
    await waitReady(d.url, 30_000);
    marks.write();
    expect(await marks.allArrived(receiver, 20_000), d.logs()).toBe(true);

    volume.breakReadOnly();
    await waitFor(
      "the lock given up",
      async () => {
        marks.write();
        return (await metric(d, "sitehost_exporter_checkpoint_lock_held")) === 0;
      },
      { timeoutMs: 60_000, intervalMs: 500, last: () => d.logs().slice(-2000) },
    );
    expect(d.child.exitCode).toBeNull();
    expect(
      metricSum(await scrape(d), "sitehost_exporter_checkpoint_write_errors_total", 'reason="read_only"'),
    ).toBeGreaterThan(0);
    expect(await metric(d, "sitehost_exporter_log_shipping_paused")).toBe(1);
    expect(await webhook(d)).toBe(503);
    expect((await fetch(`${d.url}/-/ready`)).status).toBe(503);

    volume.repair();
    await waitReady(d.url, 60_000);
    // Held again (one loaded CI run saw it at 0 in the scrape right after ready: polled, not assumed).
    await waitFor(
      "the lock held again",
      async () => (await metric(d, "sitehost_exporter_checkpoint_lock_held")) === 1,
      { timeoutMs: 15_000, intervalMs: 250, last: () => d.logs().slice(-2000) },
    );
    marks.write();
    expect(await marks.allArrived(receiver, 40_000), d.logs()).toBe(true);
    expect(d.logs()).toMatch(/acquired the checkpoint lock/);
    expect(await d.stop("SIGTERM")).toBe(0);
  }, 180_000);
});
