/**
 * The daemon against log pages that drift and paging that turns hostile (the simulator's fault knobs):
 * a continuation spelt `scrollId` and `total_results` sent as a string still deliver every line once,
 * and a scroll that loops back to its first page is stopped at the repeat, counted (a paging problem
 * and a gap), and read past, instead of paging and spooling for ever.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.js";
import { metricValue, scrape, startDaemonProcess, waitForReadsSince } from "../helpers/daemon.js";
import { startOtlpReceiver, type OtlpReceiver } from "../helpers/otlp-receiver.js";
import { waitFor } from "../helpers/wait.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

/** `count` web-server lines of the only site, `perSecond` to a second, ending `agoMs` ago. */
function burst(sim: RunningSimulator, name: string, count: number, perSecond: number, agoMs: number): void {
  const site = sim.control.sites()[0]?.site.id as number;
  const end = Date.now() - agoMs;
  const seconds = Math.ceil(count / perSecond);
  for (let i = 0; i < count; i++) {
    const at = end - (seconds - Math.floor(i / perSecond)) * 1000;
    sim.control.appendLog(site, "server", { request_url: `/${name}/${i}`, status: 200 }, at);
  }
}

/** Arrivals of each of a burst's lines, by path. */
function arrivals(receiver: OtlpReceiver, name: string): Map<string, number> {
  const got = new Map<string, number>();
  for (const r of receiver.records) {
    const path = r.attributes["url.path"];
    if (typeof path === "string" && path.startsWith(`/${name}/`)) got.set(path, (got.get(path) ?? 0) + 1);
  }
  return got;
}

describe("log tailing against drifting and hostile paging", () => {
  it("reads pages with scrollId and a string total_results in full, and stops a looping scroll, counted", async () => {
    const sim = await startSimulator({ sites: 1, seed: 5, logRatePerSite: 0 });
    sim.control.setFaults({ logScrollIdField: "scrollId", logTotalResultsForm: "string" });
    const receiver = await startOtlpReceiver();
    cleanups.push(
      () => sim.close(),
      () => receiver.close(),
    );
    // 450 lines: three pages of 200 (newest first), so the read must follow the continuation twice.
    // They end two minutes ago, so the lines written later are all newer than the checkpoint.
    burst(sim, "drift", 450, 10, 120_000);
    const daemon = await startDaemonProcess({
      sim,
      config: {
        logs: {
          ship: true,
          streams: ["server"],
          pollInterval: "1s",
          maxPollInterval: "2s",
          startFrom: "-10m",
        },
        collectors: { traffic: { enabled: false }, performance: { enabled: false } },
      },
      env: { OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: receiver.logsEndpoint },
    });
    cleanups.push(() => daemon.kill());
    await waitFor("all 450 drifted-page lines", () => arrivals(receiver, "drift").size === 450, {
      timeoutMs: 30_000,
      intervalMs: 250,
      last: () => daemon.logs().slice(-2000),
    });
    expect([...arrivals(receiver, "drift").values()].every((n) => n === 1)).toBe(true);

    // The scroll now returns to its first page after two: the read stops at the repeat.
    sim.control.setFaults({ logScrollLoopPages: 2 });
    burst(sim, "loop", 600, 20, 3000);
    await waitFor(
      "the looping scroll counted",
      async () => {
        const text = await scrape(daemon);
        return (
          (metricValue(text, "sitehost_exporter_log_paging_problems_total", 'problem="repeated_page"') ??
            0) >= 1 && (metricValue(text, "sitehost_exporter_log_gaps_total", 'stream="server"') ?? 0) >= 1
        );
      },
      { timeoutMs: 30_000, intervalMs: 250, last: () => daemon.logs().slice(-2000) },
    );
    // The two pages it could read arrive, once; the rest is the counted gap.
    await waitForReadsSince(daemon, Date.now(), 1);
    const loop = arrivals(receiver, "loop");
    expect(loop.size).toBe(400);
    expect([...loop.values()].every((n) => n === 1)).toBe(true);
    // And the stream is read on as usual, a page or two a read, not for ever.
    const pagesBefore = sim.control.stats().logPageRequests;
    await waitForReadsSince(daemon, Date.now(), 1);
    await waitForReadsSince(daemon, Date.now(), 1);
    expect(sim.control.stats().logPageRequests - pagesBefore).toBeLessThanOrEqual(12);
    expect(await daemon.stop("SIGTERM")).toBe(0);
  }, 90_000);
});
