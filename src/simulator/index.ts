/**
 * An in-process fake of the platform's management API (spec/api-*.md): token
 * endpoints at the host root, everything else under /v1, the spec's envelopes
 * and casing, deterministic data from a seed, continuous logs and fault knobs.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { accountFor, buildFleet, buildSite, type SimSiteData } from "./fleet.js";
import {
  logFilter,
  SimLogs,
  ScrollStore,
  type LogOrder,
  type LogSource,
  type ScrollMode,
  type SimStream,
} from "./logs.js";
import { mulberry32, type Rng } from "./random.js";
import {
  backups,
  performanceReport,
  securityAlerts,
  statistics,
  trafficMetrics,
  usageReport,
} from "./responses.js";

export interface SimulatorFaults {
  /** Added latency per request, ms. */
  latencyMs: number;
  /** Share of /v1 requests answered 500 (0..1). */
  errorRate: number;
  /** Requests allowed per window; over it: 429 with Retry-After. null = unlimited. */
  requestBudget: { requests: number; windowSeconds: number } | null;
  /** Share of list records (and log entries) with a wrong-typed or missing field (0..1). */
  malformedRate: number;
  /** A site whose endpoints all answer 500. */
  failingSiteId: number | null;
  /** Lifetime of new tokens, seconds (expires_in). */
  tokenLifetimeSeconds: number;
  /** Scrolls idle longer than this expire. */
  scrollIdleSeconds: number;
}

export interface SimulatorOptions extends SimulatorFaults {
  port: number;
  host: string;
  sites: number;
  seed: number;
  clientId: string;
  clientSecret: string;
  /** Generated log entries per second per site and stream. */
  logRatePerSite: number;
  logOrder: LogOrder;
  scrollMode: ScrollMode;
  /** Clock (tests move time). */
  now: () => number;
}

export const DEFAULT_SIMULATOR_OPTIONS: SimulatorOptions = {
  port: 0,
  host: "127.0.0.1",
  sites: 25,
  seed: 1,
  clientId: "demo-client",
  clientSecret: "demo-secret-not-for-production",
  logRatePerSite: 0.2,
  logOrder: "newest-first",
  scrollMode: "snapshot",
  latencyMs: 0,
  errorRate: 0,
  requestBudget: null,
  malformedRate: 0,
  failingSiteId: null,
  tokenLifetimeSeconds: 3599,
  scrollIdleSeconds: 60,
  now: Date.now,
};

export interface SimulatorStats {
  /** Requests by `METHOD route-template status`. */
  requests: Record<string, number>;
  totalRequests: number;
  tokensIssued: number;
  tokensRevoked: number;
  /** Requests that carried an expired (not just unknown) token. */
  expiredTokenUses: number;
  /** Requests received while a 429 Retry-After window was open. */
  requestsDuringRetryAfter: number;
  maxInFlight: number;
  /** Log page requests (every site and stream). */
  logPageRequests: number;
}

export interface SimulatorControl {
  setFaults(faults: Partial<SimulatorFaults>): void;
  faults(): SimulatorFaults;
  setLogRate(perSecond: number): void;
  setLogPaging(order: LogOrder, mode: ScrollMode): void;
  disableSite(id: number): void;
  enableSite(id: number): void;
  deleteSite(id: number): void;
  addSite(): SimSiteData["site"];
  /** Append an entry (merged over a generated template) to a site's stream at `atMs` (default now). */
  appendLog(siteId: number, stream: SimStream, entry: Record<string, unknown>, atMs?: number): void;
  sites(): SimSiteData[];
  site(id: number): SimSiteData | undefined;
  account(): ReturnType<typeof accountFor>;
  stats(): SimulatorStats;
  resetStats(): void;
}

export interface RunningSimulator {
  apiUrl: string;
  authUrl: string;
  clientId: string;
  clientSecret: string;
  port: number;
  control: SimulatorControl;
  close(): Promise<void>;
}

interface Envelope {
  message: string;
  data: unknown;
  errors: string[] | null;
  page?: unknown;
}

const NOT_FOUND = "We could not locate the requested resources.";
const INTERNAL = "An internal error occurred while processing your request. Please try again.";
const PROBLEM = "There was a problem processing your request.";

function ok(data: unknown, page?: unknown): Envelope {
  return page === undefined
    ? { message: "Success", data, errors: null }
    : { message: "Success", data, errors: null, page };
}

function fail(message: string, errors: string[] | null = null): Envelope {
  return { message, data: null, errors };
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
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
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * Fields each record kind cannot do without (the spec's tables): a malformed record loses one of them
 * or carries it with a wrong type, so any schema that follows the spec rejects it.
 */
const CRITICAL_FIELDS = {
  site: ["id", "name", "state", "staging"],
  usage: ["billing_cycle"],
  domain: ["primary", "healthy", "domainName"],
  backup: ["timestamp", "databaseBackupId"],
  extension: ["name", "version"],
  php: ["message", "timestamp"],
  server: ["status", "timestamp"],
} as const;
type RecordKind = keyof typeof CRITICAL_FIELDS;

/** Corrupt one record in a way a schema must catch. */
function corrupt(record: unknown, kind: RecordKind, rng: Rng): unknown {
  if (typeof record !== "object" || record === null) return record;
  const copy = { ...(record as Record<string, unknown>) };
  const keys: readonly string[] = CRITICAL_FIELDS[kind];
  const key = keys[Math.floor(rng() * keys.length)] as string;
  if (rng() < 0.5) delete copy[key];
  else {
    const value = copy[key];
    copy[key] =
      typeof value === "boolean"
        ? "not-a-boolean"
        : typeof value === "object" && value !== null
          ? "not-an-object"
          : true; // a boolean where the spec has a string or a number
  }
  return copy;
}

const FAULT_KEYS: Record<keyof SimulatorFaults, (v: unknown) => boolean> = {
  latencyMs: (v) => typeof v === "number" && v >= 0,
  errorRate: (v) => typeof v === "number" && v >= 0 && v <= 1,
  requestBudget: (v) =>
    v === null ||
    (typeof v === "object" &&
      Number.isInteger((v as Record<string, unknown>).requests) &&
      typeof (v as Record<string, unknown>).windowSeconds === "number" &&
      ((v as Record<string, unknown>).windowSeconds as number) > 0),
  malformedRate: (v) => typeof v === "number" && v >= 0 && v <= 1,
  failingSiteId: (v) => v === null || Number.isInteger(v),
  tokenLifetimeSeconds: (v) => typeof v === "number" && v > 0,
  scrollIdleSeconds: (v) => typeof v === "number" && v >= 0,
};

/** Problems of a faults object sent to POST /_simulator/faults (empty when it is valid). */
export function faultProblems(body: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const [key, value] of Object.entries(body)) {
    const check = FAULT_KEYS[key as keyof SimulatorFaults] as ((v: unknown) => boolean) | undefined;
    if (!check) problems.push(`unknown fault ${key}`);
    else if (!check(value)) problems.push(`invalid value for ${key}`);
  }
  return problems;
}

export async function startSimulator(options: Partial<SimulatorOptions> = {}): Promise<RunningSimulator> {
  const opts: SimulatorOptions = { ...DEFAULT_SIMULATOR_OPTIONS, ...options };
  const faults: SimulatorFaults = {
    latencyMs: opts.latencyMs,
    errorRate: opts.errorRate,
    requestBudget: opts.requestBudget,
    malformedRate: opts.malformedRate,
    failingSiteId: opts.failingSiteId,
    tokenLifetimeSeconds: opts.tokenLifetimeSeconds,
    scrollIdleSeconds: opts.scrollIdleSeconds,
  };
  const now = opts.now;
  const fleet: SimSiteData[] = buildFleet(opts.sites, opts.seed, now());
  const byId = new Map(fleet.map((s) => [s.site.id, s]));
  let order = fleet.slice();
  const reorder = () => {
    // Favorites first, as the spec says for GET /sites.
    order = [...byId.values()].sort(
      (a, b) => Number(b.site.favorite) - Number(a.site.favorite) || a.site.id - b.site.id,
    );
  };
  reorder();
  const logs = new SimLogs(opts.logRatePerSite);
  const scrolls = new ScrollStore(logs, faults.scrollIdleSeconds * 1000);
  let logOrder = opts.logOrder;
  let scrollMode = opts.scrollMode;
  const tokens = new Map<string, { expiresAt: number; revoked: boolean }>();
  const faultRng = mulberry32(opts.seed ^ 0x5eed);
  let budgetWindowStart = now();
  let budgetUsed = 0;
  let retryAfterUntil = 0;
  let inFlight = 0;
  let nextSiteIndex = opts.sites;
  const stats: SimulatorStats = {
    requests: {},
    totalRequests: 0,
    tokensIssued: 0,
    tokensRevoked: 0,
    expiredTokenUses: 0,
    requestsDuringRetryAfter: 0,
    maxInFlight: 0,
    logPageRequests: 0,
  };

  const source = (data: SimSiteData): LogSource => ({
    siteId: data.site.id,
    siteName: data.site.name,
    host: data.domains[0]?.domainName ?? `${data.site.name}.sites.example`,
    seed: data.seed,
  });

  const maybeCorrupt = <T>(records: T[], kind: RecordKind): unknown[] =>
    faults.malformedRate > 0
      ? records.map((r) => (faultRng() < faults.malformedRate ? corrupt(r, kind, faultRng) : r))
      : records;

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

  function count(method: string, route: string, status: number): void {
    const key = `${method} ${route} ${status}`;
    stats.requests[key] = (stats.requests[key] ?? 0) + 1;
  }

  /** Route table: [method, pattern, template, handler]. */
  type Handler = (ctx: {
    params: string[];
    query: URLSearchParams;
    body: Record<string, unknown>;
    site?: SimSiteData;
  }) => { status: number; body: unknown };

  const siteRoute =
    (fn: (site: SimSiteData, ctx: Parameters<Handler>[0]) => { status: number; body: unknown }): Handler =>
    (ctx) => {
      if (!ctx.site) return { status: 404, body: fail(NOT_FOUND) };
      return fn(ctx.site, ctx);
    };

  const routes: Array<[string, RegExp, string, Handler]> = [
    ["GET", /^\/v1\/account$/, "/account", () => ({ status: 200, body: ok(accountFor([...byId.values()])) })],
    [
      "GET",
      /^\/v1\/sites$/,
      "/sites",
      ({ query, body }) => {
        const param = (k: string) => query.get(k) ?? (body[k] !== undefined ? String(body[k]) : null);
        if (param("paginate") !== "true")
          return {
            status: 200,
            body: ok(
              maybeCorrupt(
                order.map((s) => s.site),
                "site",
              ),
            ),
          };
        const perPage = Math.max(1, Math.min(1000, Math.floor(Number(param("per_page") ?? 25)) || 25));
        const lastPage = Math.max(1, Math.ceil(order.length / perPage));
        const page = Math.max(1, Math.floor(Number(param("page") ?? 1)) || 1);
        const items = order.slice((page - 1) * perPage, page * perPage).map((s) => s.site);
        return {
          status: 200,
          body: ok(maybeCorrupt(items, "site"), {
            currentPage: page,
            nextPage: page < lastPage ? page + 1 : null,
            lastPage,
            perPage,
            totalItems: order.length,
          }),
        };
      },
    ],
    [
      "GET",
      /^\/v1\/sites\/(\d+)$/,
      "/sites/{id}",
      siteRoute((s) => ({
        status: 200,
        body: ok({
          ...s.site,
          pageViews: statistics(s, now()).pageViews,
          collaborators: [],
          suite: null,
          cmsLoginUrl: `${s.site.url}/wp-admin`,
        }),
      })),
    ],
    [
      "GET",
      /^\/v1\/sites\/(\d+)\/statistics$/,
      "/sites/{site_id}/statistics",
      siteRoute((s) => ({ status: 200, body: ok(statistics(s, now())) })),
    ],
    [
      "GET",
      /^\/v1\/sites\/(\d+)\/reports\/usage$/,
      "/sites/{id}/reports/usage",
      siteRoute((s) => ({ status: 200, body: ok(maybeCorrupt(usageReport(s, now()), "usage")) })),
    ],
    [
      "GET",
      /^\/v1\/sites\/(\d+)\/reports\/performance\/latest$/,
      "/sites/{id}/reports/performance/latest",
      siteRoute((s) => ({ status: 200, body: ok(performanceReport(s, now())) })),
    ],
    [
      "POST",
      /^\/v1\/sites\/(\d+)\/metrics$/,
      "/sites/{id}/metrics",
      siteRoute((s, { body }) => {
        const metrics = Array.isArray(body.metrics) ? body.metrics.map(String) : [];
        const dims = Array.isArray(body.dimensions) ? body.dimensions.map(String) : [];
        return { status: 200, body: ok(trafficMetrics(s, now(), body.start_at, metrics, dims)) };
      }),
    ],
    [
      "GET",
      /^\/v1\/sites\/(\d+)\/security-alerts\/(plugins|themes)$/,
      "/sites/{id}/security-alerts/{kind}",
      siteRoute((s, { params }) => {
        const groups = securityAlerts(s, params[1] as "plugins" | "themes");
        const data = Object.fromEntries(
          Object.entries(groups).map(([k, v]) => [k, maybeCorrupt(v, "extension")]),
        );
        return { status: 200, body: ok(data) };
      }),
    ],
    [
      "GET",
      /^\/v1\/sites\/(\d+)\/domains$/,
      "/sites/{site_id}/domains",
      siteRoute((s) => ({ status: 200, body: ok(maybeCorrupt(s.domains, "domain")) })),
    ],
    [
      "GET",
      /^\/v1\/sites\/(\d+)\/backups$/,
      "/sites/{site_id}/backups",
      siteRoute((s) => ({ status: 200, body: ok(maybeCorrupt(backups(s, now()), "backup")) })),
    ],
    [
      "GET",
      /^\/v1\/sites\/(\d+)\/logs\/(php|server)$/,
      "/sites/{id}/logs/{stream}",
      siteRoute((s, { params, query, body }) => {
        stats.logPageRequests += 1;
        const stream = params[1] as SimStream;
        const scrollId =
          query.get("scroll_id") ?? (typeof body.scroll_id === "string" ? body.scroll_id : null);
        const t = now();
        const src = source(s);
        let state;
        if (scrollId) {
          state = scrolls.get(scrollId, t);
          if (!state || state.siteId !== s.site.id || state.stream !== stream) {
            return { status: 404, body: fail(NOT_FOUND, ["The scroll_id has expired or is invalid."]) };
          }
        } else {
          const param = (k: string) =>
            query.get(k) ?? (body[k] !== undefined && body[k] !== null ? String(body[k]) : null);
          const filter = logFilter(stream, {
            status: param("status"),
            request_type: param("request_type"),
            user_ip: param("user_ip"),
          });
          state = scrolls.open(src, stream, logOrder, scrollMode, t, filter);
        }
        const entries = scrolls.page(src, state, t);
        return {
          status: 200,
          body: {
            total_results: logs.estimateTotal(src, stream, state.lower, state.upper),
            logs: maybeCorrupt(entries, stream),
            scroll_id: state.id,
          },
        };
      }),
    ],
    [
      "PUT",
      /^\/v1\/sites\/(\d+)\/disable$/,
      "/sites/{id}/disable",
      siteRoute((s) => ((s.site.state = "disabled"), { status: 200, body: ok(s.site) })),
    ],
    [
      "PUT",
      /^\/v1\/sites\/(\d+)\/enable$/,
      "/sites/{id}/enable",
      siteRoute((s) =>
        s.site.state !== "disabled"
          ? { status: 400, body: fail(PROBLEM, ["Only disabled sites can be enabled."]) }
          : ((s.site.state = "live"), { status: 200, body: ok(s.site) }),
      ),
    ],
  ];

  const control: SimulatorControl = {
    setFaults(f) {
      if ("requestBudget" in f) {
        // A new budget starts a fresh window now.
        budgetWindowStart = now();
        budgetUsed = 0;
        retryAfterUntil = 0;
      }
      Object.assign(faults, f);
      scrolls.idleTimeoutMs = faults.scrollIdleSeconds * 1000;
    },
    faults: () => ({ ...faults }),
    setLogRate(perSecond) {
      logs.ratePerSecond = perSecond;
    },
    setLogPaging(o, m) {
      logOrder = o;
      scrollMode = m;
    },
    disableSite(id) {
      const s = byId.get(id);
      if (s) s.site.state = "disabled";
    },
    enableSite(id) {
      const s = byId.get(id);
      if (s) s.site.state = "live";
    },
    deleteSite(id) {
      byId.delete(id);
      reorder();
    },
    addSite() {
      const added = buildSite(nextSiteIndex, opts.seed, now());
      nextSiteIndex += 1;
      added.site.id = 900_000 + nextSiteIndex;
      byId.set(added.site.id, added);
      reorder();
      return added.site;
    },
    appendLog(siteId, stream, entry, atMs) {
      const s = byId.get(siteId);
      if (!s) throw new Error(`no site ${siteId}`);
      const at = atMs ?? now();
      const second = Math.floor(at / 1000);
      const template = logs.entriesAt({ ...source(s), seed: s.seed + 1 }, stream, second, 0)[0];
      const base: Record<string, unknown> =
        stream === "server"
          ? {
              ...(template ?? {}),
              timestamp: second,
              date: new Date(second * 1000).toISOString(),
              status: 200,
            }
          : {
              ...(template ?? {}),
              timestamp: new Date(second * 1000).toISOString(),
              severity: "Warning",
              hosted_site_id: siteId,
            };
      logs.append(siteId, stream, { ...base, ...entry }, second);
    },
    sites: () => [...byId.values()],
    site: (id) => byId.get(id),
    account: () => accountFor([...byId.values()]),
    stats: () => structuredClone(stats),
    resetStats() {
      stats.requests = {};
      stats.totalRequests = 0;
      stats.tokensIssued = 0;
      stats.tokensRevoked = 0;
      stats.expiredTokenUses = 0;
      stats.requestsDuringRetryAfter = 0;
      stats.maxInFlight = 0;
      stats.logPageRequests = 0;
    },
  };

  async function handleControl(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const body = await readBody(req);
    let m: RegExpExecArray | null;
    if (req.method === "GET" && path === "/_simulator/stats") return send(res, 200, control.stats());
    if (req.method === "GET" && path === "/_simulator/sites")
      return send(
        res,
        200,
        control.sites().map((s) => s.site),
      );
    if (req.method === "GET" && path === "/_simulator/faults") return send(res, 200, control.faults());
    if (req.method === "POST" && path === "/_simulator/faults") {
      const problems = faultProblems(body);
      if (problems.length > 0) return send(res, 400, fail(PROBLEM, problems));
      control.setFaults(body as Partial<SimulatorFaults>);
      return send(res, 200, control.faults());
    }
    if (req.method === "POST" && path === "/_simulator/stats/reset") {
      control.resetStats();
      return send(res, 200, control.stats());
    }
    if (req.method === "POST" && path === "/_simulator/logs") {
      const problems: string[] = [];
      const rate = body.rate;
      if (rate !== undefined && !(typeof rate === "number" && rate >= 0))
        problems.push("invalid value for rate");
      const o = body.order ?? logOrder;
      const mo = body.mode ?? scrollMode;
      if (o !== "newest-first" && o !== "oldest-first")
        problems.push("order must be newest-first or oldest-first");
      if (mo !== "snapshot" && mo !== "cursor") problems.push("mode must be snapshot or cursor");
      if (problems.length > 0) return send(res, 400, fail(PROBLEM, problems));
      if (typeof rate === "number") control.setLogRate(rate);
      control.setLogPaging(o as LogOrder, mo as ScrollMode);
      return send(res, 200, { rate: logs.ratePerSecond, order: logOrder, mode: scrollMode });
    }
    if (req.method === "POST" && path === "/_simulator/sites") return send(res, 201, control.addSite());
    if (req.method === "POST" && (m = /^\/_simulator\/sites\/(\d+)\/(disable|enable|delete)$/.exec(path))) {
      const id = Number(m[1]);
      if (!byId.has(id)) return send(res, 404, fail(NOT_FOUND));
      if (m[2] === "disable") control.disableSite(id);
      else if (m[2] === "enable") control.enableSite(id);
      else control.deleteSite(id);
      return send(res, 200, { ok: true });
    }
    if (req.method === "POST" && (m = /^\/_simulator\/sites\/(\d+)\/logs\/(php|server)$/.exec(path))) {
      try {
        control.appendLog(Number(m[1]), m[2] as SimStream, body);
      } catch {
        return send(res, 404, fail(NOT_FOUND));
      }
      return send(res, 201, { ok: true });
    }
    return send(res, 404, fail(NOT_FOUND));
  }

  function authorize(req: IncomingMessage): "ok" | "missing" | "invalid" | "expired" {
    const header = req.headers.authorization ?? "";
    const m = /^Bearer\s+(.+)$/i.exec(header);
    if (!m) return "missing";
    const token = tokens.get(m[1] as string);
    if (!token || token.revoked) return "invalid";
    if (now() >= token.expiresAt) return "expired";
    return "ok";
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = req.url ?? "/";
    const q = raw.indexOf("?");
    const path = (q < 0 ? raw : raw.slice(0, q)).replace(/\/+$/, "") || "/";
    const query = new URLSearchParams(q < 0 ? "" : raw.slice(q + 1));
    if (path.startsWith("/_simulator/")) return handleControl(req, res, path);
    const method = req.method ?? "GET";
    // The route template names the request in the stats (and in the 429 count) whatever the answer.
    let match: RegExpExecArray | null = null;
    let route: (typeof routes)[number] | undefined;
    for (const r of routes) {
      if (r[0] !== method) continue;
      match = r[1].exec(path);
      if (match) {
        route = r;
        break;
      }
    }
    const template = route?.[2] ?? (path === "/auth/token" || path === "/auth/revoke" ? path : "(unknown)");
    stats.totalRequests += 1;
    if (now() < retryAfterUntil) stats.requestsDuringRetryAfter += 1;
    inFlight += 1;
    stats.maxInFlight = Math.max(stats.maxInFlight, inFlight);
    try {
      if (faults.latencyMs > 0) await new Promise((r) => setTimeout(r, faults.latencyMs));
      const body = await readBody(req);

      // Request budget over a fixed window, shared by every endpoint.
      if (faults.requestBudget) {
        const t = now();
        const windowMs = faults.requestBudget.windowSeconds * 1000;
        if (t - budgetWindowStart >= windowMs) {
          budgetWindowStart = t;
          budgetUsed = 0;
        }
        budgetUsed += 1;
        if (budgetUsed > faults.requestBudget.requests) {
          const waitMs = budgetWindowStart + windowMs - t;
          retryAfterUntil = Math.max(retryAfterUntil, budgetWindowStart + windowMs);
          count(method, template, 429);
          return send(res, 429, fail("Too Many Requests", ["Request budget exceeded; retry later."]), {
            "retry-after": String(Math.max(1, Math.ceil(waitMs / 1000))),
          });
        }
      }

      if (path === "/auth/token" && req.method === "POST") {
        if (
          body.grant_type !== "client_credentials" ||
          body.client_id !== opts.clientId ||
          body.client_secret !== opts.clientSecret
        ) {
          count("POST", "/auth/token", 401);
          return send(
            res,
            401,
            fail("Invalid client credentials.", ["The client id or secret is not valid."]),
          );
        }
        const token = randomBytes(24).toString("base64url");
        tokens.set(token, { expiresAt: now() + faults.tokenLifetimeSeconds * 1000, revoked: false });
        stats.tokensIssued += 1;
        count("POST", "/auth/token", 200);
        return send(res, 200, {
          access_token: token,
          token_type: "Bearer",
          expires_in: faults.tokenLifetimeSeconds,
          scope: "authorized",
          created_at: Math.floor(now() / 1000),
          id: 4242,
          name: "Demo Agency",
          email: "ops@agency.example",
          gravatar: "https://gravatar.example/avatar/0",
          scopes: ["authorized"],
        });
      }
      if (path === "/auth/revoke" && req.method === "POST") {
        const t = tokens.get(String(body.token ?? ""));
        if (t && body.client_id === opts.clientId && body.client_secret === opts.clientSecret) {
          t.revoked = true;
          stats.tokensRevoked += 1;
        }
        count("POST", "/auth/revoke", 200);
        res.writeHead(200);
        return void res.end();
      }

      if (route && match) {
        const handler = route[3];
        const m = match;
        const auth = authorize(req);
        if (auth !== "ok") {
          if (auth === "expired") stats.expiredTokenUses += 1;
          count(method, template, 401);
          return send(
            res,
            401,
            fail("Unauthorized", [
              auth === "missing" ? "Missing access token." : "Invalid or expired access token.",
            ]),
          );
        }
        const params = m.slice(1);
        const siteId = params[0] !== undefined ? Number(params[0]) : undefined;
        const site = siteId !== undefined ? byId.get(siteId) : undefined;
        if (
          (siteId !== undefined && siteId === faults.failingSiteId) ||
          (faults.errorRate > 0 && faultRng() < faults.errorRate)
        ) {
          count(method, template, 500);
          return send(res, 500, fail(INTERNAL));
        }
        const out = handler({ params, query, body, site });
        count(method, template, out.status);
        return send(res, out.status, out.body);
      }
      count(method, "(unknown)", 404);
      return send(res, 404, fail(NOT_FOUND));
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
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = opts.host.includes(":") ? `[${opts.host}]` : opts.host;
  const authUrl = `http://${host}:${port}`;
  return {
    apiUrl: `${authUrl}/v1`,
    authUrl,
    clientId: opts.clientId,
    clientSecret: opts.clientSecret,
    port,
    control,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
