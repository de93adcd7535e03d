/** The status report's shapes: what /-/status serves and the landing page renders, and what it is built from. */
import type { ExportStatus } from "../logs/otlp/exportHealth.js";
import type { RequestPlan } from "../scheduling/plan.js";
import type { Readiness } from "../scheduling/readiness.js";
import type { CollectorStatus } from "../scheduling/runner.js";
import type { CheckpointVolumeStatus } from "../ha/volume.js";

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
