/**
 * Nothing lost and nothing twice: marked log lines written while the daemon
 * runs, is killed with SIGKILL and restarted, or while the collector refuses,
 * arrive at a real OTLP receiver exactly as often as they were written, in both
 * of the simulator's paging behaviours. An endpoint that answers 400 to every
 * export shows as such from outside (/-/ready, /-/status, /metrics) meanwhile.
 *
 * The waits are on events and counters, never on a fixed time: markers arriving at the receiver,
 * the collector's refusals, the daemon's own export-failure counter, and every stream read to its
 * end after the last marker arrived (after which nothing from earlier reads can still come).
 */
import { mkdtemp, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startSimulator } from "../../src/simulator/index.js";
import { sleep } from "../../src/util/time.js";
import {
  metricSum,
  metricValues,
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

/** The marks go to the first three sites: their PHP and web-server streams. */
const MARKED_STREAMS = 3 * 2;

async function setup(
  paging: "newest-first" | "oldest-first",
  protocol: "http/json" | "http/protobuf",
  logs: Record<string, unknown> = {},
) {
  // An oldest-first scroll starts at the 7-day retention horizon, so the first cycle reads the whole
  // week: keep that history small so the tailers reach the present within seconds.
  const sim = await startSimulator({
    sites: 3,
    seed: 11,
    logRatePerSite: paging === "oldest-first" ? 0.01 : 0.5,
  });
  if (paging === "oldest-first") sim.control.setLogPaging("oldest-first", "cursor");
  const receiver = await startOtlpReceiver();
  const checkpointDir = await mkdtemp(join(tmpdir(), "sitehost-logs-it-"));
  cleanups.push(
    () => sim.close(),
    () => receiver.close(),
  );
  /** `early` runs as soon as the daemon answers, before its tailers first poll. */
  const start = async (early?: () => void): Promise<DaemonProcess> => {
    const d = await startDaemonProcess({
      sim,
      checkpointDir,
      config: {
        // Every stream read at least every 2 s (idle, or a mark now and then: polled by arrival rate,
        // a quiet stream waits the longest interval), so a mark is read within seconds.
        logs: {
          ship: true,
          pollInterval: "1s",
          maxPollInterval: "2s",
          startFrom: "now",
          overlap: "2m",
          ...logs,
        },
        collectors: { traffic: { enabled: false }, performance: { enabled: false } },
      },
      env: {
        OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: receiver.logsEndpoint,
        OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: protocol,
      },
    });
    cleanups.push(() => d.kill());
    early?.();
    // Every tailer has fixed its start point on disk, so a SIGKILL cannot move it.
    await waitFor(
      "six checkpoints on disk",
      async () => (await readdir(checkpointDir)).filter((f) => /^site-.*\.json$/.test(f)).length >= 6,
      { timeoutMs: 20_000, intervalMs: 100, last: () => d.logs().slice(-2000) },
    );
    return d;
  };
  return { sim, receiver, start };
}

describe.each([
  ["newest-first", "http/json"],
  ["oldest-first", "http/protobuf"],
] as const)("log delivery with %s paging over %s", (paging, protocol) => {
  it("keeps every marked line exactly once across a SIGKILL and restart", async () => {
    const { sim, receiver, start } = await setup(paging, protocol);
    const marks = new Marks(sim, `kill-${paging}`, true);
    // Lines written right after start-up, before any tailer polled, are shipped too: startFrom "now"
    // is when the process started.
    let daemon = await start(() => marks.write());
    // Started through the CLI with the heap flags it chooses: V8's memory saver mode follows the log load.
    expect(daemon.logs()).toContain("V8 memory saver mode on");
    // Lines written over a few seconds of running, between polls.
    for (let i = 0; i < 6; i++) {
      marks.write();
      await sleep(400);
    }
    await daemon.kill(); // SIGKILL mid-run
    for (let i = 0; i < 3; i++) marks.write();
    daemon = await start();
    for (let i = 0; i < 3; i++) {
      marks.write();
      await sleep(300);
    }
    expect(await marks.allArrived(receiver, 30_000), daemon.logs()).toBe(true);
    await waitForReadsSince(daemon, Date.now(), MARKED_STREAMS);
    // At most one export (one page per stream) can be replayed by a kill between ack and checkpoint.
    expect(marks.replayed(receiver)).toBeLessThanOrEqual(2 * 3 * 2);
    expect(marks.wrong(receiver, true), daemon.logs()).toEqual([]);
    expect(await daemon.stop("SIGTERM")).toBe(0);
  }, 90_000);

  it("loses and doubles nothing while the collector answers 503 for a while, and stops fetching meanwhile", async () => {
    const { sim, receiver, start } = await setup(paging, protocol);
    const marks = new Marks(sim, `refuse-${paging}`, true);
    const daemon = await start();
    marks.write();
    expect(await marks.allArrived(receiver, 20_000), "tailers caught up before the outage").toBe(true);
    receiver.setFailing(503);
    marks.write();
    // The first refusal happens, and the daemon counts it: from then on the tailers fetch nothing.
    // Over http/json the OpenTelemetry SDK's exporter retries a refused export itself (5 attempts,
    // about 8 s of backoff with jitter up to a fifth) before the daemon sees the failure.
    await waitFor(
      "an export refused and counted by the daemon",
      async () => {
        if (receiver.requests.refused === 0) return false;
        const failures = metricValues(await scrape(daemon), "sitehost_exporter_log_export_failures_total");
        return failures.reduce((a, b) => a + b, 0) > 0;
      },
      { timeoutMs: 30_000 },
    );
    const pagesBefore = sim.control.stats().logPageRequests;
    // Six seconds of outage with lines written all along.
    for (let i = 0; i < 4; i++) {
      marks.write();
      await sleep(1500);
    }
    const pagesDuring = sim.control.stats().logPageRequests - pagesBefore;
    receiver.setFailing(null);
    expect(await marks.allArrived(receiver, 40_000), daemon.logs()).toBe(true);
    await waitForReadsSince(daemon, Date.now(), MARKED_STREAMS);
    expect(marks.wrong(receiver), daemon.logs()).toEqual([]);
    expect(receiver.requests.refused).toBeGreaterThan(0);
    // 6 tailers polling every second would make ~36 page requests in 6 s; backpressure keeps it to a few.
    expect(pagesDuring).toBeLessThanOrEqual(8);
    expect(await daemon.stop("SIGTERM")).toBe(0);
  }, 90_000);
});

describe("an OTLP endpoint that answers 400 to every export", () => {
  it("shows from outside (/-/ready, /-/status, /metrics) and loses nothing: every line arrives once it takes them", async () => {
    const { sim, receiver, start } = await setup("newest-first", "http/protobuf", {
      exportFailureWarnAfter: "2s",
    });
    const marks = new Marks(sim, "refused-400", true);
    const daemon = await start();
    marks.write();
    expect(await marks.allArrived(receiver, 20_000), "tailers caught up first").toBe(true);
    receiver.setAnswer(() => ({ status: 400, contentType: "text/plain", body: "unknown path" }));
    marks.write();
    let ready = "";
    await waitFor("/-/ready to say the endpoint refuses every export", async () => {
      const res = await fetch(`${daemon.url}/-/ready`);
      ready = await res.text();
      return res.status === 503 && ready.includes("refused every export");
    });
    expect(ready).toContain(`OTLP export to ${receiver.logsEndpoint} failed: HTTP 400: unknown path`);
    const status = (await (await fetch(`${daemon.url}/-/status`)).json()) as {
      logs: { health: string; refusing?: boolean };
      problems: Array<{ subject: string; reason: string; runbook?: string }>;
    };
    expect(status.logs).toMatchObject({ refusing: true });
    expect(status.problems).toContainEqual(
      expect.objectContaining({
        subject: `Log shipping to ${receiver.logsEndpoint}`,
        reason: expect.stringContaining("the endpoint refused every record: usually a wrong path"),
        runbook: expect.stringMatching(/#sitehostexporterlogexportsrefused$/),
      }),
    );
    const metrics = await scrape(daemon);
    expect(
      metricSum(metrics, "sitehost_exporter_log_exports_refused_total", 'reason="status"'),
    ).toBeGreaterThan(0);
    expect(metricSum(metrics, "sitehost_exporter_log_records_rejected_total")).toBe(0);

    receiver.setAnswer(null);
    expect(await marks.allArrived(receiver, 40_000), daemon.logs()).toBe(true);
    await waitForReadsSince(daemon, Date.now(), MARKED_STREAMS);
    expect(marks.wrong(receiver), daemon.logs()).toEqual([]);
    await waitFor("ready again", async () => (await fetch(`${daemon.url}/-/ready`)).status === 200);
    expect(await daemon.stop("SIGTERM")).toBe(0);
  }, 90_000);
});
