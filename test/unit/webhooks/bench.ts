/**
 * Test bench of the webhook receiver: the handler behind the exporter's real HTTP server, a queue whose
 * confirmations the test controls, a raw client, and what the exposition counts.
 */
import { request as httpRequest, type Agent, type IncomingHttpHeaders } from "node:http";
import { request as httpsRequest } from "node:https";
import { Writable } from "node:stream";
import bcrypt from "bcryptjs";
import { pino } from "pino";
import { Registry } from "prom-client";
import type { OutgoingRecord } from "../../../src/logs/otlp/encode.js";
import { Exposition } from "../../../src/metrics/exposition.js";
import { METRIC_FAMILIES } from "../../../src/metrics/families.js";
import { MetricStore } from "../../../src/metrics/store.js";
import { startHttpServer, type RunningHttpServer } from "../../../src/server/http.js";
import { statusOf } from "../server/helpers.js";
import { WebhookAuth } from "../../../src/webhooks/auth.js";
import { createWebhookHandler, type WebhookTarget } from "../../../src/webhooks/handler.js";
import { EventCounts, webhookSelfMetrics } from "../../../src/webhooks/metrics.js";

export const TOKEN = "<webhook-token>-7f3a9c2e5b1d";

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** A raw request with a body; `chunks` are written one by one (chunked encoding when no length is set). */
export function post(
  url: string,
  opts: {
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    chunks?: Buffer[];
    ca?: Buffer;
    /** A keep-alive agent instead of one connection per request. */
    agent?: Agent;
  } = {},
): Promise<Reply> {
  const u = new URL(url);
  const request = u.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      u,
      {
        method: opts.method ?? "POST",
        headers: opts.headers,
        agent: opts.agent ?? false,
        ...(opts.ca ? { ca: opts.ca } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString(),
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    if (opts.chunks) {
      for (const c of opts.chunks) req.write(c);
      req.end();
    } else req.end(opts.body);
  });
}

/** A queue whose confirmations the test gives (or refuses) one by one. */
export class ControlledQueue {
  readonly records: OutgoingRecord[] = [];
  private readonly pending: Array<{ resolve: () => void; reject: (err: unknown) => void }> = [];
  auto: "confirm" | "hold" | Error = "confirm";
  enqueue(record: OutgoingRecord): Promise<void> {
    this.records.push(record);
    if (this.auto === "confirm") return Promise.resolve();
    if (this.auto instanceof Error) return Promise.reject(this.auto);
    return new Promise((resolve, reject) => this.pending.push({ resolve, reject }));
  }
  get waiting(): number {
    return this.pending.length;
  }
  confirm(): void {
    this.pending.shift()?.resolve();
  }
}

let server: RunningHttpServer | undefined;

/** Close the server the last start() opened (afterEach of the tests). */
export async function stopServer(): Promise<void> {
  await server?.close();
  server = undefined;
}

const names = new Map([[42, "shop-1"]]);

export async function start(
  opts: {
    queue?: ControlledQueue | null;
    standby?: boolean;
    webConfigFile?: string;
    maxBodyBytes?: number;
  } = {},
) {
  const store = new MetricStore(METRIC_FAMILIES);
  const registry = new Registry();
  const metrics = webhookSelfMetrics(registry);
  const queue = opts.queue === null ? undefined : (opts.queue ?? new ControlledQueue());
  const refreshed: number[] = [];
  /** Every accepted event as `happened` saw it: its site (or none) and its name. */
  const happened: Array<[number | undefined, string]> = [];
  const lines: string[] = [];
  const logger = pino(
    { level: "debug" },
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(chunk.toString());
        cb();
      },
    }),
  );
  const target: WebhookTarget = {
    queue,
    siteName: (id) => names.get(id),
    refresh: (id) => refreshed.push(id),
    happened: (siteId, payload) => happened.push([siteId, payload.event]),
  };
  const state = { target: opts.standby ? undefined : target, throwOnTarget: false };
  const handle = createWebhookHandler({
    auth: new WebhookAuth(TOKEN),
    counts: new EventCounts(store),
    metrics,
    logger,
    target: () => {
      if (state.throwOnTarget) throw new Error("boom");
      return state.target;
    },
    maxBodyBytes: opts.maxBodyBytes,
  });
  server = await startHttpServer({
    listenAddress: "127.0.0.1:0",
    telemetryPath: "/metrics",
    webConfigFile: opts.webConfigFile,
    exposition: new Exposition(store, registry),
    readiness: () => ({ ready: true }),
    status: () => statusOf(),
    logger,
    webhook: { path: "/hooks/sitehost", handle },
    verifyPassword: (password, hash) => bcrypt.compare(password, hash),
  });
  const url = `${server.url}/hooks/sitehost`;
  const withToken = `${url}?token=${encodeURIComponent(TOKEN)}`;
  /** sitehost_events_total and the rejected counter, as the exposition shows them. */
  const counted = async (auth?: Record<string, string>) => {
    const text = (await post(`${server?.url}/metrics`, { method: "GET", headers: auth })).text;
    const read = (re: RegExp) =>
      Object.fromEntries([...text.matchAll(re)].map((m) => [m[1] as string, Number(m[2])]));
    return {
      events: read(/^sitehost_events_total\{event="([^"]+)"\} (\S+)$/gm),
      rejected: read(/^sitehost_exporter_webhook_rejected_total\{reason="([^"]+)"\} (\S+)$/gm),
      truncated: read(/^sitehost_exporter_webhook_payload_truncated_total\{reason="([^"]+)"\} (\S+)$/gm),
    };
  };
  const total = (events: Record<string, number>) => Object.values(events).reduce((a, b) => a + b, 0);
  return { url, withToken, queue, refreshed, happened, lines, state, counted, total };
}

export const disabled = JSON.stringify({ event: "site_disabled", site: { id: 42, state: "disabled" } });
