/**
 * The simulator's HTTP server: request parsing, the token endpoints, bearer-token checks, the
 * HTTP-level faults (latency, request budget → 429, errorRate and failingSiteId → 500), dispatch to
 * the route handlers by the shared route table, and the control API under /_simulator/.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { createServer } from "../util/nodeHttp.js";
import type { AddressInfo } from "node:net";
import { matchRoute, type RouteName } from "../routes.js";
import { fail, INTERNAL, NOT_FOUND, type Reply } from "./envelope.js";
import { API_HANDLERS, LOCAL_HANDLERS, type Handler } from "./handlers/index.js";
import type { Platform } from "./platform.js";
import { matchLocalRoute } from "./routes.js";
import { countRequest } from "./stats.js";
import { sleep } from "../util/time.js";

type Body = Record<string, unknown>;
export type ControlHandler = (
  method: string,
  path: string,
  body: Body,
  query: URLSearchParams,
) => Promise<Reply>;

async function readBody(req: IncomingMessage): Promise<Body> {
  // Most requests are GETs without a body: skip the stream machinery.
  if (req.headers["content-length"] === undefined && req.headers["transfer-encoding"] === undefined)
    return {};
  if (req.headers["content-length"] === "0") return {};
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (!text) return {};
  const type = req.headers["content-type"] ?? "";
  if (type.includes("application/x-www-form-urlencoded"))
    return Object.fromEntries(new URLSearchParams(text));
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" && value !== null ? (value as Body) : {};
  } catch {
    return {};
  }
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const bytes = Buffer.from(body === undefined ? "" : JSON.stringify(body), "utf8");
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": String(bytes.length),
    ...headers,
  });
  res.end(bytes);
}

interface Resolved {
  /** The name in the stats: the route's template, or "(unknown)". */
  template: string;
  handler?: Handler;
  token?: "token" | "revoke";
  params: Record<string, string>;
}

/** The route of a request: token endpoints at the root, the shared table and local routes under /v1. */
function resolve(method: string, path: string): Resolved {
  if (path === "/v1" || path.startsWith("/v1/")) {
    const rel = path.slice(3);
    const shared = matchRoute(rel, "api", method);
    if (shared)
      return {
        template: shared.spec.template,
        handler: API_HANDLERS[shared.name as Exclude<RouteName, "token" | "revoke">],
        params: shared.params,
      };
    const local = matchLocalRoute(rel, "api", method);
    if (local)
      return { template: local.spec.template, handler: LOCAL_HANDLERS[local.name], params: local.params };
    return { template: "(unknown)", params: {} };
  }
  const auth = matchRoute(path, "auth", method);
  if (auth && (auth.name === "token" || auth.name === "revoke"))
    return { template: auth.spec.template, token: auth.name, params: {} };
  return { template: "(unknown)", params: {} };
}

export function createSimulatorServer(p: Platform, control: ControlHandler): Server {
  let inFlight = 0;

  function tokenEndpoint(kind: "token" | "revoke", body: Body): Reply {
    const { clientId, clientSecret } = p.opts;
    if (kind === "revoke") {
      if (
        body.client_id === clientId &&
        body.client_secret === clientSecret &&
        p.tokens.revoke(String(body.token ?? ""))
      )
        p.stats.tokensRevoked += 1;
      return { status: 200, body: undefined };
    }
    if (
      body.grant_type !== "client_credentials" ||
      body.client_id !== clientId ||
      body.client_secret !== clientSecret
    )
      return {
        status: 401,
        body: fail("Invalid client credentials.", ["The client id or secret is not valid."]),
      };
    const token = p.tokens.issue(p.now(), p.faults.tokenLifetimeSeconds);
    p.stats.tokensIssued += 1;
    return {
      status: 200,
      body: {
        access_token: token,
        token_type: "Bearer",
        expires_in: p.faults.tokenLifetimeSeconds,
        scope: "authorized",
        created_at: Math.floor(p.now() / 1000),
        id: 4242,
        name: "Demo Agency",
        email: "ops@agency.example",
        gravatar: "https://gravatar.example/avatar/0",
        scopes: ["authorized"],
      },
    };
  }

  /** Everything after the budget: token endpoints, then auth, 500 faults and the handler. */
  function answer(route: Resolved, req: IncomingMessage, query: URLSearchParams, body: Body): Reply {
    if (route.token) return tokenEndpoint(route.token, body);
    if (!route.handler) return { status: 404, body: fail(NOT_FOUND) };
    const auth = p.tokens.check(req.headers.authorization, p.now());
    if (auth !== "ok") {
      if (auth === "expired") p.stats.expiredTokenUses += 1;
      const why = auth === "missing" ? "Missing access token." : "Invalid or expired access token.";
      return { status: 401, body: fail("Unauthorized", [why]) };
    }
    const siteId = route.params.id !== undefined ? Number(route.params.id) : undefined;
    if (
      (siteId !== undefined && siteId === p.faults.failingSiteId) ||
      (p.faults.errorRate > 0 && p.faultRng() < p.faults.errorRate)
    )
      return { status: 500, body: fail(INTERNAL) };
    return route.handler(p, { params: route.params, query, body });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = req.url ?? "/";
    const q = raw.indexOf("?");
    const path = (q < 0 ? raw : raw.slice(0, q)).replace(/\/+$/, "") || "/";
    const query = new URLSearchParams(q < 0 ? "" : raw.slice(q + 1));
    const method = req.method ?? "GET";
    if (path.startsWith("/_simulator/")) {
      const out = await control(method, path, await readBody(req), query);
      return send(res, out.status, out.body);
    }
    // The route template names the request in the stats (and in the 429 count) whatever the answer.
    const route = resolve(method, path);
    p.stats.totalRequests += 1;
    if (p.now() < p.budget.retryAfterUntil) p.stats.requestsDuringRetryAfter += 1;
    inFlight += 1;
    p.stats.maxInFlight = Math.max(p.stats.maxInFlight, inFlight);
    try {
      if (p.faults.latencyMs > 0) await sleep(p.faults.latencyMs);
      const body = await readBody(req);
      if (p.faults.requestBudget) {
        const retryAfter = p.budget.take(p.now(), p.faults.requestBudget);
        if (retryAfter !== null) {
          countRequest(p.stats, method, route.template, 429);
          return send(res, 429, fail("Too Many Requests", ["Request budget exceeded; retry later."]), {
            "retry-after": String(retryAfter),
          });
        }
      }
      const out = answer(route, req, query, body);
      countRequest(p.stats, method, route.template, out.status);
      if (out.body === undefined) {
        res.writeHead(out.status);
        return void res.end();
      }
      return send(res, out.status, out.body, out.headers);
    } finally {
      inFlight -= 1;
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) send(res, 500, fail(INTERNAL));
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 60_000;
  return server;
}

/** Listen; resolves with the port (a free one when `port` is 0). */
export async function listen(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return (server.address() as AddressInfo).port;
}
