/**
 * The simulator's options: fault knobs (changeable at run time), behaviour switches for what the
 * platform's documentation leaves open, and start-up settings. Validation of the run-time objects
 * sent to the control API lives here too, next to the types it checks.
 */
/**
 * The order a log endpoint pages in (newest-indexed-first: by when each entry became visible, newest
 * first, so an entry indexed late comes among newer ones), and whether a scroll is a snapshot or
 * follows new entries.
 */
export const LOG_ORDERS = ["newest-first", "oldest-first", "newest-indexed-first"] as const;
export type LogOrder = (typeof LOG_ORDERS)[number];
export type ScrollMode = "snapshot" | "cursor";

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
  /** PHP and web-server entries of second s become visible to readers at s + this. */
  logIndexDelaySeconds: number;
  /** Share (0..1) of those entries that become visible later still, by up to `lateLogMaxSeconds`. */
  lateLogFraction: number;
  lateLogMaxSeconds: number;
  /** Drift in the PHP and web-server log pages: the continuation's key (or none at all) ... */
  logScrollIdField: "scroll_id" | "scrollId" | "none";
  /** ... and `total_results` as a number (documented) or as a string. */
  logTotalResultsForm: "number" | "string";
  /** After this many pages a scroll starts again from its first page (0: never; a looping scroll). */
  logScrollLoopPages: number;
  /** Sites whose visitors fare worse (or better) than the fleet's usual, for a while: see WebFault. */
  webFaults: WebFault[];
}

/**
 * What a site's web-server log shows between `fromSecond` and `toSecond` (epoch seconds; absent: from
 * the start, for ever): `slow` multiplies uncached request times by 25 (a median above 1.5 s), `errorRate`
 * is the share of requests answered 5xx, `rate` replaces the generated entries per second (0: idle).
 * Entries of a second are fixed once generated, so give windows that start now or later.
 */
export interface WebFault {
  siteId: number;
  slow?: boolean;
  errorRate?: number;
  rate?: number;
  fromSecond?: number;
  toSecond?: number;
}

export type ActivityOrder = "newest-first" | "oldest-first";
export type AccountActivityScope = "all" | "account";
/** What a per_page above the activity logs' documented maximum (50) gets. */
export type PerPageOverflow = "clamp" | "reject";
/** How `certificate_expiration_date` is written: ISO 8601 with ms, epoch seconds, or 'YYYY-MM-DD HH:MM:SS'. */
export type CertificateTimeForm = "iso" | "epoch-seconds" | "datetime";
/** git_deploy_* webhook payloads: `event` only (all the platform documents), or with `site: {id}`. */
export type GitEventPayload = "bare" | "site";
/** What the traffic endpoint takes as `start_at`: a relative phrase ("1 hour ago", "-1h"), or only an ISO 8601 time (else 400). */
export type TrafficStartAt = "phrase" | "timestamp";

/** Switches between plausible readings of what the platform's documentation leaves open. */
export interface SimulatorBehaviour {
  activityOrder: ActivityOrder;
  /** What the account's activity log lists: every entry, site entries included, or the account's own. */
  accountActivityScope: AccountActivityScope;
  activityPerPageOverflow: PerPageOverflow;
  certificateTimeForm: CertificateTimeForm;
  gitEventPayload: GitEventPayload;
  trafficStartAt: TrafficStartAt;
}

export interface SimulatorOptions extends SimulatorFaults, SimulatorBehaviour {
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
  /** Where webhook events are POSTed; null: none are sent. */
  webhookUrl: string | null;
  /** Delivery attempts per event (the first one included). */
  webhookAttempts: number;
  /** Wait before the second attempt, ms; it doubles for each further one. */
  webhookBackoffMs: number;
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
  logIndexDelaySeconds: 0,
  lateLogFraction: 0,
  lateLogMaxSeconds: 0,
  logScrollIdField: "scroll_id",
  logTotalResultsForm: "number",
  logScrollLoopPages: 0,
  webFaults: [],
  activityOrder: "newest-first",
  accountActivityScope: "all",
  activityPerPageOverflow: "clamp",
  certificateTimeForm: "iso",
  gitEventPayload: "bare",
  trafficStartAt: "phrase",
  webhookUrl: null,
  webhookAttempts: 4,
  webhookBackoffMs: 1000,
  now: Date.now,
};

const ratio = (v: unknown) => typeof v === "number" && v >= 0 && v <= 1;
const nonNegative = (v: unknown) => typeof v === "number" && v >= 0;

const FAULT_KEYS: Record<keyof SimulatorFaults, (v: unknown) => boolean> = {
  latencyMs: nonNegative,
  errorRate: ratio,
  requestBudget: (v) =>
    v === null ||
    (typeof v === "object" &&
      Number.isInteger((v as Record<string, unknown>).requests) &&
      typeof (v as Record<string, unknown>).windowSeconds === "number" &&
      ((v as Record<string, unknown>).windowSeconds as number) > 0),
  malformedRate: ratio,
  failingSiteId: (v) => v === null || Number.isInteger(v),
  tokenLifetimeSeconds: (v) => typeof v === "number" && v > 0,
  scrollIdleSeconds: nonNegative,
  logIndexDelaySeconds: nonNegative,
  lateLogFraction: ratio,
  lateLogMaxSeconds: nonNegative,
  logScrollIdField: (v) => v === "scroll_id" || v === "scrollId" || v === "none",
  logTotalResultsForm: (v) => v === "number" || v === "string",
  logScrollLoopPages: (v) => Number.isInteger(v) && (v as number) >= 0,
  webFaults: (v) =>
    Array.isArray(v) &&
    v.every(
      (f: Record<string, unknown>) =>
        typeof f === "object" &&
        f !== null &&
        Number.isInteger(f.siteId) &&
        (f.slow === undefined || typeof f.slow === "boolean") &&
        (f.errorRate === undefined || ratio(f.errorRate)) &&
        (f.rate === undefined || nonNegative(f.rate)) &&
        (f.fromSecond === undefined || typeof f.fromSecond === "number") &&
        (f.toSecond === undefined || typeof f.toSecond === "number"),
    ),
};

const oneOf =
  (...values: string[]) =>
  (v: unknown) =>
    typeof v === "string" && values.includes(v);

const BEHAVIOUR_KEYS: Record<keyof SimulatorBehaviour, (v: unknown) => boolean> = {
  activityOrder: oneOf("newest-first", "oldest-first"),
  accountActivityScope: oneOf("all", "account"),
  activityPerPageOverflow: oneOf("clamp", "reject"),
  certificateTimeForm: oneOf("iso", "epoch-seconds", "datetime"),
  gitEventPayload: oneOf("bare", "site"),
  trafficStartAt: oneOf("phrase", "timestamp"),
};

function problemsOf(
  body: Record<string, unknown>,
  checks: Record<string, (v: unknown) => boolean>,
  what: string,
): string[] {
  const problems: string[] = [];
  for (const [key, value] of Object.entries(body)) {
    const check = checks[key];
    if (!check) problems.push(`unknown ${what} ${key}`);
    else if (!check(value)) problems.push(`invalid value for ${key}`);
  }
  return problems;
}

/** Problems of a faults object sent to POST /_simulator/faults (empty when it is valid). */
export function faultProblems(body: Record<string, unknown>): string[] {
  return problemsOf(body, FAULT_KEYS, "fault");
}

/** Problems of a behaviour object sent to POST /_simulator/behaviour (empty when it is valid). */
export function behaviourProblems(body: Record<string, unknown>): string[] {
  return problemsOf(body, BEHAVIOUR_KEYS, "behaviour");
}

export function faultsOf(o: SimulatorOptions): SimulatorFaults {
  const out = {} as Record<string, unknown>;
  for (const key of Object.keys(FAULT_KEYS)) out[key] = o[key as keyof SimulatorFaults];
  return out as unknown as SimulatorFaults;
}

export function behaviourOf(o: SimulatorOptions): SimulatorBehaviour {
  return {
    activityOrder: o.activityOrder,
    accountActivityScope: o.accountActivityScope,
    activityPerPageOverflow: o.activityPerPageOverflow,
    certificateTimeForm: o.certificateTimeForm,
    gitEventPayload: o.gitEventPayload,
    trafficStartAt: o.trafficStartAt,
  };
}
