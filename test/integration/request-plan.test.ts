/**
 * The request plan against what the exporter measures: with logs on, idle or trickling streams, one
 * busy web-server log and every site serving traffic (so the traffic hints come at every traffic run),
 * the planned requests of the log streams and of the traffic polls agree with the measured cost per
 * site-hour within a fifth, and with the requests the simulator counted. The schedules are seconds
 * long so that a steady state comes within a minute; the measurement's window (30 minutes) is not
 * complete in the minutes the test runs, so the measurement so far is read from /-/status, and
 * sitehost_exporter_api_requests_per_site_hour holds the plan meanwhile.
 */
import { afterEach, expect, it } from "vitest";
import { COLLECTOR_NAMES } from "../../src/config/schema.js";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.js";
import { metricValue, scrape, startDaemonProcess, type DaemonProcess } from "../helpers/daemon.js";
import { waitFor } from "../helpers/wait.js";

let sim: RunningSimulator | undefined;
let daemon: DaemonProcess | undefined;
afterEach(async () => {
  await daemon?.stop();
  await sim?.close();
});

const SITES = 8;
const OFF = COLLECTOR_NAMES.filter((c) => c !== "inventory" && c !== "traffic");

/** The measured cost per site-hour so far of a source, from /-/status. */
async function measuredSoFar(d: DaemonProcess, source: string): Promise<number | undefined> {
  const status = (await (await fetch(`${d.url}/-/status`)).json()) as {
    budget?: { sources?: Array<{ source: string; measuredPerSiteHour?: number }> };
  };
  return status.budget?.sources?.find((s) => s.source === source)?.measuredPerSiteHour;
}

/** Requests the simulator answered on these routes so far. */
function counted(s: RunningSimulator, match: RegExp): number {
  return Object.entries(s.control.stats().requests)
    .filter(([key]) => match.test(key))
    .reduce((sum, [, n]) => sum + n, 0);
}

/**
 * The fleets, on intervals scaled down from the defaults (30 s and 5 m): idle streams with one busy
 * web-server log (60 entries a second, read at every poll interval), trickling streams (0.5 entries a
 * second each, two or so per read at logs.maxPollInterval: a few an hour at the defaults) with the
 * same busy one, and every stream busy (12 a second at a 5 s poll interval: read at every one).
 */
const FLEETS = [
  { fleet: "idle", logRatePerSite: 0, pollInterval: "1s", maxPollInterval: "4s" },
  { fleet: "trickle", logRatePerSite: 0.5, pollInterval: "1s", maxPollInterval: "4s" },
  { fleet: "busy", logRatePerSite: 12, pollInterval: "5s", maxPollInterval: "20s" },
];

it.each(FLEETS)(
  "$fleet: plans what the log streams and the traffic polls measure, within a fifth",
  async ({ logRatePerSite, pollInterval, maxPollInterval }) => {
    sim = await startSimulator({ sites: SITES, seed: 23, logRatePerSite });
    const busy = sim.control.sites()[0]?.site.id as number;
    sim.control.setFaults({ webFaults: [{ siteId: busy, rate: 60 }] });
    daemon = await startDaemonProcess({
      sim,
      config: {
        logs: { pollInterval, maxPollInterval },
        collectors: {
          ...Object.fromEntries(OFF.map((c) => [c, { enabled: false }])),
          traffic: { schedule: "*/5 * * * * *", maxInterval: "20s" },
        },
      },
    });
    const d = daemon;
    const started = {
      logs: counted(sim, /\/logs\//),
      traffic: counted(sim, /\/metrics /),
      at: performance.now(),
    };

    // The measured rates are sampled each minute since the start: wait for the second value (two
    // minutes of measurement), when start-up is a small part of the window.
    const seen: Array<number | undefined> = [];
    await waitFor(
      "two minutes of measured rates",
      async () => {
        const logs = await measuredSoFar(d, "logs");
        if (logs !== undefined && logs !== seen[seen.length - 1]) seen.push(logs);
        return seen.length >= 2;
      },
      { timeoutMs: 200_000, intervalMs: 1000, last: () => JSON.stringify(seen) },
    );
    const seconds = (performance.now() - started.at) / 1000;
    const text = await scrape(d);
    for (const source of ["logs", "traffic"] as const) {
      const planned =
        ((metricValue(text, "sitehost_exporter_api_planned_requests_per_second", `source="${source}"`) ??
          NaN) *
          3600) /
        SITES;
      const measured = (await measuredSoFar(d, source)) ?? NaN;
      // Not measured over its window yet: the metric is the plan.
      expect(
        metricValue(text, "sitehost_exporter_api_requests_per_site_hour_measured", `source="${source}"`),
      ).toBe(0);
      const published =
        metricValue(text, "sitehost_exporter_api_requests_per_site_hour", `source="${source}"`) ?? NaN;
      expect(
        Math.abs(published - planned) / planned,
        `${source}: published ${published}`,
      ).toBeLessThanOrEqual(0.2);
      const atSimulator =
        (((counted(sim, source === "logs" ? /\/logs\// : /\/metrics /) - started[source]) / seconds) * 3600) /
        SITES;
      const detail = `${source}: planned ${planned.toFixed(1)}, measured ${measured.toFixed(1)}, counted at the simulator ${atSimulator.toFixed(1)} per site-hour`;
      expect(Math.abs(measured - planned) / planned, detail).toBeLessThanOrEqual(0.2);
      expect(Math.abs(atSimulator - planned) / planned, detail).toBeLessThanOrEqual(0.2);
    }
  },
  240_000,
);
