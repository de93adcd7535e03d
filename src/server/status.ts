/**
 * The exporter's status, what is wrong first: the landing page renders it, `/-/status` serves it as
 * JSON. Built from what the parts say of themselves (the API client's token, discovery and each
 * collector's last run, the OTLP endpoint's health, the lock, the request plan, the webhook receiver);
 * each problem says why, since when, and links its runbook entry.
 */
import { displayUrl } from "../api/redact.js";
import type { ExportStatus } from "../logs/otlp/exportHealth.js";
import { perSiteHour, type RequestPlan } from "../scheduling/plan.js";
import type { Readiness } from "../scheduling/readiness.js";
import type { CollectorStatus } from "../scheduling/runner.js";
import { runbookUrl } from "./runbook.js";

/** ok; warning: works, but look; critical: something is not being done; off: not configured; pending: not yet known. */
export type Health = "ok" | "warning" | "critical" | "off" | "pending";

/** What the active exporter (not a standby) says of its parts. */
export interface ActiveStatus {
  sitesDiscovered: number;
  collectors: CollectorStatus[];
  plan?: RequestPlan;
  /** The planner's advice when the plan does not fit. */
  budgetAdvice?: string;
}

export interface StatusInputs {
  version: string;
  telemetryPath: string;
  apiUrl: string;
  ready: Readiness;
  auth: { ok: boolean; lastError?: string; at?: number };
  /** Undefined while standing by. */
  active?: ActiveStatus;
  logs: { enabled: boolean; shipping: boolean; streams: readonly string[] };
  export?: ExportStatus;
  /** With logs on: whether this exporter holds the checkpoint lock, and what it says otherwise. */
  lock?: { held: boolean; reason: string; dir: string };
  shard: { index: number; count: number };
  webhooks?: { path: string; accepting: boolean; queued: number | undefined };
  now: number;
}

export interface Problem {
  /** What is wrong (API access, discovery, a collector, log shipping, …). */
  subject: string;
  health: Extract<Health, "warning" | "critical">;
  reason: string;
  /** ISO time since when (or when it was last seen). */
  since?: string;
  runbook?: string;
}

export interface Part {
  health: Health;
  summary: string;
  since?: string;
  lastError?: string;
}

export interface StatusReport {
  version: string;
  generatedAt: string;
  /** The worst health of any part. */
  health: Health;
  ready: Readiness;
  problems: Problem[];
  api: Part & { url: string };
  discovery: Part & { sites: number };
  collectors: Array<
    Part & { name: string; enabled: boolean; schedule: string; lastRun?: string; result?: string }
  >;
  logs: Part & { endpoint?: string; streams: Array<Part & { stream: string }> };
  lock: Part;
  shard: string;
  budget: Part & {
    plannedRequestsPerSecond?: number;
    budgetRequestsPerSecond?: number;
    /** Per source: planned requests/s, and per site-hour planned and measured lately (last 30 minutes). */
    sources?: Array<{
      source: string;
      requestsPerSecond: number;
      perSiteHour: number;
      measuredPerSiteHour?: number;
    }>;
  };
  webhooks: Part & { path?: string; queued?: number };
  telemetryPath: string;
}

const iso = (ms: number | Date | undefined) =>
  ms === undefined ? undefined : (ms instanceof Date ? ms : new Date(ms)).toISOString();

const RANK: Record<Health, number> = { critical: 4, warning: 3, pending: 2, ok: 1, off: 0 };

function worst(parts: readonly Health[]): Health {
  return parts.reduce<Health>((a, b) => (RANK[b] > RANK[a] ? b : a), "off");
}

function apiPart(i: StatusInputs): StatusReport["api"] {
  const url = displayUrl(i.apiUrl);
  if (i.auth.ok) return { url, health: "ok", summary: "tokens are issued" };
  if (!i.auth.lastError) return { url, health: "pending", summary: "no token requested yet" };
  return {
    url,
    health: "critical",
    summary: "no token: the platform refuses or cannot be reached",
    lastError: i.auth.lastError,
    since: iso(i.auth.at),
  };
}

function discoveryPart(i: StatusInputs): StatusReport["discovery"] {
  const run = i.active?.collectors.find((c) => c.name === "inventory");
  const sites = i.active?.sitesDiscovered ?? 0;
  if (!i.active) return { sites, health: "off", summary: "standing by" };
  if (run?.lastError) {
    return {
      sites,
      health: "critical",
      summary: run.lastSuccessAt
        ? `failing; ${sites} sites from the last discovery that worked`
        : "has not succeeded yet",
      lastError: run.lastError.message,
      since: iso(run.lastError.at),
    };
  }
  if (!run?.lastRun) return { sites, health: "pending", summary: "first run going" };
  return { sites, health: "ok", summary: `${sites} sites watched`, since: iso(run.lastSuccessAt) };
}

function collectorParts(i: StatusInputs): StatusReport["collectors"] {
  return (i.active?.collectors ?? [])
    .filter((c) => c.name !== "inventory")
    .map((c) => {
      const base = {
        name: c.name,
        enabled: c.enabled,
        schedule: c.schedule,
        lastRun: iso(c.lastRun?.startedAt),
        result: c.lastRun?.result,
      };
      if (!c.enabled) return { ...base, health: "off" as const, summary: "disabled" };
      if (c.lastError)
        return {
          ...base,
          health: "warning" as const,
          summary: "last run failed; its series keep their last values",
          lastError: `${c.lastError.reason}: ${c.lastError.message}`,
          since: iso(c.lastError.at),
        };
      if (!c.lastRun)
        return { ...base, health: "pending" as const, summary: c.running ? "first run going" : "no run yet" };
      const partial = c.lastRun.result === "partial";
      return {
        ...base,
        health: partial ? ("warning" as const) : ("ok" as const),
        summary: partial
          ? "last run partial: some sites or parts failed and keep their last values"
          : `last run ${c.lastRun.durationSeconds.toFixed(1)} s`,
      };
    });
}

function logsPart(i: StatusInputs): StatusReport["logs"] {
  const exp = i.export;
  const endpoint = exp?.endpoint;
  if (!i.logs.enabled && !i.webhooks)
    return { health: "off", summary: "logs are not tailed (logs.enabled: false)", streams: [] };
  if (!i.logs.shipping && !i.webhooks)
    return {
      health: "off",
      summary: "logs are read and counted, not shipped (logs.ship: false)",
      streams: [],
    };
  const kinds = [...(i.logs.enabled ? i.logs.streams : []), ...(i.webhooks ? ["webhook"] : [])];
  const streams = kinds.map((stream) => {
    const s = exp?.streams[stream];
    const failing =
      s?.lastFailureMs !== undefined && (s.lastSuccessMs === undefined || s.lastFailureMs > s.lastSuccessMs);
    if (failing)
      return {
        stream,
        health: "critical" as const,
        summary: "export failing: reading waits",
        lastError: s?.lastError,
        since: iso(s?.lastFailureMs),
      };
    if (s?.lastSuccessMs !== undefined)
      return { stream, health: "ok" as const, summary: "shipping", since: iso(s.lastSuccessMs) };
    return { stream, health: "pending" as const, summary: "nothing exported yet" };
  });
  if (exp?.state === "failing") {
    return {
      endpoint,
      health: exp.lasting ? "critical" : "warning",
      summary: `the OTLP collector does not take exports${exp.lasting ? " (for longer than logs.exportFailureWarnAfter)" : ""}; records wait, reading stops`,
      lastError: exp.lastError,
      since: iso(exp.failingSinceMs),
      streams,
    };
  }
  return {
    endpoint,
    health: exp?.state === "ok" ? "ok" : "pending",
    summary: exp?.state === "ok" ? "the OTLP collector takes exports" : "nothing exported yet",
    since: iso(exp?.lastSuccessMs),
    streams,
  };
}

function lockPart(i: StatusInputs): Part {
  if (!i.lock) return { health: "off", summary: "no checkpoint lock (logs off)" };
  if (i.lock.held) return { health: "ok", summary: `held by this exporter (${i.lock.dir})` };
  return { health: "warning", summary: i.lock.reason };
}

function budgetPart(i: StatusInputs): StatusReport["budget"] {
  const plan = i.active?.plan;
  if (!plan) return { health: "pending", summary: "no plan yet" };
  const round = (n: number) => Math.round(n * 1000) / 1000;
  const sources = plan.sources.map((s) => ({
    source: s.source,
    requestsPerSecond: round(s.requestsPerSecond),
    perSiteHour: round(perSiteHour(s.requestsPerSecond, plan.sites)),
    ...(s.measuredRequestsPerSecond !== undefined
      ? { measuredPerSiteHour: round(perSiteHour(s.measuredRequestsPerSecond, plan.sites)) }
      : {}),
  }));
  const base = {
    plannedRequestsPerSecond: Math.round(plan.total * 1000) / 1000,
    budgetRequestsPerSecond: plan.budget,
    sources,
  };
  return plan.fits
    ? {
        ...base,
        health: "ok",
        summary: `planned ${plan.total.toFixed(2)} requests/s of ${plan.budget}/s (api.maxRequestsPerSecond)`,
      }
    : {
        ...base,
        health: "warning",
        summary:
          i.active?.budgetAdvice ??
          `planned ${plan.total.toFixed(2)} requests/s over the budget of ${plan.budget}/s`,
      };
}

function webhooksPart(i: StatusInputs): StatusReport["webhooks"] {
  const w = i.webhooks;
  if (!w) return { health: "off", summary: "off (webhooks.enabled: false)" };
  const queued = w.queued === undefined ? {} : { queued: w.queued };
  return w.accepting
    ? { path: w.path, ...queued, health: "ok", summary: `accepting events on POST ${w.path}` }
    : {
        path: w.path,
        ...queued,
        health: "warning",
        summary: `not accepting events yet on POST ${w.path} (starting or standing by): the platform retries`,
      };
}

/** Each part that is not well, as a problem: worst first, with its runbook entry. */
function problemsOf(r: Omit<StatusReport, "problems" | "health">): Problem[] {
  const out: Problem[] = [];
  const add = (subject: string, p: Part, alert?: string) => {
    if (p.health !== "warning" && p.health !== "critical") return;
    out.push({
      subject,
      health: p.health,
      reason: p.lastError ? `${p.summary}: ${p.lastError}` : p.summary,
      ...(p.since ? { since: p.since } : {}),
      ...(alert ? { runbook: runbookUrl(alert) } : {}),
    });
  };
  add("API access", r.api, "SitehostExporterApiAuthFailing");
  add("Site discovery", r.discovery, "SitehostExporterDown");
  for (const c of r.collectors) add(`Collector ${c.name}`, c, "SitehostExporterCollectorStale");
  add(`Log shipping to ${r.logs.endpoint ?? "OTLP"}`, r.logs, "SitehostExporterLogExportFailing");
  add("Checkpoint lock", r.lock);
  add("Request budget", r.budget, "SitehostExporterApiBudgetExceeded");
  add("Webhooks", r.webhooks);
  return out.sort((a, b) => RANK[b.health] - RANK[a.health]);
}

export function buildStatus(i: StatusInputs): StatusReport {
  const parts = {
    version: i.version,
    generatedAt: new Date(i.now).toISOString(),
    ready: i.ready,
    api: apiPart(i),
    discovery: discoveryPart(i),
    collectors: collectorParts(i),
    logs: logsPart(i),
    lock: lockPart(i),
    shard: `${i.shard.index}/${i.shard.count}`,
    budget: budgetPart(i),
    webhooks: webhooksPart(i),
    telemetryPath: i.telemetryPath,
  };
  const health = worst(
    [
      parts.api,
      parts.discovery,
      ...parts.collectors,
      parts.logs,
      parts.lock,
      parts.budget,
      parts.webhooks,
    ].map((p) => p.health),
  );
  return { ...parts, health, problems: problemsOf(parts) };
}
