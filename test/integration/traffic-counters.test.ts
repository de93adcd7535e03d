/**
 * The traffic counters against the simulator's ground truth: the built daemon runs through skipped
 * runs, a 20-minute API outage and a restart while a real Prometheus scrapes it, and the counters'
 * increase() must equal the requests and bytes of exactly the periods between where counting began
 * and the newest settled period: nothing lost, nothing counted twice, no reset seen by Prometheus.
 *
 * The simulator's clock runs 60 times faster than the daemon's (a simulated minute, one traffic
 * period, passes each real second), so an hour of traffic takes about a minute. The daemon polls
 * every second; its settle delay and the hour-long window are read from the answers, in the
 * simulator's time. The clock is held still at the start and at the end, so the first and last
 * periods counted are known exactly.
 */
import { afterEach, describe, expect, it } from "vitest";
import { COLLECTOR_NAMES } from "../../src/config/schema.js";
import { startSimulator } from "../../src/simulator/index.js";
import { trafficTruth } from "../../src/simulator/responses.js";
import { metricValue, scrape, startDaemonProcess, type DaemonProcess } from "../helpers/daemon.js";
import { freePort } from "../helpers/ports.js";
import { startPrometheus } from "../helpers/prometheus.js";
import { waitFor } from "../helpers/wait.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

/** The collectors turned off: only discovery and traffic run. */
const NOT_TRAFFIC = COLLECTOR_NAMES.filter((c) => c !== "inventory" && c !== "traffic");
/** Simulated ms per real ms while the clock runs. */
const SPEED = 60;
const SETTLE_S = 120;
const PERIOD_S = 60;

/** A clock that is held still or runs SPEED times faster than the real one. */
class SimClock {
  private anchorSim: number;
  private anchorReal = Date.now();
  private running = false;

  constructor(startMs: number) {
    this.anchorSim = startMs;
  }

  readonly now = (): number =>
    this.running ? this.anchorSim + (Date.now() - this.anchorReal) * SPEED : this.anchorSim;

  run(): void {
    this.anchorSim = this.now();
    this.anchorReal = Date.now();
    this.running = true;
  }

  /** Hold still; returns the time held, epoch ms. */
  hold(): number {
    this.anchorSim = this.now();
    this.running = false;
    return this.anchorSim;
  }

  /** Resolves once `minutes` simulated minutes have passed. */
  async passes(minutes: number): Promise<void> {
    const until = this.now() + minutes * 60_000;
    await waitFor(`${minutes} simulated minutes`, () => this.now() >= until, {
      timeoutMs: (minutes * 60_000) / SPEED + 10_000,
      intervalMs: 100,
    });
  }
}

type Total = "requests" | "bytes";
type Cached = "true" | "false";
const SERIES: Record<Total, string> = {
  requests: "sitehost_site_requests_total",
  bytes: "sitehost_site_response_bytes_total",
};

/** The traffic counters in an exposition. */
function counterValues(text: string): Array<{ site: number; total: Total; cached: Cached; value: number }> {
  const out: Array<{ site: number; total: Total; cached: Cached; value: number }> = [];
  for (const line of text.split("\n")) {
    for (const total of ["requests", "bytes"] as const) {
      if (!line.startsWith(`${SERIES[total]}{`)) continue;
      const site = Number(/site_id="(\d+)"/.exec(line)?.[1]);
      const cached = /cached="(true|false)"/.exec(line)?.[1] as Cached;
      out.push({ site, total, cached, value: Number(line.slice(line.lastIndexOf(" ") + 1)) });
    }
  }
  return out;
}

/** The end (epoch s) of the newest period counted by an answer at `nowMs`: it settled by then. */
const settledThrough = (nowMs: number) =>
  Math.floor((Math.floor(nowMs / 1000) - SETTLE_S) / PERIOD_S) * PERIOD_S;

describe("traffic counters against the ground truth", () => {
  it("count every period once across skipped runs, a 20-minute outage and a restart", async () => {
    // Half past a minute, so that the counting bounds are clear of any period's edge.
    const clock = new SimClock(Math.floor(Date.now() / 60_000) * 60_000 + 30_000);
    const sim = await startSimulator({
      sites: 3,
      seed: 22,
      now: clock.now,
      tokenLifetimeSeconds: 10_000_000,
    });
    cleanups.push(() => sim.close());
    const sites = sim.control.sites().map((s) => s.site.id);
    // A live site nobody visits: adaptive polling spaces its requests out; its counters stay at zero.
    const idle = sim.control.sites().find((s) => !s.site.staging && !s.site.sandbox && !s.site.kit);
    if (!idle) throw new Error("the simulated fleet has no live site");
    sim.control.setPeakTraffic(idle.site.id, 0);

    const port = await freePort();
    let daemon: DaemonProcess | undefined;
    const start = async (checkpointDir?: string) => {
      const d = await startDaemonProcess({
        sim,
        port,
        ...(checkpointDir ? { checkpointDir } : {}),
        config: {
          logs: { enabled: false },
          collectors: {
            ...Object.fromEntries(NOT_TRAFFIC.map((c) => [c, { enabled: false }])),
            // Every (real) second; the slowest sites at most every 4 s, four simulated minutes.
            traffic: { schedule: "* * * * * *", maxInterval: "4s" },
          },
        },
      });
      cleanups.push(() => d.kill());
      return d;
    };
    const prometheus = await startPrometheus({
      scrapeTargets: [{ job: "sitehost", target: `127.0.0.1:${port}` }],
    });
    cleanups.push(() => prometheus.close());
    const metric = async (name: string, labels = "") =>
      daemon ? metricValue(await scrape(daemon).catch(() => ""), name, labels) : undefined;

    // Counting begins, clock held: at the newest period settled at the first answer, from zero.
    const from = settledThrough(clock.now());
    daemon = await start();
    await prometheus.waitFor(
      "count(sitehost_site_requests_total)",
      (r) => r[0]?.value === sites.length * 2,
      30_000,
    );
    clock.run();
    await clock.passes(6);

    // Skipped runs: each request takes 1.5 s, each run longer than the second between ticks.
    const skipped =
      (await metric("sitehost_exporter_collector_skipped_runs_total", 'collector="traffic"')) ?? 0;
    sim.control.setFaults({ latencyMs: 1500 });
    await waitFor(
      "skipped traffic runs",
      async () =>
        ((await metric("sitehost_exporter_collector_skipped_runs_total", 'collector="traffic"')) ?? 0) >=
        skipped + 3,
      { timeoutMs: 20_000 },
    );
    sim.control.setFaults({ latencyMs: 0 });
    await clock.passes(4);

    // An outage of 20 simulated minutes: every request answered 500.
    sim.control.setFaults({ errorRate: 1 });
    await clock.passes(20);
    expect(
      await metric("sitehost_exporter_collector_runs_total", 'collector="traffic",result="failure"'),
    ).toBeGreaterThan(0);
    sim.control.setFaults({ errorRate: 0 });
    await clock.passes(4);

    // A restart on the same checkpoint directory, simulated minutes passing while it is down.
    const { checkpointDir } = daemon;
    expect(await daemon.stop()).toBe(0);
    daemon = undefined;
    await clock.passes(3);
    daemon = await start(checkpointDir);
    await clock.passes(8);

    // Hold the clock; every site is asked again and counts through the newest settled period.
    const to = settledThrough(clock.hold());
    const truth = new Map(
      sites.map((id) => {
        const data = sim.control.site(id);
        if (!data) throw new Error(`no site ${id}`);
        return [id, trafficTruth(data, from, to)];
      }),
    );
    expect(truth.get(idle.site.id)?.requests).toEqual({ true: 0, false: 0 });
    const expected = (id: number, total: Total, cached: Cached) => truth.get(id)?.[total][cached] ?? NaN;
    let seen: ReturnType<typeof counterValues> = [];
    await waitFor(
      "every site's counters at the truth",
      async () => {
        const now = (seen = daemon ? counterValues(await scrape(daemon)) : []);
        return (
          now.length === sites.length * 4 &&
          now.every(
            (c) => Math.abs(c.value - expected(c.site, c.total, c.cached)) <= 1e-6 * Math.max(1, c.value),
          )
        );
      },
      {
        timeoutMs: 20_000,
        last: () => JSON.stringify({ from, to, seen, truth: [...truth] }),
      },
    );

    // What Prometheus makes of it: no reset (a restart that resumed below a published value would
    // be one), and the increase over the whole run, evaluated at a sample scraped after
    // the daemon reached it, is the truth.
    const matchedAt = Date.now() / 1000;
    const last = await prometheus.waitFor(
      `min(timestamp(${SERIES.requests}))`,
      (r) => (r[0]?.value ?? 0) > matchedAt,
      10_000,
    );
    const at = (last[0] as { value: number }).value;
    for (const total of ["requests", "bytes"] as const) {
      const resets = await prometheus.query(`max(resets(${SERIES[total]}[10m]))`, at);
      expect(resets[0]?.value).toBe(0);
      const increases = await prometheus.query(`increase(${SERIES[total]}[10m])`, at);
      expect(increases).toHaveLength(sites.length * 2);
      for (const s of increases) {
        const want = expected(Number(s.metric.site_id), total, s.metric.cached as Cached);
        expect(
          Math.abs(s.value - want),
          `${total} ${JSON.stringify(s.metric)}: ${s.value} vs ${want}`,
        ).toBeLessThanOrEqual(1e-6 * Math.max(1, want));
      }
    }
    expect(await metric("sitehost_exporter_traffic_periods_missed_total")).toBe(0);
  }, 240_000);
});
