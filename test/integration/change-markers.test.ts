/**
 * Change markers against the simulator's ground truth: a plugin install, a git deploy and a restore,
 * each told by its webhook event, its activity log entry and (deploy, restore) the platform's lists;
 * a maintenance toggle whose event is lost, told by the activity log alone; a command that changes
 * nothing. Each change is counted once, with its marker at the time it happened; a restart on the same
 * checkpoint directory keeps the markers and counts nothing again.
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

const TOKEN = "change-markers-token";
const EVERY_2S = { schedule: "*/2 * * * * *" };
const KINDS = ["deploy", "plugin", "theme", "restore", "php", "conversion", "maintenance", "access"];
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const totals = (text: string) =>
  Object.fromEntries(
    KINDS.map((kind) => [kind, metricValue(text, "sitehost_changes_total", `kind="${kind}"`)]),
  );
const marker = (text: string, siteId: number, kind: string) =>
  metricValue(text, "sitehost_site_change_timestamp_seconds", `site_id="${siteId}",site=`) === undefined
    ? undefined
    : text
        .split("\n")
        .filter((l) => l.startsWith("sitehost_site_change_timestamp_seconds{"))
        .filter((l) => l.includes(`site_id="${siteId}"`) && l.includes(`kind="${kind}"`))
        .map((l) => Number(l.slice(l.lastIndexOf(" ") + 1)))[0];
const reports = (text: string, source: string, outcome: string) =>
  metricValue(text, "sitehost_exporter_change_reports_total", `source="${source}",outcome="${outcome}"`) ?? 0;

it("counts each change once, from whichever sources told it, and keeps the markers across a restart", async () => {
  const sim = await startSimulator({
    sites: 4,
    seed: 17,
    logRatePerSite: 0,
    accountActivityScope: "account",
    gitEventPayload: "site",
  });
  const receiver = await startOtlpReceiver();
  const checkpointDir = await mkdtemp(join(tmpdir(), "sitehost-change-markers-it-"));
  const port = await freePort();
  cleanups.push(
    () => sim.close(),
    () => receiver.close(),
    () => rm(checkpointDir, { recursive: true, force: true }),
  );
  const start = () =>
    startActivityDaemon({
      sim,
      receiver,
      port,
      checkpointDir,
      webhookToken: TOKEN,
      activityPollInterval: "3s",
      collectors: { inventory: { schedule: "*/5 * * * * *" }, git: EVERY_2S, backups: EVERY_2S },
    });
  const [plugged, deployed, restored, paused] = sim.control.sites().map((s) => s.site.id) as [
    number,
    number,
    number,
    number,
  ];
  // Enrolled before the start: a site that is not is asked again only a day later.
  sim.control.enrollGit(deployed);
  let daemon: DaemonProcess = await start();
  cleanups.push(() => daemon.kill());
  await waitReady(daemon.url, 30_000);
  // What the lists held before (the simulator's history of the last day) is counted first: the
  // changes below are what is counted after it.
  let text = "";
  const lastRun = (t: string, collector: string) =>
    metricValue(t, "sitehost_exporter_collector_last_success_timestamp_seconds", `collector="${collector}"`);
  await waitFor(
    "the first runs of the git and backups collectors",
    async () => {
      text = await scrape(daemon);
      return lastRun(text, "git") !== undefined && lastRun(text, "backups") !== undefined;
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  const first = text;
  await waitFor(
    "their second runs",
    async () => {
      const t = await scrape(daemon);
      return (
        (lastRun(t, "git") ?? 0) > (lastRun(first, "git") ?? 0) &&
        (lastRun(t, "backups") ?? 0) > (lastRun(first, "backups") ?? 0)
      );
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  const before = totals(await scrape(daemon));

  // Events lost: the maintenance toggle is told by the activity log alone.
  const pausedAt = Date.now();
  sim.control.setMaintenanceMode(paused, true);
  sim.control.setWebhookUrl(`http://127.0.0.1:${port}/webhook?token=${TOKEN}`);
  const pluggedAt = Date.now();
  sim.control.installPlugin(plugged, { path: "akismet/akismet.php", version: "5.3" });
  const deployedAt = Date.now();
  sim.control.recordDeploy(deployed);
  const restoredAt = Date.now();
  sim.control.restoreSite(restored);
  sim.control.runSshCommand(plugged, "wp plugin list");
  await sim.control.webhooksIdle();

  const expected = { ...before };
  for (const kind of ["plugin", "deploy", "restore", "maintenance"]) expected[kind] = (before[kind] ?? 0) + 1;
  // Every source has told what it will: the activity entries (4), the deploy and restore lists.
  await waitFor(
    "every report of the changes",
    async () => {
      text = await scrape(daemon);
      return (
        reports(text, "activity", "new") + reports(text, "activity", "merged") >= 4 &&
        reports(text, "git", "merged") >= 1 &&
        reports(text, "restores", "merged") >= 1
      );
    },
    {
      timeoutMs: 30_000,
      intervalMs: 200,
      last: () =>
        text
          .split("\n")
          .filter((l) => l.includes("change"))
          .join("\n"),
    },
  );
  expect(totals(text)).toEqual(expected);
  // Each marker at the time of its change (the activity entry's, to the second).
  for (const [siteId, kind, at] of [
    [plugged, "plugin", pluggedAt],
    [deployed, "deploy", deployedAt],
    [restored, "restore", restoredAt],
    [paused, "maintenance", pausedAt],
  ] as const)
    expect(Math.abs((marker(text, siteId, kind) ?? 0) * 1000 - at), `${kind} on ${siteId}`).toBeLessThan(
      3000,
    );
  expect(reports(text, "webhook", "merged") + reports(text, "webhook", "new")).toBe(3);

  // A restart: the markers stay; the entries and lists read again count nothing.
  await daemon.stop();
  daemon = await start();
  await waitReady(daemon.url, 30_000);
  await waitFor(
    "the markers after the restart, and the lists read again",
    async () => {
      text = await scrape(daemon);
      return (
        marker(text, plugged, "plugin") !== undefined &&
        reports(text, "git", "repeat") > 0 &&
        reports(text, "restores", "repeat") > 0
      );
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  expect(marker(text, paused, "maintenance")).toBeDefined();
  expect(Object.values(totals(text)).reduce((a, b) => (a ?? 0) + (b ?? 0), 0)).toBe(0);
}, 180_000);
