/**
 * The metrics reference against the daemon itself: every family the exporter exposes, with logs
 * shipped and webhooks on, is listed in docs/metrics.md, and every counter docs/metrics.md lists that
 * a shipped dashboard, alert or SLO rule reads has a series (at 0) from the start, not only after its
 * first event.
 */
import { randomBytes } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.js";
import { startDaemonProcess, waitForReadsSince, waitReady, type DaemonProcess } from "../helpers/daemon.js";
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
  // The log-derived counters start at each stream's first read, which opens its checkpoint (their
  // values so far): 3 sites' php and server streams, none of which has an entry.
  await waitForReadsSince(daemon, 0, 6, 60_000);
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

/** Metric names a shipped dashboard, alert rule or SLO rule reads. */
function readByDashboardsAndRules(): Set<string> {
  const files = [
    ...["dashboards", "config/alerts", "config/slo"].flatMap((dir) =>
      readdirSync(join(root, dir))
        .filter((f) => f.endsWith(".json") || f.endsWith(".yaml"))
        .map((f) => join(root, dir, f)),
    ),
  ];
  const texts = files.map((f) => readFileSync(f, "utf8"));
  return new Set(texts.flatMap((t) => [...t.matchAll(/\bsitehost_[a-z0-9_]+/g)].map((m) => m[0])));
}

/** The counters docs/metrics.md (generated from the definitions) lists: name → whether per site. */
function documentedCounters(): Map<string, boolean> {
  const doc = readFileSync(join(root, "docs/metrics.md"), "utf8");
  return new Map(
    [...doc.matchAll(/^\| `(sitehost_[a-z0-9_]+)` +\| counter +\| ([^|]*)\|/gm)].map((m) => [
      m[1] as string,
      (m[2] as string).includes("`site_id`"),
    ]),
  );
}

describe("the metrics reference", () => {
  it("lists every sitehost family the daemon exposes", () => {
    const doc = readFileSync(join(root, "docs/metrics.md"), "utf8");
    const missing = [...families(exposition).keys()]
      .filter((name) => name.startsWith("sitehost_"))
      .filter((name) => !doc.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });

  it("every counter a dashboard or rule reads is exposed from the start (at 0 before any event)", () => {
    const read = readByDashboardsAndRules();
    const counters = [...documentedCounters()].filter(([name]) => read.has(name));
    // The parse found the counters the exporter's own dashboard and alerts are built on.
    expect(counters.map(([name]) => name)).toEqual(
      expect.arrayContaining([
        "sitehost_exporter_log_records_shipped_total",
        "sitehost_exporter_api_requests_total",
      ]),
    );
    const withoutSeries = counters
      .map(([name]) => name)
      .filter((name) => !new RegExp(`^${name}(\\{| )`, "m").test(exposition));
    expect(withoutSeries).toEqual([]);
  });
});
