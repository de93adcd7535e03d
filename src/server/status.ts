/**
 * The exporter's status, what is wrong first: the landing page renders it, `/-/status` serves it as
 * JSON. Built from what the parts say of themselves (the API client's token, discovery and each
 * collector's last run, the OTLP endpoint's health, the lock, the request plan, the webhook receiver);
 * each problem says why, since when, and links its runbook entry.
 */
import type { Health, Part, Problem, StatusInputs, StatusReport } from "./statusTypes.js";
import { runbookUrl } from "../util/runbook.js";
import {
  apiPart,
  budgetPart,
  clockPart,
  collectorParts,
  discoveryPart,
  lockPart,
  logsPart,
  volumePart,
  webhooksPart,
} from "./statusParts.js";
import { logStreamsPart } from "./statusStalls.js";

export type { ActiveStatus, Health, Part, Problem, StatusInputs, StatusReport } from "./statusTypes.js";

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
  add("Clock", r.clock, "SitehostExporterClockSkewed");
  add("Site discovery", r.discovery, "SitehostExporterDown");
  for (const c of r.collectors) add(`Collector ${c.name}`, c, "SitehostExporterCollectorStale");
  add(
    `Log shipping to ${r.logs.endpoint ?? "OTLP"}`,
    r.logs,
    r.logs.refusing ? "SitehostExporterLogExportsRefused" : "SitehostExporterLogExportFailing",
  );
  add("Log streams stalled", r.logStreams, "SitehostExporterLogStreamsStalled");
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
    clock: clockPart(i),
    discovery: discoveryPart(i),
    collectors: collectorParts(i),
    logs: logsPart(i),
    logStreams: logStreamsPart(i),
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
      parts.clock,
      parts.discovery,
      ...parts.collectors,
      parts.logs,
      parts.logStreams,
      parts.lock,
      parts.checkpointDir,
      parts.budget,
      parts.webhooks,
    ].map((p) => p.health),
  );
  return { ...parts, health, problems: problemsOf(parts) };
}
