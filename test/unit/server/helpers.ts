import { readFileSync, rmSync } from "node:fs";
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { request as httpsRequest, type RequestOptions } from "node:https";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, afterEach } from "vitest";
import { Gauge, Registry } from "prom-client";
import { Exposition } from "../../../src/metrics/exposition.js";
import type { MetricFamily } from "../../../src/metrics/sample.js";
import { MetricStore } from "../../../src/metrics/store.js";
import { startHttpServer, type HttpServerOptions, type RunningHttpServer } from "../../../src/server/http.js";
import { yamlFiles } from "../../helpers/config.js";
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

/**
 * The HTTP server on a free loopback port, with a web config file or none and any other option, for
 * one test at a time (`close` from an afterEach).
 */
export function serverRig() {
  let server: RunningHttpServer | undefined;
  return {
    async start(webConfigFile?: string, over: Partial<HttpServerOptions> = {}): Promise<RunningHttpServer> {
      const { exposition } = makeExposition();
      server = await startHttpServer({
        listenAddress: "127.0.0.1:0",
        telemetryPath: "/metrics",
        webConfigFile,
        exposition,
        readiness: () => ({ ready: true }),
        status: () => statusOf(),
        logger: silentLogger,
        ...over,
      });
      return server;
    },
    async close(): Promise<void> {
      await server?.close();
      server = undefined;
    },
    /** The running server, left to the caller to close. */
    take(): RunningHttpServer | undefined {
      const taken = server;
      server = undefined;
      return taken;
    },
  };
}

/** A request to /-/healthy with these TLS options: its status, or "refused" when the connection was. */
export const healthOutcome = (url: string, tls: RequestOptions): Promise<number | "refused"> =>
  send(`${url}/-/healthy`, { tls }).then(
    (r) => r.status,
    () => "refused" as const,
  );

/**
 * The web config tests' bed in `dir`: web config files written there, the server started with one
 * (closed after each test), and the directory removed after the file's tests.
 */
export function webConfigTestbed(dir: string) {
  const rig = serverRig();
  afterEach(() => rig.close());
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return {
    webFile: yamlFiles(dir),
    start: async (webConfigFile: string, over: Partial<HttpServerOptions> = {}) =>
      (await rig.start(webConfigFile, over)).url,
    /** TLS options of a client trusting the server's certificate and presenting `<name>.pem`. */
    client: (name: string): RequestOptions => ({
      ca: readFileSync(join(dir, "server.pem")),
      cert: readFileSync(join(dir, `${name}.pem`)),
      key: readFileSync(join(dir, `${name}.key`)),
    }),
  };
}
