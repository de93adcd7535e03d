/** The exporter health dashboard's rows about its work: collectors, log shipping, webhooks, the process. */
import type { DashboardBuilder } from "@grafana/grafana-foundation-sdk/dashboard";
import { q, sel } from "./common.js";
import { problemCount, section, siteRanking, stat, timeSeries } from "./panels.js";

export function exporterWorkSections(d: DashboardBuilder): void {
  const S = sel();
  const rate = (metric: string, extra?: string): string => `rate(${metric}${sel(extra)}[$__rate_interval])`;
  section(d, "Collectors", [
    timeSeries({
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
    timeSeries({
      title: "Collector runs by result",
      description: "Collector runs per second by collector and result (success, partial, failure).",
      unit: "ops",
      targets: [
        q(`sum by (collector, result) (${rate("sitehost_exporter_collector_runs_total")})`, {
          legend: "{{collector}} {{result}}",
        }),
      ],
    }),
    timeSeries({
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
      min: 0,
    }),
    timeSeries({
      title: "Collector run duration",
      description: "Duration of each collector's latest run.",
      unit: "s",
      targets: [
        q(`max by (collector) (sitehost_exporter_collector_duration_seconds${S})`, {
          legend: "{{collector}}",
        }),
      ],
    }),
    stat({
      title: "Certificate records by result",
      description:
        "A records of the DNS zones in the last certificates run: SSL details read, kept (unchanged for a while, not due this run), no certificate data yet, request failed (last samples kept), or skipped (no site, or a site this instance does not select).",
      unit: "none",
      targets: [q(`sum by (result) (sitehost_exporter_certificate_records${S})`, { legend: "{{result}}" })],
      show: "both",
    }),
    stat({
      title: "Sites not enrolled in git",
      description:
        "Selected sites whose git deploy history answers 422: not enrolled in the platform's git integration (support enrolls them). Each is asked again once a day.",
      unit: "none",
      targets: [q(`sum(sitehost_exporter_git_sites_not_enrolled${S})`, { legend: "not enrolled" })],
    }),
    problemCount({
      title: "Traffic periods missed",
      description:
        "Traffic periods that left the hour one answer covers before a poll could count them (an outage or a stopped exporter longer than the window); zero when all is well.",
      unit: "none",
      targets: [
        q(
          `sum(increase(sitehost_exporter_traffic_periods_missed_total${S}[$__rate_interval])) or vector(0)`,
          {
            legend: "missed",
          },
        ),
      ],
    }),
    stat({
      title: "Traffic start_at form",
      description:
        "The form of start_at the traffic collector sends: phrase (1 hour ago, the documented kind) unless the platform refused it and took offset (-1h) or timestamp (an ISO time an hour before).",
      unit: "none",
      targets: [
        q(`max by (form) (sitehost_exporter_traffic_start_at_form${S}) == 1`, { legend: "{{form}}" }),
      ],
    }),
  ]);

  const perStream = (metric: string) => `sum by (stream) (${rate(metric)}) or on () vector(0)`;
  section(d, "Log shipping", [
    timeSeries({
      title: "Log records shipped",
      description: "Log records per second exported over OTLP and acknowledged, by stream (php, server).",
      unit: "cps",
      targets: [q(perStream("sitehost_exporter_log_records_shipped_total"), { legend: "{{stream}}" })],
      min: 0,
    }),
    timeSeries({
      title: "Deduplicated, failed and lost log records",
      description:
        "Per second, by stream: records dropped as already delivered (replays after a new scroll), OTLP export failures, exports the endpoint answered but refused as a whole (by reason: kept and retried), records it rejected while taking the others (dropped), gaps where a read jumped past a checkpoint (retention, or paging that broke off), and reads stopped short by the platform's paging (by problem).",
      unit: "cps",
      targets: [
        q(perStream("sitehost_exporter_log_records_deduplicated_total"), {
          legend: "deduplicated {{stream}}",
        }),
        q(perStream("sitehost_exporter_log_export_failures_total"), { legend: "export failures {{stream}}" }),
        q(
          `sum by (stream, reason) (${rate("sitehost_exporter_log_exports_refused_total")}) or on () vector(0)`,
          { legend: "exports refused {{reason}} {{stream}}" },
        ),
        q(perStream("sitehost_exporter_log_records_rejected_total"), { legend: "rejected {{stream}}" }),
        q(perStream("sitehost_exporter_log_gaps_total"), { legend: "gaps {{stream}}" }),
        q(
          `sum by (stream, problem) (${rate("sitehost_exporter_log_paging_problems_total")}) or on () vector(0)`,
          {
            legend: "paging {{problem}} {{stream}}",
          },
        ),
      ],
      min: 0,
    }),
    timeSeries({
      title: "Log paging problems",
      description:
        "Reads per interval that stopped short of their checkpoint or failed because of how the platform paged, by stream and problem (no_continuation, repeated_page, page_limit, byte_limit, unusable_pages); zero when all is well. SitehostExporterLogPagingBroken fires when it keeps happening.",
      unit: "short",
      targets: [
        q(
          `sum by (stream, problem) (increase(sitehost_exporter_log_paging_problems_total${S}[$__rate_interval])) or on () vector(0)`,
          { legend: "{{stream}} {{problem}}" },
        ),
      ],
      min: 0,
    }),
    timeSeries({
      title: "Stalled log streams",
      description:
        "Site streams that cannot advance, by stream and reason: too_large (a page over api.maxResponseSize, skipped as a counted gap after 30 minutes), checkpoint_corrupt, malformed, read_failures. Zero when all is well; SitehostExporterLogStreamsStalled fires when one stays stalled.",
      unit: "short",
      targets: [
        q(`sum by (stream, reason) (sitehost_exporter_log_streams_stalled${S}) or on () vector(0)`, {
          legend: "{{stream}} {{reason}}",
        }),
      ],
      min: 0,
    }),
    timeSeries({
      title: "Log lag (worst site)",
      description: "Per stream, the largest lag over sites: now minus the newest shipped record's time.",
      unit: "s",
      targets: [q(`max by (stream) (sitehost_exporter_log_lag_seconds${S})`, { legend: "{{stream}}" })],
    }),
    siteRanking({
      title: "Most lagging sites",
      description: "The ten site streams whose newest shipped record is oldest.",
      unit: "s",
      w: 12,
      h: 8,
      targets: [
        q(`topk(10, max by (site, stream) (sitehost_exporter_log_lag_seconds${S}))`, {
          legend: "{{site}} {{stream}}",
          instant: true,
        }),
      ],
    }),
  ]);

  section(d, "Webhook receiver", [
    timeSeries({
      title: "Webhook deliveries rejected",
      description:
        "Webhook deliveries per second not accepted, by reason: unauthorized (wrong or missing token), method_not_allowed, too_large, unsupported_media_type, bad_request, unavailable (answered 503: queue full or failing, or standing by; the platform retries). Zero when all is well.",
      unit: "reqps",
      targets: [
        q(`sum by (reason) (${rate("sitehost_exporter_webhook_rejected_total")})`, { legend: "{{reason}}" }),
      ],
      min: 0,
    }),
    timeSeries({
      title: "Webhook events waiting to be shipped",
      description:
        "Accepted webhook events held on disk until the OTLP collector acknowledges them; it grows while the collector is down and drains when it is back.",
      unit: "none",
      targets: [q(`sum(sitehost_exporter_webhook_queued_records${S})`, { legend: "queued" })],
      min: 0,
    }),
    timeSeries({
      title: "Site states the events missed",
      description:
        "Maintenance and hacked states learnt from activity logs or the site list that no webhook event had reported, per interval, by state and source: events the platform did not deliver (SitehostWebhookEventsLost). Zero when all is well.",
      unit: "short",
      w: 24,
      targets: [
        q(
          `sum by (state, source) (increase(sitehost_exporter_site_state_corrections_total${S}[$__rate_interval]))`,
          { legend: "{{state}} from {{source}}" },
        ),
      ],
      min: 0,
    }),
  ]);

  section(d, "Process", [
    timeSeries({
      title: "Memory",
      description: "Resident memory and V8 heap used of each instance.",
      unit: "bytes",
      w: 8,
      targets: [
        q(`process_resident_memory_bytes${S}`, { legend: "resident {{instance}}" }),
        q(`sum by (cluster, job, instance) (nodejs_heap_size_used_bytes${S})`, {
          legend: "heap used {{instance}}",
        }),
      ],
    }),
    timeSeries({
      title: "CPU",
      description: "CPU time used per second of each instance (1 = one core busy).",
      unit: "percentunit",
      w: 8,
      targets: [q(`rate(process_cpu_seconds_total${S}[$__rate_interval])`, { legend: "{{instance}}" })],
    }),
    stat({
      title: "Event loop lag p99",
      description:
        "99th percentile event loop delay of each instance; high values delay scrapes and log polling.",
      unit: "s",
      w: 8,
      targets: [q(`nodejs_eventloop_lag_p99_seconds${S}`, { legend: "{{instance}}" })],
      show: "both",
    }),
  ]);
}
