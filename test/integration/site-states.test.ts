/**
 * Maintenance mode and hacked, by site, when the platform's webhooks do not arrive: the exporter has
 * webhooks on, but the simulator delivers none (lost during a restart or an outage), so the activity
 * log's next read (its safety poll, every 3 s here) shows the states, each counted as a correction.
 * Once events arrive, one turns maintenance off at once. A restart on the same checkpoint directory
 * shows what was learnt before it: the activity log resumes after what it shipped (the account log
 * lists only account entries here, so no stream meets the site entries again).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { startSimulator } from "../../src/simulator/index.js";
import { startActivityDaemon } from "../helpers/activityDaemon.js";
import { metricValue, scrape, waitReady, type DaemonProcess } from "../helpers/daemon.js";
import { startOtlpReceiver } from "../helpers/otlp-receiver.js";
import { freePort } from "../helpers/ports.js";
import { waitFor } from "../helpers/wait.js";

const TOKEN = "site-states-token";
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

async function gauge(daemon: DaemonProcess, name: string, siteId: number): Promise<number | undefined> {
  return metricValue(await scrape(daemon), name, `site_id="${siteId}"`);
}

it("shows a site's maintenance mode and hacked state from its activity log when the events are lost", async () => {
  const sim = await startSimulator({ sites: 3, seed: 5, logRatePerSite: 0, accountActivityScope: "account" });
  const receiver = await startOtlpReceiver();
  const checkpointDir = await mkdtemp(join(tmpdir(), "sitehost-site-states-it-"));
  cleanups.push(
    () => sim.close(),
    () => receiver.close(),
    () => rm(checkpointDir, { recursive: true, force: true }),
  );
  const port = await freePort();
  const start = () =>
    startActivityDaemon({
      sim,
      receiver,
      port,
      checkpointDir,
      webhookToken: TOKEN,
      activityPollInterval: "3s",
    });
  let daemon = await start();
  cleanups.push(() => daemon.kill());
  await waitReady(daemon.url, 30_000);
  const [paused, hacked, quiet] = sim.control.sites().map((s) => s.site.id) as [number, number, number];
  expect(await gauge(daemon, "sitehost_site_maintenance_mode", paused)).toBe(0);
  expect(await gauge(daemon, "sitehost_site_hacked", hacked)).toBe(0);

  // No webhook URL at the simulator: the events are lost.
  sim.control.setMaintenanceMode(paused, true);
  sim.control.hackSite(hacked);
  await waitFor(
    "maintenance and hacked from the activity logs",
    async () =>
      (await gauge(daemon, "sitehost_site_maintenance_mode", paused)) === 1 &&
      (await gauge(daemon, "sitehost_site_hacked", hacked)) === 1,
    { timeoutMs: 20_000, intervalMs: 200 },
  );
  // Self-metrics are rendered at most once a second or so: waited for, not read at once.
  const corrections = (text: string, state: string) =>
    metricValue(text, "sitehost_exporter_site_state_corrections_total", `state="${state}",source="activity"`);
  let text = "";
  await waitFor(
    "each counted as a correction",
    async () => {
      text = await scrape(daemon);
      return corrections(text, "maintenance") === 1 && corrections(text, "hacked") === 1;
    },
    { timeoutMs: 10_000, intervalMs: 200, last: () => text },
  );
  expect(metricValue(text, "sitehost_site_maintenance_mode", `site_id="${quiet}"`)).toBe(0);
  expect(metricValue(text, "sitehost_site_hacked", `site_id="${quiet}"`)).toBe(0);

  // Events arrive again: maintenance off at once (well before the next safety poll could matter), no correction.
  sim.control.setWebhookUrl(`http://127.0.0.1:${port}/webhook?token=${TOKEN}`);
  sim.control.setMaintenanceMode(paused, false);
  await sim.control.webhooksIdle();
  expect(await gauge(daemon, "sitehost_site_maintenance_mode", paused)).toBe(0);
  sim.control.setMaintenanceMode(paused, true);
  await sim.control.webhooksIdle();
  expect(await gauge(daemon, "sitehost_site_maintenance_mode", paused)).toBe(1);

  // A restart: what was learnt is shown from the start, before any new entry.
  await daemon.stop();
  daemon = await start();
  await waitReady(daemon.url, 30_000);
  await waitFor(
    "the states after the restart",
    async () =>
      (await gauge(daemon, "sitehost_site_maintenance_mode", paused)) === 1 &&
      (await gauge(daemon, "sitehost_site_hacked", hacked)) === 1,
    { timeoutMs: 30_000, intervalMs: 200, last: () => daemon.logs().slice(-3000) },
  );
  text = await scrape(daemon);
  expect(corrections(text, "maintenance")).toBe(0);
}, 180_000);
