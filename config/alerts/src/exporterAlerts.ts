/** Alerts about the exporter itself: scraped, authenticated, collecting, shipping, within its budget. */
import { CLOCK_SKEW_WARN_SECONDS } from "../../../src/api/clockSkew.js";
import { alert, type GroupDef } from "./rule.js";

/** Collectors and the seconds without a success after which they are stale (about three runs of the default schedules). */
const STALE_AFTER = {
  traffic: 600,
  inventory: 1200,
  domains: 2400,
  security: 7200,
  git: 3600,
  access: 5400,
  backups: 10800,
  certificates: 10800,
  statistics: 36000,
  usage: 68400,
  performance: 68400,
} as const;
type Collector = keyof typeof STALE_AFTER;

export const EXPORTER_GROUP: GroupDef = {
  name: "sitehost-exporter",
  rules: [
    alert({
      alert: "SitehostExporterDown",
      severity: "critical",
      for: "5m",
      expr: (c) => `up{${c.sel}} == 0`,
      summary: "sitehost-exporter is down.",
      description: (c) =>
        `Prometheus could not scrape sitehost-exporter {{ $labels.instance }} (job {{ $labels.job }}) for ${c.for}; no site metrics are being updated.`,
    }),
    alert({
      alert: "SitehostExporterAbsent",
      severity: "critical",
      for: "15m",
      expr: (c) => `absent(up{${c.sel}})`,
      summary: "sitehost-exporter has disappeared from Prometheus targets.",
      description: (c) =>
        `No scrape target matching {${c.sel}} has existed for ${c.for}; the exporter is not deployed or service discovery lost it.`,
    }),
    alert({
      alert: "SitehostExporterApiAuthFailing",
      severity: "critical",
      for: "10m",
      expr: (c) => `sitehost_up{${c.sel}} == 0`,
      summary: "sitehost-exporter cannot authenticate to or list sites from the platform API.",
      description: (c) =>
        `sitehost_up has been 0 on {{ $labels.instance }} for ${c.for}; the last token request or site discovery failed, so metrics go stale.`,
    }),
    alert({
      alert: "SitehostExporterTokenRequestsFailing",
      severity: "warning",
      for: "5m",
      expr: (
        c,
      ) => `sum by (${c.by}) (increase(sitehost_exporter_auth_token_requests_total{${c.sel}, result!="success"}[15m])) > 0
unless on (${c.by})
sum by (${c.by}) (increase(sitehost_exporter_auth_token_requests_total{${c.sel}, result="success"}[15m])) > 0`,
      summary: "Token requests of sitehost-exporter are failing.",
      description: () =>
        "{{ $value | humanize }} token requests failed on {{ $labels.instance }} in the last 15 minutes and none succeeded; API access stops when the current token expires.",
    }),
    alert({
      alert: "SitehostExporterApiRateLimited",
      severity: "warning",
      for: "15m",
      expr: (c) =>
        `sum by (${c.by}) (rate(sitehost_exporter_api_requests_total{${c.sel}, code="429"}[15m])) > 0`,
      summary: "The platform API keeps rate-limiting sitehost-exporter.",
      description: (c) =>
        `{{ $labels.instance }} has received {{ $value | humanize }} 429 answers per second for ${c.for}; collectors run late and data goes stale.`,
    }),
    alert<"seconds">({
      alert: "SitehostExporterClockSkewed",
      severity: "warning",
      for: "15m",
      comment:
        "Measured by the exporter from the Date header of the API's answers. The log tailers use the platform's time whatever the skew; the exporter's own timestamps (its logs, its *_timestamp_seconds self-metrics) do not.",
      // The status page's bound.
      params: { seconds: CLOCK_SKEW_WARN_SECONDS },
      paramDocs: { seconds: "Skew between the exporter's clock and the platform's, either way." },
      expr: (c) => `max by (${c.by}) (abs(sitehost_exporter_clock_skew_seconds{${c.sel}})) > ${c.p.seconds}`,
      summary: "sitehost-exporter's clock is off the platform's.",
      description: (c) =>
        `The clock of {{ $labels.instance }} has been {{ $value | humanizeDuration }} off the platform's for ${c.for} (sitehost_exporter_clock_skew_seconds: the platform's minus the exporter's). Log tailing works in the platform's time, but the exporter's own timestamps are off: synchronise the node's clock (NTP, chrony).`,
    }),
    alert<`${Collector}Seconds`>({
      alert: "SitehostExporterCollectorStale",
      severity: "warning",
      for: "5m",
      comment:
        "Thresholds are about three runs of the default schedules (docs/runbook.md#sitehostexportercollectorstale); raise a collector's when you slow its schedule.",
      params: Object.fromEntries(Object.entries(STALE_AFTER).map(([k, v]) => [`${k}Seconds`, v])) as Record<
        `${Collector}Seconds`,
        number
      >,
      paramDocs: Object.fromEntries(
        Object.keys(STALE_AFTER).map((k) => [`${k}Seconds`, `Seconds without a successful ${k} run.`]),
      ) as Record<`${Collector}Seconds`, string>,
      expr: (c) =>
        (Object.keys(STALE_AFTER) as Collector[])
          .map(
            (k) =>
              `(time() - sitehost_exporter_collector_last_success_timestamp_seconds{${c.sel}, collector="${k}"} > ${c.p[`${k}Seconds`]})`,
          )
          .join("\nor "),
      summary: "A sitehost-exporter collector has not succeeded for several runs.",
      description: () =>
        "The {{ $labels.collector }} collector on {{ $labels.instance }} last succeeded {{ $value | humanizeDuration }} ago; its metrics are stale.",
    }),
    alert({
      alert: "SitehostExporterLogExportFailing",
      severity: "warning",
      for: "15m",
      expr: (c) =>
        `sum by (${c.byWith("stream")}) (increase(sitehost_exporter_log_export_failures_total{${c.sel}}[10m])) > 0`,
      summary: "sitehost-exporter cannot ship logs over OTLP.",
      description: (c) =>
        `{{ $value | humanize }} OTLP exports of the {{ $labels.stream }} stream failed on {{ $labels.instance }} in the last 10 minutes, continuously for ${c.for}; log tailing is paused (backpressure).`,
    }),
    alert({
      alert: "SitehostExporterLogExportsRefused",
      severity: "warning",
      for: "5m",
      comment:
        "The OTLP endpoint answers but refuses: whole exports (kept and retried: a wrong path, protocol or credentials, a proxy's page), or some records of exports it took (dropped). An endpoint that cannot be reached is SitehostExporterLogExportFailing's.",
      expr: (
        c,
      ) => `label_replace(sum by (${c.byWith("stream")}) (increase(sitehost_exporter_log_exports_refused_total{${c.sel}}[10m])) > 0, "problem", "exports_refused", "", "")
or
label_replace(sum by (${c.byWith("stream")}) (increase(sitehost_exporter_log_records_rejected_total{${c.sel}}[10m])) > 0, "problem", "records_rejected", "", "")`,
      summary: "The OTLP endpoint refuses sitehost-exporter's log exports or rejects records.",
      description: () =>
        '{{ if eq $labels.problem "exports_refused" }}The OTLP endpoint refused {{ $value | humanize }} exports of the {{ $labels.stream }} stream from {{ $labels.instance }} as a whole in the last 10 minutes: it answers but takes none of their records. They are kept and retried and log tailing is paused; /-/status names the endpoint and the likely cause.{{ else }}The OTLP endpoint rejected {{ $value | humanize }} {{ $labels.stream }} log records from {{ $labels.instance }} in the last 10 minutes while taking the others of their exports: they were dropped.{{ end }}',
    }),
    alert({
      alert: "SitehostExporterCheckpointWritesFailing",
      severity: "warning",
      for: "5m",
      expr: (c) => `max by (${c.by}) (sitehost_exporter_log_shipping_paused{${c.sel}}) == 1`,
      summary: "sitehost-exporter cannot write its checkpoint directory; log shipping is paused.",
      description: (c) =>
        `Writes under logs.checkpointDir on {{ $labels.instance }} have failed for ${c.for} (no space left, a read-only or refused volume): no log stream is read or shipped and webhook events are answered 503. Nothing is lost yet; it resumes by itself once the volume takes writes.`,
    }),
    alert<"reads">({
      alert: "SitehostExporterLogPagingBroken",
      severity: "warning",
      for: "30m",
      comment:
        "Reads of a stream keep stopping short of the checkpoint (or failing) because of how the platform pages.",
      params: { reads: 3 },
      paramDocs: { reads: "Reads that stopped short or failed within 30 minutes." },
      expr: (c) =>
        `sum by (${c.byWith("stream", "problem")}) (increase(sitehost_exporter_log_paging_problems_total{${c.sel}}[30m])) >= ${c.p.reads}`,
      summary: "The platform's log paging keeps breaking off.",
      description: (c) =>
        `{{ $value | humanize }} reads of {{ $labels.stream }} logs on {{ $labels.instance }} stopped short or failed ({{ $labels.problem }}) in the last 30 minutes, continuously for ${c.for}; entries are missed (sitehost_exporter_log_gaps_total) or wait to be shipped.`,
    }),
    alert({
      alert: "SitehostExporterLogStreamsStalled",
      severity: "warning",
      for: "15m",
      comment:
        "Log streams that cannot advance, by reason: a page over api.maxResponseSize, a corrupt checkpoint, nothing but malformed entries, reads that keep failing. /-/status names the streams.",
      expr: (c) =>
        `max by (${c.byWith("stream", "reason")}) (sitehost_exporter_log_streams_stalled{${c.sel}}) > 0`,
      summary: "Some log streams of sitehost-exporter cannot advance.",
      description: (c) =>
        `{{ $value }} {{ $labels.stream }} log streams on {{ $labels.instance }} have not advanced for ${c.for} ({{ $labels.reason }}): their new entries are not shipped. The status page (/-/status) names them, since when and what their last read met.`,
    }),
    alert<"seconds" | "minRequestsPerSecond">({
      alert: "SitehostExporterLogLagging",
      severity: "warning",
      for: "15m",
      comment:
        "Only web-server logs of sites that serve traffic: a quiet stream has no new records and a growing lag by nature. Traffic is the rate of the request counter over 30 minutes: the counters move when a site is polled (busy live sites every 5 minutes, others up to every 15).",
      params: { seconds: 1800, minRequestsPerSecond: 0.1 },
      paramDocs: {
        seconds: "Age of the newest shipped record.",
        minRequestsPerSecond: "Sites with less traffic over the last 30 minutes are left out.",
      },
      expr: (
        c,
      ) => `max by (${c.byWith("site_id", "site", "stream")}) (sitehost_exporter_log_lag_seconds{${c.sel}, stream="server"}) > ${c.p.seconds}
and on (${c.byWith("site_id")})
sum by (${c.byWith("site_id")}) (rate(sitehost_site_requests_total{${c.sel}}[30m])) > ${c.p.minRequestsPerSecond}`,
      summary: "Web-server logs of a busy site are shipped late.",
      description: () =>
        "The newest shipped {{ $labels.stream }} log record of {{ $labels.site }} is {{ $value | humanizeDuration }} old although the site serves traffic.",
    }),
    alert({
      alert: "SitehostExporterApiBudgetExceeded",
      severity: "warning",
      for: "15m",
      expr: (c) => `sum by (${c.by}) (sitehost_exporter_api_planned_requests_per_second{${c.sel}})
> on (${c.by})
max by (${c.by}) (sitehost_exporter_api_budget_requests_per_second{${c.sel}})`,
      summary: "sitehost-exporter plans more API requests than its budget allows.",
      description: () =>
        "{{ $labels.instance }} plans {{ $value | humanize }} API requests per second for its schedules and log streams, more than api.maxRequestsPerSecond: collector runs stretch and are skipped, and logs are read late.",
    }),
    alert({
      alert: "SitehostExporterShardServedTwice",
      severity: "warning",
      for: "5m",
      comment:
        "Only an exporter that collects and ships exports shard_info (a standby on a locked checkpoint directory does not): two of them on one shard use two checkpoint directories. Counted across the pods of one exporter: by the grouping labels without instance.",
      expr: (c) =>
        `count by (${c.byWithoutInstance("namespace", "shard")}) (sitehost_exporter_shard_info{${c.sel}}) > 1`,
      summary: "Two or more exporters serve the same shard.",
      description: () =>
        "{{ $value }} exporters of job {{ $labels.job }} serve shard {{ $labels.shard }}: each collects every site of the shard and ships each of its log records, so logs arrive more than once and the API budget is spent twice.",
    }),
  ],
};
