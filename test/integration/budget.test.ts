/**
 * A new user with 1,000 sites and the default request budget: within 45 s the exporter says that its
 * schedules and log streams plan more requests than the budget, with the numbers and the ways out, in
 * its log, its gauges and its landing page.
 */
import { afterEach, expect, it } from "vitest";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.js";
import { startDaemonProcess, type DaemonProcess } from "../helpers/daemon.js";
import { waitFor } from "../helpers/wait.js";

let sim: RunningSimulator | undefined;
let daemon: DaemonProcess | undefined;
afterEach(async () => {
  await daemon?.stop();
  await sim?.close();
});

it("1,000 sites on the default budget: the warning, the plan and the budget gauges within 45 s", async () => {
  sim = await startSimulator({ sites: 1000 });
  daemon = await startDaemonProcess({
    sim,
    config: {
      api: { maxRequestsPerSecond: 20, maxConcurrency: 8 },
      logs: { pollInterval: "30s", maxPollInterval: "5m" },
      // Every site's traffic once a minute (busy or idle): the demand the assertions below are made of.
      collectors: { traffic: { schedule: "0 * * * * *", maxInterval: "1m" } },
    },
  });
  const d = daemon;
  let metrics = "";
  await waitFor(
    "the budget warning and the logs' planned rate",
    async () => {
      metrics = await (await fetch(`${d.url}/metrics`)).text();
      return (
        d.logs().includes("but the budget (api.maxRequestsPerSecond) is") &&
        /sitehost_exporter_api_planned_requests_per_second\{source="logs"\} [1-9]/.test(metrics)
      );
    },
    { timeoutMs: 45_000, intervalMs: 250, last: () => d.logs().slice(-3000) },
  );
  expect(metrics).toContain("sitehost_exporter_api_budget_requests_per_second 20");
  const planned = [
    ...metrics.matchAll(/^sitehost_exporter_api_planned_requests_per_second\{source="(\w+)"\} ([\d.]+)$/gm),
  ];
  const bySource: Record<string, number> = Object.fromEntries(planned.map((m) => [m[1], Number(m[2])]));
  // traffic: 1,000 sites once a minute; logs: 3,001 streams at least once per 5 minutes.
  expect(bySource.traffic).toBeCloseTo(1000 / 60, 1);
  expect(bySource.logs).toBeGreaterThanOrEqual(3001 / 300 - 0.01);
  const total = Object.values(bySource).reduce((a, b) => a + b, 0);
  expect(total).toBeGreaterThan(20);
  const warning = daemon
    .logs()
    .split("\n")
    .find((l) => l.includes("but the budget (api.maxRequestsPerSecond) is"));
  expect(warning).toContain("raise api.maxRequestsPerSecond");
  expect(warning).toContain("sites.shard");
  const landing = await (await fetch(`${daemon.url}/`)).text();
  // The status page puts the budget among what is wrong, with the same ways out.
  expect(landing).toContain("<strong>Request budget</strong>");
  expect(landing).toContain("raise api.maxRequestsPerSecond");
}, 60_000);
