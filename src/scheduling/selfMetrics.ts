/** The collectors' self-metrics, discovery's runs among them: runs, durations, skipped runs, failures. */
import type { Registry } from "prom-client";
import { counter, gauge } from "../metrics/selfMetric.js";

export function collectorSelfMetrics(registry: Registry) {
  return {
    runs: counter(registry, {
      name: "sitehost_exporter_collector_runs_total",
      help: "Collector runs, by collector and result (success, partial, failure).",
      labelNames: ["collector", "result"],
    }),
    duration: gauge(registry, {
      name: "sitehost_exporter_collector_duration_seconds",
      help: "Duration of the collector's last run in seconds.",
      labelNames: ["collector"],
    }),
    lastSuccess: gauge(registry, {
      name: "sitehost_exporter_collector_last_success_timestamp_seconds",
      help: "When the collector last finished a run with success or partial success, Unix seconds.",
      labelNames: ["collector"],
    }),
    skipped: counter(registry, {
      name: "sitehost_exporter_collector_skipped_runs_total",
      help: "Scheduled runs skipped because the previous run of the collector was still going.",
      labelNames: ["collector"],
    }),
    siteErrors: counter(registry, {
      name: "sitehost_exporter_collector_site_errors_total",
      help: "Collection failures of one site, or of one part of an account-level run (a zone, a record), which keeps its last good samples; by collector and reason.",
      labelNames: ["collector", "reason"],
    }),
  };
}

export type CollectorSelfMetrics = ReturnType<typeof collectorSelfMetrics>;
