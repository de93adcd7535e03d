/**
 * Metric names of the public contract (the site, account and self-metrics of docs/metrics.md) that
 * dashboards and alert rules may reference. Site and account families come from
 * src/metrics/families.ts; the self-metrics are listed here by hand, so that renaming one in the code
 * fails this test instead of silently breaking a dashboard.
 */
import { METRIC_FAMILIES } from "../../../src/metrics/families.js";
import { SlosSchema } from "../../../src/config/slos.js";
import { sloRuleGroups } from "../../../src/slo/rules.js";

/** The series of a histogram family: its buckets, sum and count. */
const HISTOGRAM_SERIES = METRIC_FAMILIES.filter((f) => f.type === "histogram").flatMap((f) =>
  ["_bucket", "_sum", "_count"].map((s) => f.name + s),
);

/** What the SLO rules record (sitehost_site_slo:...), which the dashboards chart. */
export const SLO_RECORDS: readonly string[] = [
  ...new Set(
    sloRuleGroups(SlosSchema.parse({}))
      .flatMap((g) => g.rules)
      .flatMap((r) => ("record" in r ? [r.record] : [])),
  ),
];

export const SELF_METRICS: readonly string[] = [
  "sitehost_up",
  "sitehost_exporter_build_info",
  "sitehost_exporter_api_requests_total",
  "sitehost_exporter_api_request_duration_seconds_bucket",
  "sitehost_exporter_api_request_duration_seconds_sum",
  "sitehost_exporter_api_request_duration_seconds_count",
  "sitehost_exporter_api_retries_total",
  "sitehost_exporter_auth_token_requests_total",
  "sitehost_exporter_clock_skew_seconds",
  "sitehost_exporter_collector_runs_total",
  "sitehost_exporter_collector_duration_seconds",
  "sitehost_exporter_collector_last_success_timestamp_seconds",
  "sitehost_exporter_sites_discovered",
  "sitehost_exporter_log_records_shipped_total",
  "sitehost_exporter_log_records_deduplicated_total",
  "sitehost_exporter_log_export_failures_total",
  "sitehost_exporter_log_exports_refused_total",
  "sitehost_exporter_log_records_rejected_total",
  "sitehost_exporter_log_lag_seconds",
  "sitehost_exporter_log_gaps_total",
  "sitehost_exporter_log_paging_problems_total",
  "sitehost_exporter_log_streams_stalled",
  "sitehost_exporter_api_planned_requests_per_second",
  "sitehost_exporter_api_budget_requests_per_second",
  "sitehost_exporter_api_requests_per_site_hour",
  "sitehost_exporter_site_state_corrections_total",
  "sitehost_exporter_shard_info",
  "sitehost_exporter_checkpoint_lock_held",
  "sitehost_exporter_checkpoint_lock_holder_info",
  "sitehost_exporter_checkpoint_write_errors_total",
  "sitehost_exporter_log_shipping_paused",
  "sitehost_exporter_webhook_rejected_total",
  "sitehost_exporter_webhook_queued_records",
];

/** Prometheus's own `up` and the prom-client process metrics the exporter health dashboard charts. */
export const OTHER_METRICS: readonly string[] = [
  "up",
  "process_resident_memory_bytes",
  "process_cpu_seconds_total",
  "nodejs_heap_size_used_bytes",
  "nodejs_eventloop_lag_p99_seconds",
];

/** The OpenTelemetry Collector sidecar's own metrics (Helm chart) its alerts use. */
export const COLLECTOR_METRICS: readonly string[] = [
  "otelcol_exporter_queue_size",
  "otelcol_exporter_queue_capacity",
  "otelcol_exporter_send_failed_log_records_total",
];

/** blackbox_exporter's series of the /sd/probes targets (its job, the probed URL as instance). */
export const PROBE_METRICS: readonly string[] = [
  "probe_success",
  "probe_duration_seconds",
  "probe_ssl_earliest_cert_expiry",
];

export const KNOWN_METRICS: ReadonlySet<string> = new Set([
  ...METRIC_FAMILIES.map((f) => f.name),
  ...HISTOGRAM_SERIES,
  ...SLO_RECORDS,
  ...SELF_METRICS,
  ...OTHER_METRICS,
  ...COLLECTOR_METRICS,
  ...PROBE_METRICS,
]);

const METRIC_RE =
  /\b(sitehost_[a-z0-9_:]+|up|process_[a-z0-9_]+|nodejs_[a-z0-9_]+|otelcol_[a-z0-9_]+|probe_[a-z0-9_]+)\b(?!\s*\()/g;

/** The metric selectors of a PromQL expression: name and the text inside its `{...}` (undefined when none). */
export function metricSelectors(expr: string): Array<{ name: string; matchers: string | undefined }> {
  const out: Array<{ name: string; matchers: string | undefined }> = [];
  for (const m of expr.matchAll(METRIC_RE)) {
    const name = m[1] as string;
    const at = m.index ?? 0;
    // Inside a quoted label value (odd number of quotes before it): not a metric.
    if ((expr.slice(0, at).match(/"/g)?.length ?? 0) % 2 === 1) continue;
    // A label name inside {...}, by (...) or on (...) is not a metric either.
    if (/[{,(]\s*$/.test(expr.slice(0, at)) && /^\s*(=|!=|=~|!~|,|\))/.test(expr.slice(at + name.length)))
      continue;
    const braces = /^\s*\{([^}]*)\}/.exec(expr.slice(at + name.length));
    out.push({ name, matchers: braces?.[1] });
  }
  return out;
}
