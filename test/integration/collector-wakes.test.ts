/**
 * Collectors that back off for unchanged sites, woken by a webhook event: the backups collector runs
 * every second and its sites' answers stay the same, so they are asked 1, 2, 4, 8, 16, then about 32 s
 * apart; a failed restore's event (site_restore_failed) has the site's restores read at the next run,
 * seconds later, while no site was due for many seconds yet.
 */
import { afterEach, expect, it } from "vitest";
import { COLLECTOR_NAMES } from "../../src/config/schema.js";
import { startSimulator } from "../../src/simulator/index.js";
import { metricValue, scrape, startDaemonProcess, waitReady } from "../helpers/daemon.js";
import { freePort } from "../helpers/ports.js";
import { waitFor } from "../helpers/wait.js";

const TOKEN = "collector-wakes-token";
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

it("a webhook event about a site reads it at the next run of a collector that had backed off", async () => {
  const sim = await startSimulator({ sites: 3, seed: 11, logRatePerSite: 0 });
  cleanups.push(() => sim.close());
  const port = await freePort();
  sim.control.setWebhookUrl(`http://127.0.0.1:${port}/webhook?token=${TOKEN}`);
  const daemon = await startDaemonProcess({
    sim,
    port,
    config: {
      webhooks: { enabled: true },
      logs: { enabled: false },
      collectors: {
        ...Object.fromEntries(
          COLLECTOR_NAMES.filter((c) => c !== "inventory").map((c) => [c, { enabled: false }]),
        ),
        backups: { enabled: true, schedule: "* * * * * *", maxInterval: "1h" },
      },
    },
    env: { SITEHOST_WEBHOOK_TOKEN: TOKEN },
  });
  cleanups.push(() => daemon.kill());
  await waitReady(daemon.url, 30_000);

  // Backed off: no site asked for 20 s. A site asked last 16 s (or less) apart would have been asked
  // again within them; so every site now waits at least 32 s less the spread (25.6 s) from its last read,
  // and nothing is due for at least another 5.6 s.
  const backupReads = () =>
    Object.entries(sim.control.stats().requests)
      .filter(([key]) => key.startsWith("GET /sites/{id}/backups "))
      .reduce((sum, [, n]) => sum + n, 0);
  expect(backupReads()).toBeGreaterThan(0);
  let last = { reads: backupReads(), at: performance.now() };
  await waitFor(
    "20 s without a backups request",
    () => {
      const reads = backupReads();
      if (reads !== last.reads) last = { reads, at: performance.now() };
      return performance.now() - last.at >= 20_000;
    },
    { timeoutMs: 120_000, intervalMs: 100 },
  );

  const [siteId] = sim.control.sites().map((s) => s.site.id) as [number];
  const before = backupReads();
  const eventAt = performance.now();
  sim.control.restoreSite(siteId, { fail: true });
  await sim.control.webhooksIdle();
  const failed = `site_id="${siteId}"`;
  await waitFor(
    "the failed restore in sitehost_site_restore_last_state",
    async () =>
      metricValue(await scrape(daemon), "sitehost_site_restore_last_state", `${failed},`) !== undefined &&
      (await scrape(daemon))
        .split("\n")
        .some(
          (l) =>
            l.startsWith("sitehost_site_restore_last_state{") &&
            l.includes(failed) &&
            l.includes('state="failed"} 1'),
        ),
    { timeoutMs: 5_000, intervalMs: 100 },
  );
  expect(performance.now() - eventAt).toBeLessThan(5_600);
  // Only the woken site was asked (one listing of its backups), not every site.
  expect(backupReads() - before).toBe(1);
}, 180_000);
