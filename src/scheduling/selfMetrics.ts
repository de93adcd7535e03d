import { Counter, Gauge, type Registry } from "prom-client";
import { getOrCreate } from "../metrics/registry.js";

export function collectorSelfMetrics(registry: Registry) {
  const registers = [registry];
  return {
    up: getOrCreate(
      registry,
      "sitehost_up",
      () =>
        new Gauge({
          name: "sitehost_up",
          help: "1 when the last token request and site discovery worked.",
          registers,
        }),
    ),
    runs: getOrCreate(
      registry,
      "sitehost_exporter_collector_runs_total",
      () =>
        new Counter({
          name: "sitehost_exporter_collector_runs_total",
          help: "Collector runs, by collector and result (success, partial, failure).",
          labelNames: ["collector", "result"] as const,
          registers,
        }),
    ),
    duration: getOrCreate(
      registry,
      "sitehost_exporter_collector_duration_seconds",
      () =>
        new Gauge({
          name: "sitehost_exporter_collector_duration_seconds",
          help: "Duration of the collector's last run in seconds.",
          labelNames: ["collector"] as const,
          registers,
        }),
    ),
    lastSuccess: getOrCreate(
      registry,
      "sitehost_exporter_collector_last_success_timestamp_seconds",
      () =>
        new Gauge({
          name: "sitehost_exporter_collector_last_success_timestamp_seconds",
          help: "When the collector last finished a run with success or partial success, Unix seconds.",
          labelNames: ["collector"] as const,
          registers,
        }),
    ),
    skipped: getOrCreate(
      registry,
      "sitehost_exporter_collector_skipped_runs_total",
      () =>
        new Counter({
          name: "sitehost_exporter_collector_skipped_runs_total",
          help: "Scheduled runs skipped because the previous run of the collector was still going.",
          labelNames: ["collector"] as const,
          registers,
        }),
    ),
    siteErrors: getOrCreate(
      registry,
      "sitehost_exporter_collector_site_errors_total",
      () =>
        new Counter({
          name: "sitehost_exporter_collector_site_errors_total",
          help: "Collection failures of one site, or of one part of an account-level run (a zone, a record), which keeps its last good samples; by collector and reason.",
          labelNames: ["collector", "reason"] as const,
          registers,
        }),
    ),
    sitesDiscovered: getOrCreate(
      registry,
      "sitehost_exporter_sites_discovered",
      () =>
        new Gauge({
          name: "sitehost_exporter_sites_discovered",
          help: "Sites selected by the last discovery (after filters and sharding).",
          registers,
        }),
    ),
  };
}

export type CollectorSelfMetrics = ReturnType<typeof collectorSelfMetrics>;
