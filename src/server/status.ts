/**
 * The exporter's status, what is wrong first: the landing page renders it, `/-/status` serves it as
 * JSON. Built from what the parts say of themselves (the API client's token, discovery and each
 * collector's last run, the OTLP endpoint's health, the lock, the request plan, the webhook receiver);
 * each problem says why, since when, and links its runbook entry.
 */
import type { ExportStatus } from "../logs/otlp/exportHealth.js";
import type { RequestPlan } from "../scheduling/plan.js";
import type { Readiness } from "../scheduling/readiness.js";
import type { CollectorStatus } from "../scheduling/runner.js";
import type { CheckpointVolumeStatus } from "../ha/volume.js";
import { runbookUrl } from "./runbook.js";
import {
  apiPart,
  budgetPart,
  collectorParts,
  discoveryPart,
  lockPart,
  logsPart,
  volumePart,
  webhooksPart,
} from "./statusParts.js";

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
  /** Whether this exporter holds the checkpoint lock, and what it says otherwise (none with logs and traffic off). */
  lock?: { held: boolean; reason: string; dir: string };
  /** With logs on: whether logs.checkpointDir takes writes. */
  volume?: CheckpointVolumeStatus;
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
  /** logs.checkpointDir: whether it takes writes. */
  checkpointDir: Part;
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

const RANK: Record<Health, number> = { critical: 4, warning: 3, pending: 2, ok: 1, off: 0 };

function worst(parts: readonly Health[]): Health {
  return parts.reduce<Health>((a, b) => (RANK[b] > RANK[a] ? b : a), "off");
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
  add("Checkpoint directory", r.checkpointDir, "SitehostExporterCheckpointWritesFailing");
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
    checkpointDir: volumePart(i),
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
      parts.checkpointDir,
      parts.budget,
      parts.webhooks,
    ].map((p) => p.health),
  );
  return { ...parts, health, problems: problemsOf(parts) };
}
