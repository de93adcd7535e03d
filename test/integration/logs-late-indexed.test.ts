/**
 * A platform that lists log entries by when it indexed them, with some stamped seconds to minutes
 * before entries listed after them: the simulator's newest-indexed-first paging, 5 % of its entries
 * indexed up to 30 s late, and marked lines stamped up to 10 minutes back when indexed. Across a
 * collector that refuses for a while and a SIGKILL and restart, every marked line arrives at a real
 * OTLP receiver exactly once (a replay of the last export a kill can cause aside, told by its uid).
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { startSimulator } from "../../src/simulator/index.js";
import { sleep } from "../../src/util/time.js";
import { startDaemonProcess, waitForReadsSince, type DaemonProcess } from "../helpers/daemon.js";
import { Marks } from "../helpers/log-marks.js";
import { startOtlpReceiver } from "../helpers/otlp-receiver.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

it("ships every line once, however late it was indexed, across an outage and a restart", async () => {
  const sim = await startSimulator({ sites: 3, seed: 12, logRatePerSite: 2 });
  sim.control.setLogPaging("newest-indexed-first", "snapshot");
  sim.control.setFaults({ lateLogFraction: 0.05, lateLogMaxSeconds: 30 });
  const receiver = await startOtlpReceiver();
  const checkpointDir = await mkdtemp(join(tmpdir(), "sitehost-late-it-"));
  cleanups.push(
    () => sim.close(),
    () => receiver.close(),
  );
  const start = async (): Promise<DaemonProcess> => {
    const d = await startDaemonProcess({
      sim,
      checkpointDir,
      config: {
        logs: { ship: true, pollInterval: "1s", maxPollInterval: "4s", startFrom: "now", overlap: "2m" },
        collectors: { traffic: { enabled: false }, performance: { enabled: false } },
      },
      env: { OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: receiver.logsEndpoint },
    });
    cleanups.push(() => d.kill());
    return d;
  };
  const marks = new Marks(sim, "late", true);
  let daemon = await start();
  marks.write();
  expect(await marks.allArrived(receiver, 30_000), marks.wrong(receiver).join("\n")).toBe(true);
  // Lines on time and late (5 s, 1 min, 10 min), between reads.
  for (const late of [0, 5_000, 0, 60_000, 0, 600_000, 0]) {
    marks.write(late);
    await sleep(400);
  }
  // The collector refuses for a while; a line 10 minutes late comes in the meantime.
  receiver.setFailing(503);
  for (const late of [0, 600_000, 0]) {
    marks.write(late);
    await sleep(1000);
  }
  receiver.setFailing(null);
  expect(await marks.allArrived(receiver, 40_000), marks.wrong(receiver).join("\n")).toBe(true);
  await daemon.kill();
  for (const late of [0, 120_000, 0]) marks.write(late);
  daemon = await start();
  for (const late of [0, 300_000, 0]) {
    marks.write(late);
    await sleep(500);
  }
  expect(await marks.allArrived(receiver, 40_000), marks.wrong(receiver).join("\n")).toBe(true);
  await waitForReadsSince(daemon, Date.now(), 6);
  expect(marks.wrong(receiver, true), daemon.logs()).toEqual([]);
  expect(await daemon.stop("SIGTERM")).toBe(0);
}, 150_000);
