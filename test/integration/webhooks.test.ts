/**
 * Webhooks end to end over loopback: the simulator delivers its events to the built daemon (a child
 * process), which refreshes the site at once and ships the event to a real OTLP receiver, exactly
 * once, also when the daemon is killed after accepting an event the collector had not yet taken.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { COLLECTOR_NAMES } from "../../src/config/schema.js";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.js";
import { startDaemonProcess, waitReady, type DaemonProcess } from "../helpers/daemon.js";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedRecord } from "../helpers/otlp-receiver.js";
import { freePort } from "../helpers/ports.js";
import { waitFor } from "../helpers/wait.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const TOKEN = randomBytes(24).toString("hex");
/** The value of one series of the daemon's /metrics (labels given as they are rendered), or undefined. */
async function sample(url: string, series: string): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

function webhookRecords(receiver: OtlpReceiver, event: string): ReceivedRecord[] {
  return receiver.records.filter(
    // The event is the record's EventName field (OTLP event_name).
    (r) => r.attributes["sitehost.log.stream"] === "webhook" && r.eventName === event,
  );
}

async function setup() {
  const sim = await startSimulator({ sites: 4, seed: 23, logRatePerSite: 0, webhookBackoffMs: 300 });
  const receiver = await startOtlpReceiver();
  const checkpointDir = await mkdtemp(join(tmpdir(), "sitehost-webhooks-it-"));
  const port = await freePort();
  cleanups.push(
    () => sim.close(),
    () => receiver.close(),
    () => rm(checkpointDir, { recursive: true, force: true }),
  );
  const start = async (): Promise<DaemonProcess> => {
    const d = await startDaemonProcess({
      sim,
      port,
      checkpointDir,
      config: {
        webhooks: { enabled: true },
        logs: { ship: true, streams: ["php"], pollInterval: "1s" },
        // Discovery runs once at start and not again during the test: only a webhook can change the state.
        collectors: Object.fromEntries(
          COLLECTOR_NAMES.filter((c) => c !== "inventory").map((c) => [c, { enabled: false }]),
        ),
      },
      env: { SITEHOST_WEBHOOK_TOKEN: TOKEN, OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: receiver.logsEndpoint },
    });
    cleanups.push(() => d.kill());
    await waitReady(d.url, 30_000);
    return d;
  };
  sim.control.setWebhookUrl(`http://127.0.0.1:${port}/webhook?token=${TOKEN}`);
  return { sim, receiver, start };
}

function liveSite(sim: RunningSimulator) {
  const s = sim.control.sites().find((x) => x.site.state === "live");
  if (!s) throw new Error("the simulated fleet has no live site");
  return s.site;
}

describe("webhooks from the platform", () => {
  it("a site disabled on the platform shows in sitehost_site_state within seconds, and its event arrives once", async () => {
    const { sim, receiver, start } = await setup();
    const d = await start();
    const site = liveSite(sim);
    const state = (s: string) => `sitehost_site_state{site_id="${site.id}",site="${site.name}",state="${s}"}`;
    expect(await sample(d.url, state("live"))).toBe(1);
    expect(await sample(d.url, 'sitehost_events_total{event="site_disabled"}')).toBe(0);

    // The platform's control API disables the site; the simulator delivers site_disabled to the daemon.
    const res = await fetch(`${sim.authUrl}/_simulator/sites/${site.id}/disable`, { method: "POST" });
    expect(res.status).toBe(200);
    await waitFor("disabled state", async () => (await sample(d.url, state("disabled"))) === 1, {
      timeoutMs: 15_000,
      intervalMs: 100,
    });
    expect(await sample(d.url, state("live"))).toBe(0);
    expect(await sample(d.url, 'sitehost_events_total{event="site_disabled"}')).toBe(1);

    await waitFor("record", () => webhookRecords(receiver, "site_disabled").length > 0, {
      timeoutMs: 15_000,
      intervalMs: 100,
    });
    await sim.control.webhooksIdle();
    // Nothing left to ship: any second copy would have been sent by now.
    await waitFor(
      "an empty queue",
      async () => (await sample(d.url, "sitehost_exporter_webhook_queued_records")) === 0,
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    const records = webhookRecords(receiver, "site_disabled");
    expect(records).toHaveLength(1);
    const [r] = records as [ReceivedRecord];
    expect(r.severityNumber).toBe(9);
    expect(r.attributes).toMatchObject({
      "sitehost.site.id": String(site.id),
      "sitehost.site.name": site.name,
      "sitehost.event.site.id": site.id,
      "sitehost.event.site.state": "disabled",
    });
    expect(String(r.attributes["log.record.uid"])).toMatch(/^webhook-/);
    const attempts = sim.control.stats().webhookDeliveries.filter((a) => a.event === "site_disabled");
    expect(attempts.map((a) => a.status)).toEqual([200]);

    // A hacked site: ERROR, counted under its own name.
    const other = liveSite(sim);
    sim.control.hackSite(other.id);
    await waitFor("hacked record", () => webhookRecords(receiver, "site_hacked").length > 0, {
      timeoutMs: 15_000,
      intervalMs: 100,
    });
    expect(webhookRecords(receiver, "site_hacked")[0]?.severityNumber).toBe(17);
    expect(await sample(d.url, 'sitehost_events_total{event="site_hacked"}')).toBe(1);
  }, 90_000);

  it("events naming hundreds of unknown sites cost one discovery run, shown as webhooks in the request plan", async () => {
    const { start } = await setup();
    const d = await start();
    const planned = 'sitehost_exporter_api_planned_requests_per_second{source="webhooks"}';
    const listings = 'sitehost_exporter_api_requests_total{endpoint="/sites",code="200"}';
    const singleReads = 'sitehost_exporter_api_requests_total{endpoint="/sites/{id}",code="404"}';
    expect(await sample(d.url, planned)).toBe(0);
    const listedBefore = (await sample(d.url, listings)) ?? 0;
    for (let id = 900_000; id < 900_300; id++) {
      const res = await fetch(`${d.url}/webhook?token=${TOKEN}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ event: "site_disabled", site: { id, state: "disabled" } }),
      });
      expect(res.status).toBe(200);
    }
    await waitFor("a planned rate for webhooks", async () => ((await sample(d.url, planned)) ?? 0) > 0, {
      timeoutMs: 15_000,
      intervalMs: 100,
    });
    // One discovery run (an interval apart at most two), no read of each unknown id.
    const listed = ((await sample(d.url, listings)) ?? 0) - listedBefore;
    expect(listed).toBeGreaterThanOrEqual(1);
    expect(listed).toBeLessThanOrEqual(2);
    expect((await sample(d.url, singleReads)) ?? 0).toBe(0);
  }, 90_000);

  it("an event accepted while the collector is down survives a SIGKILL and is shipped once after the restart", async () => {
    const { sim, receiver, start } = await setup();
    receiver.setFailing(503);
    const first = await start();
    const site = liveSite(sim);
    sim.control.installPlugin(site.id, { path: "seo-toolkit", fail: true, error: "package not found" });
    await sim.control.webhooksIdle();
    // Accepted (the platform got its 200) although the collector has taken nothing yet.
    expect(sim.control.stats().webhookDeliveries.map((a) => a.status)).toEqual([200]);
    expect(await sample(first.url, "sitehost_exporter_webhook_queued_records")).toBe(1);
    expect(webhookRecords(receiver, "plugin_install_failed")).toEqual([]);
    await first.kill();

    receiver.setFailing(null);
    const second = await start();
    await waitFor("record", () => webhookRecords(receiver, "plugin_install_failed").length > 0, {
      timeoutMs: 20_000,
      intervalMs: 100,
    });
    await waitFor(
      "an empty queue",
      async () => (await sample(second.url, "sitehost_exporter_webhook_queued_records")) === 0,
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    const records = webhookRecords(receiver, "plugin_install_failed");
    expect(records).toHaveLength(1);
    expect(records[0]?.severityNumber).toBe(17);
    expect(records[0]?.attributes).toMatchObject({
      "sitehost.site.id": String(site.id),
      "sitehost.event.plugin.path": "seo-toolkit",
      "sitehost.event.error.message": "package not found",
    });
  }, 90_000);
});
