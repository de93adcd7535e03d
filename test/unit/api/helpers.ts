/**
 * Scripted loopback platform for the API client tests: a real `node:http` server on 127.0.0.1, port 0,
 * that issues tokens at POST /auth/token, answers POST /auth/revoke, and hands every /v1 request to the
 * test's handler. It records every request (path, query, bearer token, the token's age at arrival,
 * arrival time) and the maximum number of requests it held in flight at once.
 *
 * Token rule, like the platform: a token is valid for `expires_in` seconds from the moment the server
 * issued it; an unknown or expired token gets 401 before the handler runs.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import pino from "pino";
import { Registry } from "prom-client";
import { createApiClient, type ApiClient } from "../../../src/api/client.js";
import type { ApiClientOptions } from "../../../src/api/options.js";
import { sleep } from "../../../src/util/time.js";

/** Distinctive placeholders (secrets in tests are written as placeholders). */
export const CLIENT_ID = "exporter-test-client";
export const CLIENT_SECRET = "<CLIENT_SECRET>-q7Zk3vX9";
export const TOKEN_PREFIX = "<ACCESS_TOKEN>-m4Rt8";

export interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
  body: string;
  /** Bearer token the request carried (undefined when none). */
  token: string | undefined;
  /** ms since the server issued that token (undefined for the token endpoints or unknown tokens). */
  tokenAgeMs: number | undefined;
  arrivedAt: number;
}

export type Reply =
  { status: number; body?: unknown; headers?: Record<string, string>; delayMs?: number } | { destroy: true };

export type Handler = (req: Seen, n: number) => Reply | Promise<Reply>;

export interface TestServer {
  apiUrl: string;
  authUrl: string;
  /** Every request, in arrival order (token endpoint included). */
  seen: Seen[];
  /** Requests to /v1/... only. */
  api(): Seen[];
  /** Requests to POST /auth/token only. */
  tokenRequests(): Seen[];
  /** Tokens issued, in order, with issue time. */
  issued: { token: string; at: number; expiresInS: number }[];
  /** 401s the server sent because the token was unknown or expired. */
  rejectedTokens: Seen[];
  maxInFlight: number;
  close(): Promise<void>;
}

export interface ServerOptions {
  /** expires_in of issued tokens (seconds). Default 3599 (the platform's documented value). */
  expiresIn?: number;
  /** Delay before the token endpoint answers. */
  tokenDelayMs?: number;
  /** Override the token endpoint (n = 1-based token request number). */
  token?: Handler;
  /** Whether the token endpoint accepts this client secret (default: any). */
  acceptSecret?: (secret: string | undefined) => boolean;
  /** Tokens the server treats as revoked (401) even if not expired. */
  revoked?: (token: string) => boolean;
}

export async function startServer(handler: Handler, opts: ServerOptions = {}): Promise<TestServer> {
  const seen: Seen[] = [];
  const issued: TestServer["issued"] = [];
  const rejectedTokens: Seen[] = [];
  const byToken = new Map<string, { at: number; expiresInS: number }>();
  let inFlight = 0;
  let apiCount = 0;
  let tokenCount = 0;
  const state = { maxInFlight: 0 };
  const expiresIn = opts.expiresIn ?? 3599;

  const answer = (res: ServerResponse, reply: Reply, req: IncomingMessage): void => {
    if ("destroy" in reply) {
      req.socket.destroy();
      return;
    }
    const text = reply.body === undefined ? "" : JSON.stringify(reply.body);
    res.writeHead(reply.status, { "content-type": "application/json", ...(reply.headers ?? {}) });
    res.end(text);
  };

  const server = createServer((req, res) => {
    const arrivedAt = Date.now();
    inFlight += 1;
    state.maxInFlight = Math.max(state.maxInFlight, inFlight);
    let done = false;
    const finish = () => {
      if (!done) {
        done = true;
        inFlight -= 1;
      }
    };
    // "close" fires when the answer is sent or the socket is destroyed.
    res.on("close", finish);
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      void (async () => {
        const url = new URL(req.url ?? "/", "http://127.0.0.1");
        const auth = req.headers.authorization;
        const token = auth?.startsWith("Bearer ") ? auth.slice(7) : undefined;
        const info = token ? byToken.get(token) : undefined;
        const s: Seen = {
          method: req.method ?? "GET",
          path: url.pathname,
          query: url.searchParams,
          body: Buffer.concat(chunks).toString("utf8"),
          token,
          tokenAgeMs: info ? arrivedAt - info.at : undefined,
          arrivedAt,
        };
        seen.push(s);
        if (s.path === "/auth/token") {
          tokenCount += 1;
          if (opts.tokenDelayMs) await sleep(opts.tokenDelayMs);
          if (opts.token) return answer(res, await opts.token(s, tokenCount), req);
          if (opts.acceptSecret) {
            const secret = (JSON.parse(s.body || "{}") as { client_secret?: string }).client_secret;
            if (!opts.acceptSecret(secret)) {
              return answer(
                res,
                { status: 401, body: { message: "invalid_client", data: null, errors: null } },
                req,
              );
            }
          }
          const value = `${TOKEN_PREFIX}-${tokenCount}`;
          const at = Date.now();
          byToken.set(value, { at, expiresInS: expiresIn });
          issued.push({ token: value, at, expiresInS: expiresIn });
          return answer(
            res,
            { status: 200, body: { access_token: value, token_type: "Bearer", expires_in: expiresIn } },
            req,
          );
        }
        if (s.path === "/auth/revoke") return answer(res, { status: 200 }, req);
        // Unknown or expired token (a client bug in these tests), or one the test revoked: 401.
        const unauthenticated: Reply = {
          status: 401,
          body: { message: "Unauthenticated.", data: null, errors: null },
        };
        if (!token || !info || arrivedAt - info.at >= info.expiresInS * 1000) {
          rejectedTokens.push(s);
          return answer(res, unauthenticated, req);
        }
        if (opts.revoked?.(token)) return answer(res, unauthenticated, req);
        apiCount += 1;
        const reply = await handler(s, apiCount);
        if (!("destroy" in reply) && reply.delayMs) await sleep(reply.delayMs);
        answer(res, reply, req);
      })().catch((err: unknown) => {
        res.writeHead(599);
        res.end(String(err));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;
  return {
    apiUrl: `${base}/v1`,
    authUrl: base,
    seen,
    api: () => seen.filter((s) => s.path.startsWith("/v1/")),
    tokenRequests: () => seen.filter((s) => s.path === "/auth/token"),
    issued,
    rejectedTokens,
    get maxInFlight() {
      return state.maxInFlight;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The standard envelope. */
export function ok(data: unknown, extra: Record<string, unknown> = {}): Reply {
  return { status: 200, body: { message: "Success", data, errors: null, ...extra } };
}

export interface TestClient {
  client: ApiClient;
  registry: Registry;
  /** Every pino line the client wrote (level trace and up). */
  logs: string[];
}

export function makeClient(server: TestServer, overrides: Partial<ApiClientOptions> = {}): TestClient {
  const logs: string[] = [];
  const logger = pino({ level: "trace" }, { write: (line: string) => void logs.push(line) });
  const registry = new Registry();
  const client = createApiClient({
    apiUrl: server.apiUrl,
    authUrl: server.authUrl,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    timeoutMs: 5_000,
    maxResponseBytes: 1024 * 1024,
    maxRetryAfterMs: 60_000,
    maxConcurrency: 4,
    maxRequestsPerSecond: 1_000,
    maxRetries: 2,
    tokenRefreshMarginMs: 60_000,
    registry,
    logger,
    backoffBaseMs: 5,
    backoffCapMs: 20,
    ...overrides,
  });
  return { client, registry, logs };
}

/** Value of one sample of a metric (0 when absent). */
export async function metricValue(
  registry: Registry,
  name: string,
  labels: Record<string, string>,
): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return 0;
  const { values } = await metric.get();
  const hit = values.find((v) => {
    if (((v as { metricName?: string }).metricName ?? name) !== name) return false;
    const got = v.labels as Record<string, string | number | undefined>;
    return (
      Object.keys(got).length === Object.keys(labels).length &&
      Object.entries(labels).every(([k, val]) => String(got[k]) === val)
    );
  });
  return hit?.value ?? 0;
}

/** A site record that fits SiteSchema. */
export function site(id: number): Record<string, unknown> {
  return {
    id,
    name: `site-${id}`,
    displayName: `Site ${id}`,
    url: `https://site-${id}.example.test`,
    state: "live",
    datacenterCode: "us-east",
    datacenterName: "US East",
    phpVersion: "8.3",
    cmsEnvironmentType: "production",
    staging: false,
    sandbox: false,
    kit: false,
    edgeCache: "enabled",
    edgeCacheDefensiveMode: false,
    fileSystemUsageBytes: 1000,
    databaseUsageBytes: 2000,
    tags: [],
  };
}

export function domain(name: string, healthy: unknown = true): Record<string, unknown> {
  return {
    id: name.length,
    primary: false,
    name: null,
    healthy,
    dnsConfirmed: true,
    provisioned: true,
    type: "ARecord",
    displayType: "A",
    domainName: name,
    ipAddresses: ["192.0.2.1"],
    zoneId: null,
  };
}
