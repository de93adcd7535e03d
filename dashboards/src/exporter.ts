/** Exporter health: is sitehost-exporter itself doing its job? */
import { PanelBuilder as BarGauge } from "@grafana/grafana-foundation-sdk/bargauge";
import {
  BarGaugeDisplayMode,
  BigValueTextMode,
  StackingConfigBuilder,
  StackingMode,
  VizOrientation,
} from "@grafana/grafana-foundation-sdk/common";
import { MappingType, RowBuilder, type Dashboard } from "@grafana/grafana-foundation-sdk/dashboard";
import { PanelBuilder as Stat } from "@grafana/grafana-foundation-sdk/stat";
import { PanelBuilder as Table } from "@grafana/grafana-foundation-sdk/table";
import { PanelBuilder as TimeSeries } from "@grafana/grafana-foundation-sdk/timeseries";
import {
  siteDetailLink,
  downThresholds,
  finalize,
  panel,
  q,
  sel,
  lastValue,
  sitehostDashboard,
  upThresholds,
} from "./common.js";

export const EXPORTER_UID = "sitehost-exporter-health";

const lockState = [
  {
    type: MappingType.ValueToText as const,
    options: {
      "0": { text: "Standby", color: "orange", index: 0 },
      "1": { text: "Holds", color: "green", index: 1 },
    },
  },
];

const upDown = [
  {
    type: MappingType.ValueToText as const,
    options: { "0": { text: "Down", color: "red", index: 0 }, "1": { text: "Up", color: "green", index: 1 } },
  },
];

export function exporterDashboard(): Dashboard {
  const S = sel();
  const rate = (metric: string, extra?: string): string => `rate(${metric}${sel(extra)}[$__rate_interval])`;
  const d = sitehostDashboard({
    title: "Sitehost / Exporter health",
    uid: EXPORTER_UID,
    description:
      "sitehost-exporter itself: API requests, errors, latency and rate limiting, tokens, collector freshness and failures, log shipping and lag, the webhook receiver.",
    from: "now-3h",
    refresh: "30s",
  });

  d.withRow(new RowBuilder("Overview"));
  d.withPanel(
    panel(new Stat(), {
      title: "API access",
      description: "sitehost_up per instance: 1 when the last token request and site discovery worked.",
      unit: "none",
      w: 4,
      h: 5,
      targets: [q(`sitehost_up${S}`, { legend: "{{instance}}" })],
    })
      .mappings(upDown)
      .thresholds(downThresholds(1, 1))
      .reduceOptions(lastValue()),
  );
  d.withPanel(
    panel(new Stat(), {
      title: "Scrape",
      description: "Prometheus's own up metric for the exporter's scrape target.",
      unit: "none",
      w: 4,
      h: 5,
      targets: [q(`up${S}`, { legend: "{{instance}}" })],
    })
      .mappings(upDown)
      .thresholds(downThresholds(1, 1))
      .reduceOptions(lastValue()),
  );
  d.withPanel(
    panel(new Stat(), {
      title: "Sites discovered",
      description:
        "Sites found by the last discovery, after include/exclude filters and sharding, summed over instances.",
      unit: "none",
      w: 4,
      h: 5,
      targets: [q(`sum(sitehost_exporter_sites_discovered${S})`, { legend: "sites" })],
    }).reduceOptions(lastValue()),
  );
  d.withPanel(
    panel(new Table(), {
      title: "Build",
      description: "Version, revision and Node.js version of each running instance.",
      unit: "none",
      w: 12,
      h: 5,
      targets: [q(`sitehost_exporter_build_info${S}`, { table: true })],
    }).withTransformation({
      id: "organize",
      options: { excludeByName: { Time: true, __name__: true, job: true, Value: true }, renameByName: {} },
    }),
  );

  d.withRow(new RowBuilder("Shards and checkpoint lock"));
  d.withPanel(
    panel(new Stat(), {
      title: "Exporters per shard",
      description:
        "Exporters collecting and shipping each shard (index/count). More than one ships every log record of the shard more than once: SitehostExporterShardServedTwice.",
      unit: "none",
      w: 8,
      h: 5,
      targets: [q(`count by (shard) (sitehost_exporter_shard_info${S})`, { legend: "shard {{shard}}" })],
    })
      .thresholds(upThresholds(2, 2))
      .reduceOptions(lastValue())
      .textMode(BigValueTextMode.ValueAndName),
  );
  d.withPanel(
    panel(new Stat(), {
      title: "Checkpoint lock",
      description:
        "Per instance: Holds = it collects and ships; Standby = another exporter holds the lock on its checkpoint directory.",
      unit: "none",
      w: 8,
      h: 5,
      targets: [q(`sitehost_exporter_checkpoint_lock_held${S}`, { legend: "{{instance}}" })],
    })
      .mappings(lockState)
      .reduceOptions(lastValue())
      .textMode(BigValueTextMode.ValueAndName),
  );
  d.withPanel(
    panel(new Table(), {
      title: "Lock holders",
      description:
        "For each instance, the exporter (owner id, host, pid) holding its checkpoint directory's lock.",
      unit: "none",
      w: 8,
      h: 5,
      targets: [q(`sitehost_exporter_checkpoint_lock_holder_info${S}`, { table: true })],
    }).withTransformation({
      id: "organize",
      options: { excludeByName: { Time: true, __name__: true, job: true, Value: true }, renameByName: {} },
    }),
  );

  d.withRow(new RowBuilder("Platform API"));
  d.withPanel(
    panel(new TimeSeries(), {
      title: "API requests by status code",
      description: "Requests per second to the platform API (all endpoints), by HTTP status code.",
      unit: "reqps",
      targets: [q(`sum by (code) (${rate("sitehost_exporter_api_requests_total")})`, { legend: "{{code}}" })],
    }),
  );
  d.withPanel(
    panel(new TimeSeries(), {
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
    }).min(0),
  );
  d.withPanel(
    panel(new TimeSeries(), {
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
  );
  d.withPanel(
    panel(new TimeSeries(), {
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
    }).min(0),
  );
  d.withPanel(
    panel(new TimeSeries(), {
      title: "Token requests",
      description:
        "Client-credentials token requests per interval by result; a steady trickle of successes is normal refresh.",
      unit: "short",
      targets: [
        q(`sum by (result) (increase(sitehost_exporter_auth_token_requests_total${S}[$__rate_interval]))`, {
          legend: "{{result}}",
        }),
      ],
    }).min(0),
  );
  d.withPanel(
    panel(new TimeSeries(), {
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
  );

  d.withPanel(
    panel(new TimeSeries(), {
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
    })
      .stacking(new StackingConfigBuilder().mode(StackingMode.Normal))
      .overrideByName("budget", [
        { id: "custom.stacking", value: { mode: "none", group: "A" } },
        { id: "custom.lineStyle", value: { fill: "dash", dash: [10, 10] } },
      ])
      .min(0),
  );

  d.withRow(new RowBuilder("Collectors"));
  d.withPanel(
    panel(new TimeSeries(), {
      title: "Time since last successful run",
      description:
        "Seconds since each collector last finished successfully; grows steadily when a collector keeps failing.",
      unit: "s",
      targets: [
        q(`time() - max by (collector) (sitehost_exporter_collector_last_success_timestamp_seconds${S})`, {
          legend: "{{collector}}",
        }),
      ],
    }),
  );
  d.withPanel(
    panel(new TimeSeries(), {
      title: "Collector runs by result",
      description: "Collector runs per second by collector and result (success, partial, failure).",
      unit: "ops",
      targets: [
        q(`sum by (collector, result) (${rate("sitehost_exporter_collector_runs_total")})`, {
          legend: "{{collector}} {{result}}",
        }),
      ],
    }),
  );
  d.withPanel(
    panel(new TimeSeries(), {
      title: "Collector failures",
      description:
        "Collector runs that ended partial or failed, per interval and collector; zero when all is well.",
      unit: "short",
      targets: [
        q(
          `sum by (collector) (increase(sitehost_exporter_collector_runs_total${sel('result!="success"')}[$__rate_interval])) or on () vector(0)`,
          { legend: "{{collector}}" },
        ),
      ],
    }).min(0),
  );
  d.withPanel(
    panel(new TimeSeries(), {
      title: "Collector run duration",
      description: "Duration of each collector's latest run.",
      unit: "s",
      targets: [
        q(`max by (collector) (sitehost_exporter_collector_duration_seconds${S})`, {
          legend: "{{collector}}",
        }),
      ],
    }),
  );

  d.withPanel(
    panel(new Stat(), {
      title: "Certificate records by result",
      description:
        "A records of the DNS zones in the last certificates run: SSL details read, no certificate data yet, request failed (last samples kept), or skipped (no site, or a site this instance does not select).",
      unit: "none",
      targets: [q(`sum by (result) (sitehost_exporter_certificate_records${S})`, { legend: "{{result}}" })],
    })
      .reduceOptions(lastValue())
      .textMode(BigValueTextMode.ValueAndName),
  );
  d.withPanel(
    panel(new Stat(), {
      title: "Sites not enrolled in git",
      description:
        "Selected sites whose git deploy history answers 422: not enrolled in the platform's git integration (support enrolls them). Each is asked again once a day.",
      unit: "none",
      targets: [q(`sum(sitehost_exporter_git_sites_not_enrolled${S})`, { legend: "not enrolled" })],
    }).reduceOptions(lastValue()),
  );

  d.withRow(new RowBuilder("Log shipping"));
  d.withPanel(
    panel(new TimeSeries(), {
      title: "Log records shipped",
      description: "Log records per second exported over OTLP and acknowledged, by stream (php, server).",
      unit: "cps",
      targets: [
        q(`sum by (stream) (${rate("sitehost_exporter_log_records_shipped_total")}) or on () vector(0)`, {
          legend: "{{stream}}",
        }),
      ],
    }).min(0),
  );
  d.withPanel(
    panel(new TimeSeries(), {
      title: "Deduplicated, failed and lost log records",
      description:
        "Per second, by stream: records dropped as already delivered (replays after a new scroll), OTLP export failures, and gaps where retention passed a checkpoint.",
      unit: "cps",
      targets: [
        q(
          `sum by (stream) (${rate("sitehost_exporter_log_records_deduplicated_total")}) or on () vector(0)`,
          {
            legend: "deduplicated {{stream}}",
          },
        ),
        q(`sum by (stream) (${rate("sitehost_exporter_log_export_failures_total")}) or on () vector(0)`, {
          legend: "export failures {{stream}}",
        }),
        q(`sum by (stream) (${rate("sitehost_exporter_log_gaps_total")}) or on () vector(0)`, {
          legend: "gaps {{stream}}",
        }),
      ],
    }).min(0),
  );
  d.withPanel(
    panel(new TimeSeries(), {
      title: "Log lag (worst site)",
      description: "Per stream, the largest lag over sites: now minus the newest shipped record's time.",
      unit: "s",
      targets: [q(`max by (stream) (sitehost_exporter_log_lag_seconds${S})`, { legend: "{{stream}}" })],
    }),
  );
  d.withPanel(
    panel(new BarGauge(), {
      title: "Most lagging sites",
      description: "The ten site streams whose newest shipped record is oldest.",
      unit: "s",
      targets: [
        q(`topk(10, max by (site, stream) (sitehost_exporter_log_lag_seconds${S}))`, {
          legend: "{{site}} {{stream}}",
          instant: true,
        }),
      ],
    })
      .dataLinks([siteDetailLink("label")])
      .reduceOptions(lastValue())
      .displayMode(BarGaugeDisplayMode.Gradient)
      .orientation(VizOrientation.Horizontal),
  );

  d.withRow(new RowBuilder("Webhook receiver"));
  d.withPanel(
    panel(new TimeSeries(), {
      title: "Webhook deliveries rejected",
      description:
        "Webhook deliveries per second not accepted, by reason: unauthorized (wrong or missing token), method_not_allowed, too_large, unsupported_media_type, bad_request, unavailable (answered 503: queue full or failing, or standing by; the platform retries). Zero when all is well.",
      unit: "reqps",
      targets: [
        q(`sum by (reason) (${rate("sitehost_exporter_webhook_rejected_total")})`, { legend: "{{reason}}" }),
      ],
    }).min(0),
  );
  d.withPanel(
    panel(new TimeSeries(), {
      title: "Webhook events waiting to be shipped",
      description:
        "Accepted webhook events held on disk until the OTLP collector acknowledges them; it grows while the collector is down and drains when it is back.",
      unit: "none",
      targets: [q(`sum(sitehost_exporter_webhook_queued_records${S})`, { legend: "queued" })],
    }).min(0),
  );

  d.withRow(new RowBuilder("Process"));
  d.withPanel(
    panel(new TimeSeries(), {
      title: "Memory",
      description: "Resident memory and V8 heap used of each instance.",
      unit: "bytes",
      w: 8,
      targets: [
        q(`process_resident_memory_bytes${S}`, { legend: "resident {{instance}}" }),
        q(`sum by (instance) (nodejs_heap_size_used_bytes${S})`, { legend: "heap used {{instance}}" }),
      ],
    }),
  );
  d.withPanel(
    panel(new TimeSeries(), {
      title: "CPU",
      description: "CPU time used per second of each instance (1 = one core busy).",
      unit: "percentunit",
      w: 8,
      targets: [q(`rate(process_cpu_seconds_total${S}[$__rate_interval])`, { legend: "{{instance}}" })],
    }),
  );
  d.withPanel(
    panel(new Stat(), {
      title: "Event loop lag p99",
      description:
        "99th percentile event loop delay of each instance; high values delay scrapes and log polling.",
      unit: "s",
      w: 8,
      targets: [q(`nodejs_eventloop_lag_p99_seconds${S}`, { legend: "{{instance}}" })],
    })
      .reduceOptions(lastValue())
      .textMode(BigValueTextMode.ValueAndName),
  );
  return finalize(d.build());
}
