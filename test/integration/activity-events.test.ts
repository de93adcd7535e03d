/**
 * Activity logs read on webhook events: with webhooks on, a site's activity log backs off to
 * logs.activityPollInterval (here 10 minutes), and an event for the site has its entry at the OTLP
 * receiver within seconds; an entry written without an event (nothing told the exporter) waits for
 * the safety poll. Each entry arrives once.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { startSimulator } from "../../src/simulator/index.js";
import { startActivityDaemon } from "../helpers/activityDaemon.js";
import { waitReady } from "../helpers/daemon.js";
import { startOtlpReceiver, type ReceivedRecord } from "../helpers/otlp-receiver.js";
import { freePort } from "../helpers/ports.js";
import { waitFor } from "../helpers/wait.js";

const TOKEN = "activity-events-token";
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const activityBodies = (records: readonly ReceivedRecord[]) =>
  records
    .filter((r) => r.attributes["sitehost.log.stream"] === "activity")
    .map((r) => (typeof r.body === "string" ? r.body : ""));

it("reads a site's activity log on its event, and not before the safety poll without one", async () => {
  const sim = await startSimulator({
    sites: 3,
    seed: 11,
    logRatePerSite: 0,
    accountActivityScope: "account",
  });
  const receiver = await startOtlpReceiver();
  const checkpointDir = await mkdtemp(join(tmpdir(), "sitehost-activity-events-it-"));
  const port = await freePort();
  cleanups.push(
    () => sim.close(),
    () => receiver.close(),
    () => rm(checkpointDir, { recursive: true, force: true }),
  );
  sim.control.setWebhookUrl(`http://127.0.0.1:${port}/webhook?token=${TOKEN}`);
  const daemon = await startActivityDaemon({
    sim,
    receiver,
    port,
    checkpointDir,
    webhookToken: TOKEN,
    activityPollInterval: "10m",
  });
  cleanups.push(() => daemon.kill());
  await waitReady(daemon.url, 30_000);
  await waitFor(
    "the activity checkpoints",
    async () => (await readdir(checkpointDir)).filter((f) => /activity.*\.json$/.test(f)).length >= 4,
    { timeoutMs: 20_000, intervalMs: 100 },
  );
  const [quiet, woken] = sim.control.sites().map((s) => s.site.id) as [number, number];

  // Backed off. A stream that has found nothing doubles its interval from logs.pollInterval (1 s)
  // towards 10 minutes, each wait shortened by at most 4 % (the scheduler's spread): waits of 1, 2,
  // ... 32 s, then 61.4 to 64 s. So 40 s without a read, counted at the simulator over all four
  // streams, means every stream is in a wait of at least 61.4 s that began before those 40 s: none
  // is read again for at least 21 s, time enough for the event below and its reads.
  const reads = () =>
    Object.entries(sim.control.stats().requests)
      .filter(([key]) => key.includes("/logs/activity "))
      .reduce((n, [, c]) => n + c, 0);
  let last = -1;
  let steadySince = performance.now();
  await waitFor(
    "activity reads backed off (none for 40 s)",
    () => {
      const now = reads();
      if (now !== last) {
        last = now;
        steadySince = performance.now();
      }
      return performance.now() - steadySince > 40_000;
    },
    { timeoutMs: 180_000, intervalMs: 500 },
  );

  // No event: an entry appended to the log alone is not read before the safety poll.
  sim.control.appendActivity({ name: "site.update", message: "without event", siteId: quiet });
  // An event: the SSH command's entry arrives within seconds.
  const before = reads();
  const sentAt = performance.now();
  sim.control.runSshCommand(woken, "wp plugin list");
  await waitFor(
    "the event's activity entry",
    () => activityBodies(receiver.records).some((b) => b.includes("wp plugin list")),
    { timeoutMs: 15_000, intervalMs: 100, last: () => JSON.stringify(activityBodies(receiver.records)) },
  );
  expect(performance.now() - sentAt).toBeLessThan(15_000);
  // The site's log and the account's, each read on the event and once more two poll intervals later.
  await waitFor("the reads and their follow-ups", () => reads() - before >= 4, {
    timeoutMs: 15_000,
    intervalMs: 100,
    last: () => String(reads() - before),
  });
  const bodies = activityBodies(receiver.records);
  expect(bodies.filter((b) => b.includes("wp plugin list"))).toHaveLength(1);
  expect(bodies.some((b) => b.includes("without event"))).toBe(false);
}, 300_000);
