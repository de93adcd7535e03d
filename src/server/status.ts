/**
 * The exporter's status, what is wrong first: the landing page renders it, `/-/status` serves it as
 * JSON. Built from what the parts say of themselves (the API client's token, discovery and each
 * collector's last run, the OTLP endpoint's health, the lock, the request plan, the webhook receiver);
 * each problem says why, since when, and links its runbook entry; parts failing with one error are one
 * problem with a count (statusProblems.ts).
 */
import type { Health, StatusInputs, StatusReport } from "./statusTypes.js";
import { budgetPart } from "./statusBudget.js";
import { problemsOf, RANK } from "./statusProblems.js";
import {
  apiEndpointsPart,
  apiPart,
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

function worst(parts: readonly Health[]): Health {
  return parts.reduce<Health>((a, b) => (RANK[b] > RANK[a] ? b : a), "off");
}

export function buildStatus(i: StatusInputs): StatusReport {
  const parts = {
    version: i.version,
    generatedAt: new Date(i.now).toISOString(),
    ready: i.ready,
    api: apiPart(i),
    clock: clockPart(i),
    apiEndpoints: apiEndpointsPart(i),
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
      parts.apiEndpoints,
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
