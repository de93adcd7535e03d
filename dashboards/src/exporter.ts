/** Exporter health: is sitehost-exporter itself doing its job? */
import { StackingConfigBuilder, StackingMode } from "@grafana/grafana-foundation-sdk/common";
import type { Dashboard } from "@grafana/grafana-foundation-sdk/dashboard";
import { downThresholds, finalize, q, sel, sitehostDashboard, upThresholds } from "./common.js";
import { exporterWorkSections } from "./exporterWork.js";
import { section, stat, table, timeSeries, type PanelOpts } from "./panels.js";

export const EXPORTER_UID = "sitehost-exporter-health";

/** Columns of an instant table of info series: every label but job, the value hidden. */
const infoColumns = [
  {
    id: "organize",
    options: { excludeByName: { Time: true, __name__: true, job: true, Value: true }, renameByName: {} },
  },
];

export function exporterDashboard(): Dashboard {
  const S = sel();
  const rate = (metric: string, extra?: string): string => `rate(${metric}${sel(extra)}[$__rate_interval])`;
  /** Per instance, 1 up and 0 down. */
  const upStat = (o: Omit<PanelOpts, "unit" | "w" | "h">) =>
    stat({
      unit: "none",
      w: 4,
      h: 5,
      words: { "0": ["Down", "red"], "1": ["Up", "green"] },
      thresholds: downThresholds(1, 1),
      ...o,
    });
  const d = sitehostDashboard({
    title: "Sitehost / Exporter health",
    uid: EXPORTER_UID,
    description:
      "sitehost-exporter itself: API requests, errors, latency and rate limiting, tokens, collector freshness and failures, log shipping and lag, the webhook receiver.",
    from: "now-3h",
    refresh: "30s",
  });

  section(d, "Overview", [
    upStat({
      title: "API access",
      description: "sitehost_up per instance: 1 when the last token request and site discovery worked.",
      targets: [q(`sitehost_up${S}`, { legend: "{{instance}}" })],
    }),
    upStat({
      title: "Scrape",
      description: "Prometheus's own up metric for the exporter's scrape target.",
      targets: [q(`up${S}`, { legend: "{{instance}}" })],
    }),
    stat({
      title: "Sites discovered",
      description:
        "Sites found by the last discovery, after include/exclude filters and sharding, summed over instances.",
      unit: "none",
      w: 4,
      h: 5,
      targets: [q(`sum(sitehost_exporter_sites_discovered${S})`, { legend: "sites" })],
    }),
    table({
      title: "Build",
      description: "Version, revision and Node.js version of each running instance.",
      unit: "none",
      w: 12,
      h: 5,
      targets: [q(`sitehost_exporter_build_info${S}`, { table: true })],
      transformations: infoColumns,
    }),
  ]);

  section(d, "Shards, checkpoint lock and directory", [
    stat({
      title: "Exporters per shard",
      description:
        "Exporters collecting and shipping each shard (index/count), per cluster. More than one ships every log record of the shard more than once: SitehostExporterShardServedTwice.",
      unit: "none",
      w: 8,
      h: 5,
      targets: [
        q(`count by (cluster, shard) (sitehost_exporter_shard_info${S})`, {
          legend: "shard {{shard}} {{cluster}}",
        }),
      ],
      thresholds: upThresholds(2, 2),
      show: "both",
    }),
    stat({
      title: "Checkpoint lock",
      description:
        "Per instance: Holds = it collects and ships; Standby = another exporter holds the lock on its checkpoint directory.",
      unit: "none",
      w: 8,
      h: 5,
      targets: [q(`sitehost_exporter_checkpoint_lock_held${S}`, { legend: "{{instance}}" })],
      words: { "0": ["Standby", "orange"], "1": ["Holds", "green"] },
      show: "both",
    }),
    table({
      title: "Lock holders",
      description:
        "For each instance, the exporter (owner id, host, pid) holding its checkpoint directory's lock.",
      unit: "none",
      w: 8,
      h: 5,
      targets: [q(`sitehost_exporter_checkpoint_lock_holder_info${S}`, { table: true })],
      transformations: infoColumns,
    }),
    stat({
      title: "Checkpoint directory",
      description:
        "Per instance: Writable, or Paused while writes under logs.checkpointDir fail (full, read-only): no log stream is read or shipped and webhook events are answered 503 until a probe write succeeds. SitehostExporterCheckpointWritesFailing.",
      unit: "none",
      w: 8,
      h: 6,
      targets: [q(`sitehost_exporter_log_shipping_paused${S}`, { legend: "{{instance}}" })],
      words: { "0": ["Writable", "green"], "1": ["Paused", "red"] },
      show: "both",
    }),
    timeSeries({
      title: "Failed checkpoint writes",
      description:
        "Writes under logs.checkpointDir that failed per second, by reason (no_space, read_only, permission, other) and file (journal, snapshot, spool, lock, webhook_queue, shard_layout, probe).",
      unit: "ops",
      w: 16,
      h: 6,
      targets: [
        q(`sum by (reason, file) (${rate("sitehost_exporter_checkpoint_write_errors_total")})`, {
          legend: "{{reason}} {{file}}",
        }),
      ],
    }),
  ]);

  section(d, "Platform API", [
    timeSeries({
      title: "API requests by status code",
      description: "Requests per second to the platform API (all endpoints), by HTTP status code.",
      unit: "reqps",
      targets: [q(`sum by (code) (${rate("sitehost_exporter_api_requests_total")})`, { legend: "{{code}}" })],
    }),
    timeSeries({
      title: "API error ratio",
      description:
        "Share of API requests that did not get a 2xx answer (4xx, 5xx, 429, network errors and timeouts).",
      unit: "percentunit",
      targets: [
        q(
          `(sum(${rate("sitehost_exporter_api_requests_total", 'code!~"2.."')}) or vector(0)) / sum(${rate("sitehost_exporter_api_requests_total")})`,
          { legend: "error ratio" },
        ),
      ],
      min: 0,
    }),
    timeSeries({
      title: "API latency",
      description:
        "API request duration quantiles over all endpoints (50th, 90th and 99th percentile), retries included.",
      unit: "s",
      targets: [0.5, 0.9, 0.99].map((quantile) =>
        q(
          `histogram_quantile(${quantile}, sum by (le) (${rate("sitehost_exporter_api_request_duration_seconds_bucket")}))`,
          { legend: `p${Math.round(quantile * 100)}` },
        ),
      ),
    }),
    timeSeries({
      title: "Rate limiting (429) and retries",
      description:
        "429 Too Many Requests answers per second, and retries per second by reason; both zero in a healthy steady state.",
      unit: "reqps",
      targets: [
        q(`sum(${rate("sitehost_exporter_api_requests_total", 'code="429"')}) or vector(0)`, {
          legend: "429 answers",
        }),
        q(`sum by (reason) (${rate("sitehost_exporter_api_retries_total")}) or on () vector(0)`, {
          legend: "retries {{reason}}",
        }),
      ],
      min: 0,
    }),
    timeSeries({
      title: "Token requests",
      description:
        "Client-credentials token requests per interval by result; a steady trickle of successes is normal refresh.",
      unit: "short",
      targets: [
        q(`sum by (result) (increase(sitehost_exporter_auth_token_requests_total${S}[$__rate_interval]))`, {
          legend: "{{result}}",
        }),
      ],
      min: 0,
    }),
    timeSeries({
      title: "Slowest endpoints (p90)",
      description: "90th percentile request duration per API endpoint (route template).",
      unit: "s",
      targets: [
        q(
          `histogram_quantile(0.9, sum by (le, endpoint) (${rate("sitehost_exporter_api_request_duration_seconds_bucket")}))`,
          { legend: "{{endpoint}}" },
        ),
      ],
    }),
    timeSeries({
      title: "API request budget",
      description:
        "Requests per second the schedules and log streams plan, by source, stacked, against the budget (api.maxRequestsPerSecond). Above the budget, collector runs stretch and logs are read late.",
      unit: "reqps",
      targets: [
        q(`sum by (source) (sitehost_exporter_api_planned_requests_per_second${S})`, {
          legend: "{{source}}",
        }),
        q(`sum(sitehost_exporter_api_budget_requests_per_second${S})`, { legend: "budget" }),
      ],
      min: 0,
    })
      .stacking(new StackingConfigBuilder().mode(StackingMode.Normal))
      .overrideByName("budget", [
        { id: "custom.stacking", value: { mode: "none", group: "A" } },
        { id: "custom.lineStyle", value: { fill: "dash", dash: [10, 10] } },
      ]),
    timeSeries({
      title: "API requests per site-hour",
      description:
        "What each source of requests cost per selected site and hour over the last 30 minutes, or one period of a slower schedule up to 6 hours (measured), beside the plan per site-hour (dashed): at steady state they agree within a fifth. Until the exporter has run for a source's whole window, the measured line is the plan (sitehost_exporter_api_requests_per_site_hour_measured 0). The budget divided by the total is how many site-hours an hour it allows.",
      unit: "short",
      targets: [
        q(`sum by (source) (sitehost_exporter_api_requests_per_site_hour${S})`, { legend: "{{source}}" }),
        q(
          `sum by (source) (sitehost_exporter_api_planned_requests_per_second${S}) * 3600 / on () group_left () clamp_min(sum(sitehost_exporter_sites_discovered${S}), 1)`,
          { legend: "{{source}} planned" },
        ),
      ],
      min: 0,
    }).overrideByRegexp(".* planned", [{ id: "custom.lineStyle", value: { fill: "dash", dash: [10, 10] } }]),
    timeSeries({
      title: "Clock skew",
      description:
        "The platform's clock minus the exporter's, from the Date header of the API's answers, per instance. The log tailers work on the platform's time; beyond a minute either way SitehostExporterClockSkewed fires and the host's time synchronisation wants a look.",
      unit: "s",
      targets: [
        q(`max by (instance) (sitehost_exporter_clock_skew_seconds${S})`, { legend: "{{instance}}" }),
      ],
    }),
  ]);

  exporterWorkSections(d);
  return finalize(d.build());
}
