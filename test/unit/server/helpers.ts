import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { request as httpsRequest, type RequestOptions } from "node:https";
import { pino } from "pino";
import { Gauge, Registry } from "prom-client";
import { Exposition } from "../../../src/metrics/exposition.js";
import type { MetricFamily } from "../../../src/metrics/sample.js";
import { MetricStore } from "../../../src/metrics/store.js";
import { buildStatus, type StatusInputs, type StatusReport } from "../../../src/server/status.js";

export const silentLogger = pino({ level: "silent" });

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A raw request: no automatic decompression, so Content-Encoding is visible as sent. */
export function send(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; tls?: RequestOptions } = {},
): Promise<Reply> {
  const u = new URL(url);
  const request = u.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      u,
      { method: opts.method ?? "GET", headers: opts.headers, agent: false, ...(opts.tls ?? {}) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end();
  });
}

export const TEST_FAMILY: MetricFamily = {
  name: "sitehost_test_sites",
  help: "Sites by kind (test family).",
  type: "gauge",
  labels: ["kind"],
  perSite: false,
  collector: "inventory",
  source: "GET /account",
};

/** A real store + exposition with one stored family and one prom-client self-metric. */
export function makeExposition() {
  const store = new MetricStore([TEST_FAMILY]);
  store.replaceGlobal("inventory", [
    { name: "sitehost_test_sites", labels: { kind: "live" }, value: 7 },
    { name: "sitehost_test_sites", labels: { kind: "staging" }, value: 2 },
  ]);
  const registry = new Registry();
  const self = new Gauge({ name: "sitehost_test_self", help: "Self metric (test).", registers: [registry] });
  self.set(1);
  return { store, registry, exposition: new Exposition(store, registry) };
}

/** The exposition text the above must produce, written out by hand. */
export const EXPECTED_METRICS = [
  "# HELP sitehost_test_sites Sites by kind (test family).",
  "# TYPE sitehost_test_sites gauge",
  'sitehost_test_sites{kind="live"} 7',
  'sitehost_test_sites{kind="staging"} 2',
  "# HELP sitehost_test_self Self metric (test).",
  "# TYPE sitehost_test_self gauge",
  "sitehost_test_self 1",
];

/** A status report for servers under test: built the daemon's way from the inputs given (a quiet exporter by default). */
export function statusOf(over: Partial<StatusInputs> = {}): StatusReport {
  return buildStatus({
    version: "1",
    telemetryPath: "/metrics",
    apiUrl: "http://127.0.0.1:9/v1",
    ready: { ready: true },
    auth: { ok: true },
    clock: { offsetMs: 200, samples: 15, atMs: Date.UTC(2026, 0, 31, 12, 4, 59) },
    logs: { enabled: false, shipping: false, streams: [] },
    shard: { index: 0, count: 1 },
    now: Date.UTC(2026, 0, 31, 12, 5, 0),
    ...over,
  });
}
