/** The log pipeline's self-metrics. */
import type { Registry } from "prom-client";
import { counter, readGauge } from "../metrics/selfMetric.js";
import { REFUSAL_REASONS, refusalReason, type ExportFailure } from "./otlp/outcome.js";

export function logMetrics(registry: Registry) {
  const byStream = (name: string, help: string) => counter(registry, { name, help, labelNames: ["stream"] });
  const perStream = (name: string, help: string) =>
    readGauge(registry, { name, help, labelNames: ["site_id", "site", "stream"] as const });
  return {
    shipped: byStream(
      "sitehost_exporter_log_records_shipped_total",
      "Log records acknowledged by the OTLP collector (or counted, with logs.ship false), by stream.",
    ),
    deduplicated: byStream(
      "sitehost_exporter_log_records_deduplicated_total",
      "Log entries read again (overlap window, replays) and dropped as already delivered, by stream.",
    ),
    exportFailures: byStream(
      "sitehost_exporter_log_export_failures_total",
      "OTLP export attempts that failed and are retried with backoff (the collector is down, or refuses every export), by stream.",
    ),
    rejected: byStream(
      "sitehost_exporter_log_records_rejected_total",
      "Log records the OTLP collector refused for good while it took the other records of their export (isolated by splitting the batch, or rejected in a partial success) and that were dropped, by stream.",
    ),
    exportsRefused: counter(registry, {
      name: "sitehost_exporter_log_exports_refused_total",
      help: "OTLP export attempts the endpoint answered but refused as a whole, kept and retried with backoff (also counted in sitehost_exporter_log_export_failures_total), by stream and reason: status (a non-retryable HTTP status or gRPC code for every record: a wrong path, protocol or credentials), partial_success (a partial success that rejected every record), not_otlp (a 2xx whose body is not an OTLP response, such as a proxy's HTML page).",
      labelNames: ["stream", "reason"],
    }),
    gaps: byStream(
      "sitehost_exporter_log_gaps_total",
      "Reads that shipped entries newer than the checkpoint without reaching it: what lay between was removed by the platform's retention or could not be read (paging that broke off), by stream.",
    ),
    pagingProblems: counter(registry, {
      name: "sitehost_exporter_log_paging_problems_total",
      help: "Log reads stopped short of the checkpoint, or failed, because of how the platform paged, by stream and problem: no_continuation (a full page without a scroll_id; the read is retried), repeated_page (the scroll looped back), page_limit and byte_limit (the bounds of one read), unusable_pages (page after page without a usable entry).",
      labelNames: ["stream", "problem"],
    }),
    malformed: byStream(
      "sitehost_exporter_log_records_malformed_total",
      "Log entries that did not fit the schema or had no usable time and were skipped, by stream.",
    ),
    future: byStream(
      "sitehost_exporter_log_records_future_total",
      "Log entries stamped more than a minute ahead of the platform's clock (the exporter's corrected by sitehost_exporter_clock_skew_seconds); shipped, but they never move the checkpoint past the time they were read, by stream.",
    ),
    late: byStream(
      "sitehost_exporter_log_records_late_total",
      "Log entries that appeared behind entries already shipped (the platform indexed them late); shipped, by stream.",
    ),
    requestTimeUnits: counter(registry, {
      name: "sitehost_exporter_log_request_time_units_total",
      help: "Web-server log streams whose request_time unit was decided from their first values (logs.requestTimeUnit auto), by unit: seconds or milliseconds. Until a stream's unit is decided, whole-number durations above 0 count in sitehost_site_http_requests_without_duration_total.",
      labelNames: ["unit"],
    }),
    checkpointErrors: byStream(
      "sitehost_exporter_log_checkpoint_errors_total",
      "Checkpoints that could not be trusted; the stream is stopped until reset, by stream.",
    ),
    startedFresh: byStream(
      "sitehost_exporter_log_streams_started_fresh_total",
      "Streams that had no checkpoint and started at logs.startFrom (a new site, a site that moved to this shard, a checkpoint directory that was not kept): entries written before that point are not shipped, by stream.",
    ),
    cycleFailures: byStream(
      "sitehost_exporter_log_cycle_failures_total",
      "Reads abandoned after a failed page request or a local error (restarted from the checkpoint with backoff), by stream.",
    ),
    lag: perStream(
      "sitehost_exporter_log_lag_seconds",
      "Now minus the time of the newest shipped log record (minus the stream's start point while none was shipped), by site and stream.",
    ),
    stalled: readGauge(registry, {
      name: "sitehost_exporter_log_streams_stalled",
      help: "Log streams that cannot advance, by stream and reason: too_large (a page over api.maxResponseSize; skipped as a counted gap 30 minutes after it was first met, where a read can get past it), checkpoint_corrupt (the checkpoint cannot be trusted; stopped until reset), malformed (reads meet nothing but malformed entries), read_failures (three or more reads in a row failed).",
      labelNames: ["stream", "reason"] as const,
    }),
    lastRead: perStream(
      "sitehost_exporter_log_last_read_timestamp_seconds",
      "When the stream was last read up to its end (nothing written since then is missed), Unix seconds, by site and stream.",
    ),
  };
}

export type LogMetrics = ReturnType<typeof logMetrics>;
/** The labels of the per-stream series. */
export type StreamLabel = "site_id" | "site" | "stream";

/** Counters without the site labels that dashboards and alerts read: 0 from the start, not absent until a first event. */
const STREAM_COUNTERS = [
  "shipped",
  "deduplicated",
  "exportFailures",
  "rejected",
  "gaps",
  "malformed",
  "future",
  "late",
  "checkpointErrors",
  "startedFresh",
  "cycleFailures",
] as const satisfies ReadonlyArray<keyof LogMetrics>;

/** Publish every per-stream counter of these streams at 0 (and the paging problems of each). */
export function countersFromZero(
  m: LogMetrics,
  streams: readonly string[],
  pagingProblems: readonly string[] = [],
): void {
  for (const stream of streams) {
    for (const name of STREAM_COUNTERS) m[name].inc({ stream }, 0);
    for (const problem of pagingProblems) m.pagingProblems.inc({ stream, problem }, 0);
    for (const reason of REFUSAL_REASONS) m.exportsRefused.inc({ stream, reason }, 0);
  }
}

/** A failed export attempt of `stream`, counted: every one, and those the endpoint refused by why. */
export function countExportFailure(m: LogMetrics, stream: string, failure: ExportFailure): void {
  m.exportFailures.inc({ stream });
  const reason = refusalReason(failure);
  if (reason) m.exportsRefused.inc({ stream, reason });
}
