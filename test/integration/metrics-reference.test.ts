/**
 * The metrics reference against the daemon itself: every family the exporter exposes, with logs
 * shipped and webhooks on, is listed in docs/metrics.md, and every counter a dashboard or an alert
 * reads has a series (at 0) from the start, not only after its first event.
 */
import { randomBytes } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.js";
import { startDaemonProcess, waitReady, type DaemonProcess } from "../helpers/daemon.js";
import { startOtlpReceiver, type OtlpReceiver } from "../helpers/otlp-receiver.js";

const root = resolve(import.meta.dirname, "../..");
let sim: RunningSimulator;
let receiver: OtlpReceiver;
let daemon: DaemonProcess;
let exposition = "";

beforeAll(async () => {
  sim = await startSimulator({ sites: 3, seed: 5, logRatePerSite: 0 });
  receiver = await startOtlpReceiver();
  daemon = await startDaemonProcess({
    sim,
    config: { logs: { ship: true }, webhooks: { enabled: true } },
    env: {
      SITEHOST_WEBHOOK_TOKEN: randomBytes(16).toString("hex"),
      OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: receiver.logsEndpoint,
    },
  });
  await waitReady(daemon.url, 60_000);
  exposition = await (await fetch(`${daemon.url}/metrics`)).text();
}, 120_000);

afterAll(async () => {
  expect(await daemon?.stop()).toBe(0);
  await receiver?.close();
  await sim?.close();
});

/** name → type of every family the exposition declares. */
function families(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1] as string, m[2] as string]));
}

/** Metric names a dashboard or an alert rule reads. */
function readByDashboardsAndAlerts(): Set<string> {
  const texts = [
    ...readdirSync(join(root, "dashboards"))
      .filter((f) => f.endsWith(".json"))
      .map((f) => readFileSync(join(root, "dashboards", f), "utf8")),
    readFileSync(join(root, "config/alerts/sitehost-exporter.rules.yaml"), "utf8"),
  ];
  return new Set(texts.flatMap((t) => [...t.matchAll(/\bsitehost_[a-z0-9_]+/g)].map((m) => m[0])));
}

describe("the metrics reference", () => {
  it("lists every sitehost family the daemon exposes", () => {
    const doc = readFileSync(join(root, "docs/metrics.md"), "utf8");
    const missing = [...families(exposition).keys()]
      .filter((name) => name.startsWith("sitehost_"))
      .filter((name) => !doc.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });

  it("every counter a dashboard or alert reads is exposed from the start (at 0 before any event)", () => {
    const declared = families(exposition);
    const read = readByDashboardsAndAlerts();
    const withoutSeries = [...declared]
      .filter(([name, type]) => type === "counter" && read.has(name))
      .map(([name]) => name)
      .filter((name) => !new RegExp(`^${name}(\\{| )`, "m").test(exposition));
    expect(withoutSeries).toEqual([]);
  });
});
