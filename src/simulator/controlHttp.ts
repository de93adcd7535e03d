/**
 * The control API at /_simulator/... (no token): the control hooks over HTTP, for tests in another
 * process and for people poking at `simulate`. JSON in, JSON out; 404 for an unknown site, 400 with
 * the envelope naming the problem for an invalid request.
 */
import type { ActivityInput, ActivitySource } from "./activity.js";
import type { SimulatorControl } from "./control.js";
import type { CertificatePatch } from "./dns.js";
import { fail, NOT_FOUND, PROBLEM, reply, type Reply } from "./envelope.js";
import type { LogOrder, ScrollMode, SimStream } from "./logs.js";
import type { SiteKind } from "./operations.js";
import {
  behaviourProblems,
  faultProblems,
  type SimulatorBehaviour,
  type SimulatorFaults,
  LOG_ORDERS,
} from "./options.js";
import type { Platform } from "./platform.js";

type Body = Record<string, unknown>;
type Action = (id: number, body: Body, query: URLSearchParams) => Reply | Promise<Reply>;

const bad = (...problems: string[]) => reply(400, fail(PROBLEM, problems));
const done = { status: 200, body: { ok: true } } satisfies Reply;
const optString = (v: unknown) => (typeof v === "string" ? v : undefined);
const optBool = (v: unknown) => (typeof v === "boolean" ? v : undefined);
/** A time as epoch ms or an ISO string. */
const timeOf = (v: unknown): number | undefined =>
  typeof v === "number"
    ? v
    : typeof v === "string" && !Number.isNaN(Date.parse(v))
      ? Date.parse(v)
      : undefined;

/** Run a hook; an Error it throws (an impossible request) becomes a 400 naming it. */
function attempt(fn: () => Reply): Reply {
  try {
    return fn();
  } catch (err) {
    return bad(err instanceof Error ? err.message : String(err));
  }
}

function activityInput(body: Body): ActivityInput | string {
  if (typeof body.name !== "string") return "name (the action identifier) is required";
  const source = body.source;
  if (source !== undefined && source !== "ui" && source !== "api.v1" && source !== "systems")
    return "source must be ui, api.v1 or systems";
  const input: ActivityInput = {
    name: body.name,
    message: optString(body.message) ?? body.name,
    source: source as ActivitySource | undefined,
    description: optString(body.description),
    accountEmail: optString(body.accountEmail),
    userAgent: optString(body.userAgent),
  };
  if (body.ipAddress === null || typeof body.ipAddress === "string") input.ipAddress = body.ipAddress;
  if (Number.isInteger(body.siteId)) input.siteId = body.siteId as number;
  return input;
}

/** `/_simulator/sites/{id}/<action>` handlers, by action path. */
function siteActions(c: SimulatorControl): Record<string, Action> {
  return {
    disable: (id) => (c.disableSite(id), done),
    enable: (id) => (c.enableSite(id), done),
    delete: (id) => (c.deleteSite(id), done),
    hack: (id) => (c.hackSite(id), done),
    convert: (id, b) => {
      const to = b.to;
      if (to !== "live" && to !== "staging" && to !== "sandbox" && to !== "kit")
        return bad("to must be live, staging, sandbox or kit");
      return attempt(() => reply(200, c.convertSite(id, to as SiteKind)));
    },
    restore: (id, b) =>
      reply(
        200,
        c.restoreSite(id, {
          fail: optBool(b.fail),
          error: optString(b.error),
          fromSiteId: Number.isInteger(b.fromSiteId) ? (b.fromSiteId as number) : null,
          inProgress: optBool(b.inProgress),
        }),
      ),
    "plugins/install": (id, b) => {
      if (typeof b.path !== "string" || b.path === "") return bad("path is required");
      c.installPlugin(id, {
        path: b.path,
        version: optString(b.version),
        fail: optBool(b.fail),
        error: optString(b.error),
      });
      return done;
    },
    "plugins/update": (id, b) => {
      if (typeof b.path !== "string" || b.path === "") return bad("path is required");
      c.updatePlugin(id, { path: b.path, version: optString(b.version), breaks: optBool(b.breaks) });
      return done;
    },
    "git/deploy": (id, b) =>
      attempt(() =>
        reply(
          201,
          c.recordDeploy(id, {
            fail: optBool(b.fail),
            message: optString(b.message),
            branch: optString(b.branch),
          }),
        ),
      ),
    "git/enroll": (id) => (c.enrollGit(id), done),
    "git/disconnect": (id) => attempt(() => (c.disconnectGit(id), done)),
    "cms-users": (id, b) => {
      if (typeof b.login !== "string" || b.login === "") return bad("login is required");
      c.addCmsUser(id, b.login, typeof b.roles === "string" ? b.roles : "subscriber");
      return done;
    },
    "maintenance-mode": (id, b) => reply(200, { enabled: c.setMaintenanceMode(id, optBool(b.enabled)) }),
    "basic-authentication": (id) => reply(200, { enabled: c.toggleBasicAuthentication(id) }),
    ssh: (id, b) => {
      if (typeof b.command !== "string" || b.command === "") return bad("command is required");
      c.runSshCommand(id, b.command);
      return done;
    },
    "ondemand-backups": (id, b) => {
      if (b.type !== "fs" && b.type !== "db") return bad("type must be fs or db");
      return attempt(() =>
        reply(201, c.createOnDemandBackup(id, b.type as "fs" | "db", { creating: b.creating === true })),
      );
    },
    activity: (id, b) => {
      const input = activityInput({ ...b, siteId: id });
      return typeof input === "string" ? bad(input) : reply(201, c.appendActivity(input, timeOf(b.at)));
    },
    "logs/php": (id, b, q) => appendLog(c, id, "php", b, q),
    "logs/server": (id, b, q) => appendLog(c, id, "server", b, q),
  };
}

/** The body's fields override a generated entry; `?at=` and `?visibleAt=` (epoch ms or ISO) place it. */
function appendLog(
  c: SimulatorControl,
  id: number,
  stream: SimStream,
  body: Body,
  q: URLSearchParams,
): Reply {
  const at = q.get("at");
  const visibleAt = q.get("visibleAt");
  const num = (v: string | null) => (v === null ? undefined : timeOf(/^\d+$/.test(v) ? Number(v) : v));
  c.appendLog(id, stream, body, num(at), num(visibleAt));
  return reply(201, { ok: true });
}

function logsSettings(p: Platform, c: SimulatorControl, body: Body): Reply {
  const problems: string[] = [];
  const rate = body.rate;
  if (rate !== undefined && !(typeof rate === "number" && rate >= 0)) problems.push("invalid value for rate");
  const order = body.order ?? p.logOrder;
  const mode = body.mode ?? p.scrollMode;
  if (!(LOG_ORDERS as readonly unknown[]).includes(order))
    problems.push(`order must be one of ${LOG_ORDERS.join(", ")}`);
  if (mode !== "snapshot" && mode !== "cursor") problems.push("mode must be snapshot or cursor");
  if (problems.length > 0) return bad(...problems);
  if (typeof rate === "number") c.setLogRate(rate);
  c.setLogPaging(order as LogOrder, mode as ScrollMode);
  return reply(200, { rate: p.logs.ratePerSecond, order: p.logOrder, mode: p.scrollMode });
}

function certificatePatch(body: Body): CertificatePatch | null | string {
  if (body.clear === true) return null;
  const patch: CertificatePatch = {};
  if (body.expiresAt !== undefined) {
    const t = timeOf(body.expiresAt);
    if (t === undefined) return "expiresAt must be epoch ms or an ISO 8601 time";
    patch.expiresAt = t;
  }
  if (body.broken !== undefined) {
    if (typeof body.broken !== "boolean") return "broken must be a boolean";
    patch.broken = body.broken;
  }
  if (body.forceSsl !== undefined) {
    if (typeof body.forceSsl !== "boolean") return "forceSsl must be a boolean";
    patch.forceSsl = body.forceSsl;
  }
  return patch;
}

export function controlApi(p: Platform, c: SimulatorControl) {
  const actions = siteActions(c);
  return async function handle(
    method: string,
    path: string,
    body: Body,
    query: URLSearchParams,
  ): Promise<Reply> {
    const get = method === "GET";
    const post = method === "POST";
    if (get && path === "/_simulator/stats") return reply(200, c.stats());
    if (post && path === "/_simulator/stats/reset") return (c.resetStats(), reply(200, c.stats()));
    if (get && path === "/_simulator/faults") return reply(200, c.faults());
    if (post && path === "/_simulator/faults") {
      const problems = faultProblems(body);
      if (problems.length > 0) return bad(...problems);
      c.setFaults(body as Partial<SimulatorFaults>);
      return reply(200, c.faults());
    }
    if (get && path === "/_simulator/behaviour") return reply(200, c.behaviour());
    if (post && path === "/_simulator/behaviour") {
      const problems = behaviourProblems(body);
      if (problems.length > 0) return bad(...problems);
      c.setBehaviour(body as Partial<SimulatorBehaviour>);
      return reply(200, c.behaviour());
    }
    if (post && path === "/_simulator/logs") return logsSettings(p, c, body);
    if (get && path === "/_simulator/sites")
      return reply(
        200,
        c.sites().map((s) => s.site),
      );
    if (post && path === "/_simulator/sites") return reply(201, c.addSite());
    if (get && path === "/_simulator/webhooks") return reply(200, { url: p.webhooks.settings.url });
    if (post && path === "/_simulator/webhooks") {
      if (body.url !== null && typeof body.url !== "string") return bad("url must be a string or null");
      c.setWebhookUrl(body.url as string | null);
      return reply(200, { url: p.webhooks.settings.url });
    }
    if (post && path === "/_simulator/sync") {
      const from = body.fromSiteId;
      const to = body.toSiteId;
      if (!Number.isInteger(from) || !Number.isInteger(to))
        return bad("fromSiteId and toSiteId are required");
      if (!p.site(from as number) || !p.site(to as number)) return reply(404, fail(NOT_FOUND));
      c.syncSites(from as number, to as number, { fail: optBool(body.fail), error: optString(body.error) });
      return done;
    }
    if (post && path === "/_simulator/activity") {
      const input = activityInput(body);
      if (typeof input === "string") return bad(input);
      if (input.siteId !== undefined && input.siteId !== null && !p.site(input.siteId))
        return reply(404, fail(NOT_FOUND));
      return reply(201, c.appendActivity(input, timeOf(body.at)));
    }
    if (get && path === "/_simulator/zones")
      return reply(
        200,
        c.zones().map((z) => ({
          ...z,
          records: z.records.map((r) => ({ ...r, certificate: c.certificate(r.id) ?? null })),
        })),
      );
    let m = /^\/_simulator\/records\/(\d+)\/ssl$/.exec(path);
    if (post && m) {
      const id = Number(m[1]);
      if (!c.zones().some((z) => z.records.some((r) => r.id === id && r.type === "A")))
        return reply(404, fail(NOT_FOUND, ["No A record with that id"]));
      const patch = certificatePatch(body);
      if (typeof patch === "string") return bad(patch);
      return reply(200, { certificate: c.setCertificate(id, patch) ?? null });
    }
    m = /^\/_simulator\/sites\/(\d+)\/(.+)$/.exec(path);
    const action = m ? actions[m[2] as string] : undefined;
    if (post && m && action) {
      const id = Number(m[1]);
      if (!p.site(id)) return reply(404, fail(NOT_FOUND));
      return action(id, body, query);
    }
    return reply(404, fail(NOT_FOUND));
  };
}
