/** The status report's shapes: what /-/status serves and the landing page renders, and what it is built from. */
import type { ClockOffset } from "../api/clockSkew.js";
import type { DeprecationNotice } from "../api/deprecation.js";
import type { ExportStatus } from "../logs/otlp/exportHealth.js";
import type { StartupWork } from "../scheduling/budgetPlanner.js";
import type { RequestPlan } from "../scheduling/plan.js";
import type { Readiness } from "../scheduling/readiness.js";
import type { CollectorStatus } from "../scheduling/runner.js";
import type { CheckpointVolumeStatus } from "../ha/volume.js";
import type { StallReason, StallSummary } from "../logs/stall.js";

/** ok; warning: works, but look; critical: something is not being done; off: not configured; pending: not yet known. */
export type Health = "ok" | "warning" | "critical" | "off" | "pending";

/** What the active exporter (not a standby) says of its parts. */
export interface ActiveStatus {
  sitesDiscovered: number;
  collectors: CollectorStatus[];
  plan?: RequestPlan;
  /** The planner's advice when the plan does not fit. */
  budgetAdvice?: string;
  /** With logs on: the log streams that cannot advance. */
  logStalls?: StallSummary;
  /** Start-up work left, as the request planner weighs it: first runs pending, log streams never read. */
  startup?: readonly StartupWork[];
}

export interface StatusInputs {
  version: string;
  telemetryPath: string;
  apiUrl: string;
  ready: Readiness;
  auth: { ok: boolean; lastError?: string; at?: number };
  /** The platform's clock against this one, from the API's answers (undefined before the first). */
  clock?: ClockOffset;
  /** Endpoints whose answers said they are deprecated or sunset. */
  deprecations?: readonly DeprecationNotice[];
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
  /** What is wrong (API access, discovery, a collector, log shipping, …); the worst first when merged. */
  subject: string;
  health: Extract<Health, "warning" | "critical">;
  reason: string;
  /** The parts that say this same error (1 unless merged); `subjects` names them all when more. */
  count: number;
  subjects?: string[];
  /** The error the parts share, when merged (each part's row shows it too in JSON). */
  error?: string;
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
  /** The platform's clock against the exporter's. */
  clock: Part & {
    /** The platform's clock minus the exporter's, seconds (undefined before the first measurement). */
    skewSeconds?: number;
    /** The answers the estimate is the median of. */
    samples?: number;
  };
  /** Endpoints the platform said are going away (Deprecation, Sunset headers), soonest sunset first. */
  apiEndpoints: Part & {
    deprecated: Array<{ endpoint: string; sunset?: string; deprecatedFrom?: string; link?: string }>;
  };
  discovery: Part & { sites: number };
  collectors: Array<
    Part & { name: string; enabled: boolean; schedule: string; lastRun?: string; result?: string }
  >;
  logs: Part & {
    endpoint?: string;
    /**
     * The endpoint answers but refuses every export (kept and retried), or rejected records lately
     * (dropped): a configuration or backend to fix, not an outage to wait out.
     */
    refusing?: boolean;
    streams: Array<Part & { stream: string }>;
  };
  /** Log streams that cannot advance: how many by reason, the longest stalled by name. */
  logStreams: Part & {
    stalled: number;
    byReason: Partial<Record<StallReason, number>>;
    first: StalledStreamStatus[];
  };
  lock: Part;
  /** logs.checkpointDir: whether it takes writes. */
  checkpointDir: Part;
  shard: string;
  budget: Part & {
    /**
     * While start-up work remains: the first runs pending (at most their whole runs' requests), when
     * they are expected done at the budget (collectors first), and the log streams to read after them.
     */
    firstPicture?: {
      collectorsPending: string[];
      requests: number;
      expectedInSeconds: number;
      logStreamsUnread: number;
    };
    plannedRequestsPerSecond?: number;
    budgetRequestsPerSecond?: number;
    /** Per source: planned requests/s, and per site-hour planned and measured lately (last 30 minutes). */
    sources?: Array<{
      source: string;
      requestsPerSecond: number;
      perSiteHour: number;
      measuredPerSiteHour?: number;
      /**
       * The measurement does not span a whole schedule period (or the first 30 minutes) yet: it holds
       * the first runs, which read every site at once, and is not compared with the plan.
       */
      measuredStarting?: boolean;
    }>;
    /** The sites api.maxRequestsPerSecond covers at this account's mix (none while no site is known). */
    sitesCovered?: number;
    /** The same in words, with the ways out when the sites come near it (over 80 %). */
    coverage?: string;
  };
  webhooks: Part & { path?: string; queued?: number };
  telemetryPath: string;
}

/** One stalled log stream as the status report names it. */
export interface StalledStreamStatus {
  /** 0 for the account's own activity log. */
  siteId: number;
  site: string;
  stream: string;
  reason: StallReason;
  since: string;
  /** The error, or the checkpoint file and what to do. */
  detail: string;
}
