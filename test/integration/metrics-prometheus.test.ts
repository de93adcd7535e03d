/**
 * A real Prometheus scrapes the daemon running against the simulator: PromQL
 * sees every site and a known site's values as the simulator holds them, and
 * the exposition passes `promtool check metrics`.
 */
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.js";
import { startDaemonProcess, waitReady, type DaemonProcess } from "../helpers/daemon.js";
import { startPrometheus, type RunningPrometheus } from "../helpers/prometheus.js";

let sim: RunningSimulator;
let daemon: DaemonProcess;
let prom: RunningPrometheus;

beforeAll(async () => {
  sim = await startSimulator({ sites: 12, seed: 7 });
  daemon = await startDaemonProcess({ sim, config: { logs: { enabled: false } } });
  await waitReady(daemon.url);
  prom = await startPrometheus({
    scrapeTargets: [{ job: "sitehost-exporter", target: daemon.url.replace("http://", "") }],
  });
}, 120_000);

afterAll(async () => {
  await prom?.close();
  expect(await daemon?.stop()).toBe(0);
  await sim?.close();
});

describe("Prometheus scraping the daemon", () => {
  it("counts every site of the account", async () => {
    const result = await prom.waitFor("count(sitehost_site_info)", (r) => r.length === 1, 30_000);
    expect(result[0]?.value).toBe(12);
    const up = await prom.query('sitehost_up{job="sitehost-exporter"}');
    expect(up[0]?.value).toBe(1);
  });

  it("publishes a known site's storage and state as the platform reports them", async () => {
    const site = sim.control.sites()[3]!.site; // index 3 is the disabled site of the simulated fleet
    const used = await prom.waitFor(
      `sitehost_site_storage_used_bytes{site_id="${site.id}",store="filesystem"}`,
      (r) => r.length === 1,
      30_000,
    );
    expect(used[0]?.value).toBe(site.fileSystemUsageBytes);
    expect(used[0]?.metric.site).toBe(site.name);
    const state = await prom.query(`sitehost_site_state{site_id="${site.id}"} == 1`);
    expect(state.map((s) => s.metric.state)).toEqual(["disabled"]);
    const account = await prom.query('sitehost_account_sites{kind="total"}');
    expect(account[0]?.value).toBe(12);
  });

  it("serves an exposition that passes promtool check metrics", async () => {
    const body = await (await fetch(`${daemon.url}/metrics`)).text();
    const check = spawnSync("/usr/bin/promtool", ["check", "metrics"], { input: body, encoding: "utf8" });
    expect(check.stderr + check.stdout).toBe("");
    expect(check.status).toBe(0);
  });

  it("serves gzip when asked", async () => {
    const res = await fetch(`${daemon.url}/metrics`, { headers: { "accept-encoding": "gzip" } });
    expect(res.headers.get("content-encoding")).toBe("gzip");
    expect(await res.text()).toContain("sitehost_site_info{");
  });
});
