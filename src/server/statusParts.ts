/** Each part of the status report, from what that part says of itself (the budget: statusBudget.ts). */
import { CLOCK_SKEW_WARN_SECONDS } from "../api/clockSkew.js";
import { describeNotice } from "../api/deprecation.js";
import { displayUrl } from "../api/redact.js";
import type { Part, StatusInputs, StatusReport } from "./statusTypes.js";

const iso = (ms: number | Date | undefined) =>
  ms === undefined ? undefined : (ms instanceof Date ? ms : new Date(ms)).toISOString();

export function apiPart(i: StatusInputs): StatusReport["api"] {
  const url = displayUrl(i.apiUrl);
  if (i.auth.ok) return { url, health: "ok", summary: "tokens are issued" };
  if (!i.auth.lastError) return { url, health: "pending", summary: "no token requested yet" };
  return {
    url,
    health: "critical",
    summary: "no usable token: the platform refuses the credentials or its own tokens, or cannot be reached",
    lastError: i.auth.lastError,
    since: iso(i.auth.at),
  };
}

/** The clock skew: a warning beyond CLOCK_SKEW_WARN_SECONDS, naming where to fix it. */
export function clockPart(i: StatusInputs): StatusReport["clock"] {
  const c = i.clock;
  if (!c) return { health: "pending", summary: "not measured yet (no API answer with a Date header)" };
  const skewSeconds = Math.round(c.offsetMs / 100) / 10;
  const off = Math.abs(skewSeconds);
  const words = `the exporter's clock is ${off} s ${skewSeconds > 0 ? "behind" : "ahead of"} the platform's`;
  const base = { skewSeconds, samples: c.samples, since: iso(c.atMs) };
  if (off <= CLOCK_SKEW_WARN_SECONDS)
    return { ...base, health: "ok", summary: off < 1 ? "in step with the platform's" : words };
  return {
    ...base,
    health: "warning",
    summary: `${words} (more than ${CLOCK_SKEW_WARN_SECONDS} s): the log tailers use the platform's time, but the exporter's own timestamps are off; synchronise the node's clock (NTP, chrony: a container has its node's clock)`,
  };
}

/** Endpoints the platform says are going away: a warning, naming them and when. */
export function apiEndpointsPart(i: StatusInputs): StatusReport["apiEndpoints"] {
  const notices = i.deprecations ?? [];
  if (notices.length === 0)
    return { health: "ok", summary: "no answer said an endpoint is deprecated", deprecated: [] };
  const deprecated = notices.map((n) => ({
    endpoint: n.endpoint,
    ...(n.sunsetAtMs !== undefined ? { sunset: iso(n.sunsetAtMs) } : {}),
    ...(n.deprecatedAtMs !== undefined ? { deprecatedFrom: iso(n.deprecatedAtMs) } : {}),
    ...(n.link !== undefined ? { link: n.link } : {}),
  }));
  const first = notices.map(describeNotice).join(", ");
  return {
    health: "warning",
    summary: `the platform says ${notices.length === 1 ? "this endpoint is" : `these ${notices.length} endpoints are`} going away: ${first}. Upgrade the exporter when a release reads its replacement; until the sunset date nothing changes`,
    since: iso(Math.min(...notices.map((n) => n.lastSeenMs))),
    deprecated,
  };
}

export function discoveryPart(i: StatusInputs): StatusReport["discovery"] {
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

export function collectorParts(i: StatusInputs): StatusReport["collectors"] {
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

/** Records a collector rejected are shown this long (the window of SitehostExporterLogExportsRefused). */
const REJECTIONS_SHOWN_MS = 10 * 60_000;

export function logsPart(i: StatusInputs): StatusReport["logs"] {
  const exp = i.export;
  const endpoint = exp?.endpoint;
  // Webhook events ship with the logs or not at all (the counting sink "delivers" every batch).
  if (!i.logs.enabled)
    return { health: "off", summary: "logs are not tailed nor shipped (logs.enabled: false)", streams: [] };
  if (!i.logs.shipping)
    return {
      health: "off",
      summary: "logs are read and counted, not shipped (logs.ship: false)",
      streams: [],
    };
  const kinds = [...i.logs.streams, ...(i.webhooks ? ["webhook"] : [])];
  const streams = kinds.map((stream) => {
    const s = exp?.streams[stream];
    const failing =
      s?.lastFailureMs !== undefined && (s.lastSuccessMs === undefined || s.lastFailureMs > s.lastSuccessMs);
    if (failing)
      return {
        stream,
        health: "critical" as const,
        summary: s?.refused
          ? "export refused by the endpoint: records kept and retried, reading waits"
          : "export failing: reading waits",
        lastError: s?.lastError,
        since: iso(s?.lastFailureMs),
      };
    if (s?.lastSuccessMs !== undefined)
      return { stream, health: "ok" as const, summary: "shipping", since: iso(s.lastSuccessMs) };
    return { stream, health: "pending" as const, summary: "nothing exported yet" };
  });
  if (exp?.state === "failing" && exp.refusingSinceMs !== undefined) {
    return {
      endpoint,
      health: exp.lasting ? "critical" : "warning",
      refusing: true,
      summary: `the OTLP endpoint answers but refuses every export${exp.lasting ? " (for longer than logs.exportFailureWarnAfter: not ready)" : ""}; records are kept and retried, reading stops`,
      lastError: exp.lastError,
      since: iso(exp.refusingSinceMs),
      streams,
    };
  }
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
  const rejection = exp?.lastRejection;
  if (exp?.state === "ok" && rejection && i.now - rejection.atMs < REJECTIONS_SHOWN_MS) {
    return {
      endpoint,
      health: "warning",
      refusing: true,
      summary:
        "the OTLP collector takes exports but rejected some records in the last 10 minutes: dropped, counted in sitehost_exporter_log_records_rejected_total",
      lastError: `${rejection.records} record${rejection.records === 1 ? "" : "s"} rejected: ${rejection.reason}`,
      since: iso(rejection.atMs),
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

export function lockPart(i: StatusInputs): Part {
  if (!i.lock) return { health: "off", summary: "no checkpoint lock (logs and traffic off)" };
  if (i.lock.held) return { health: "ok", summary: `held by this exporter (${i.lock.dir})` };
  if (!i.logs.enabled)
    return {
      health: "warning",
      summary: `not held (${i.lock.reason}): the traffic counters are not kept across restarts of this exporter`,
    };
  // Standing by for another replica is how a high-availability pair works, not a problem; an
  // unwritable directory shows as one in its own part.
  return { health: "pending", summary: i.lock.reason };
}

export function volumePart(i: StatusInputs): Part {
  const v = i.volume;
  if (!v) return { health: "off", summary: "no checkpoints (logs.enabled: false)" };
  if (v.writable) return { health: "ok", summary: `takes writes (${i.lock?.dir ?? "logs.checkpointDir"})` };
  return {
    health: "critical",
    summary: `cannot be written (${v.reason}, ${v.failures} failed writes): log shipping paused, webhook events answered 503 until it takes writes again`,
    lastError: v.message,
    since: iso(v.sinceMs),
  };
}

export function webhooksPart(i: StatusInputs): StatusReport["webhooks"] {
  const w = i.webhooks;
  if (!w) return { health: "off", summary: "off (webhooks.enabled: false)" };
  const queued = w.queued === undefined ? {} : { queued: w.queued };
  return w.accepting
    ? { path: w.path, ...queued, health: "ok", summary: `accepting events on POST ${w.path}` }
    : {
        path: w.path,
        ...queued,
        health: "pending",
        summary: `not accepting events yet on POST ${w.path} (starting or standing by): the platform retries`,
      };
}
