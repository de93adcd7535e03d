/**
 * Visitors' service-level objectives (docs/slo.md) and the sites' logs in Loki: the site dashboard's
 * SLO and error-log rows, the fleet's sites burning their budget fastest, and links to Grafana
 * Explore with a site's logs. Burn rates and budgets read the SLO recording rules
 * (sitehost_site_slo:*), the percentiles the histogram itself.
 */
import { LogsSortOrder } from "@grafana/grafana-foundation-sdk/common";
import {
  DashboardLinkBuilder,
  DatasourceVariableBuilder,
  VariableHide,
} from "@grafana/grafana-foundation-sdk/dashboard";
import { PanelBuilder as LogsBuilder } from "@grafana/grafana-foundation-sdk/logs";
import { DataqueryBuilder as LokiQuery } from "@grafana/grafana-foundation-sdk/loki";
import type { DashboardBuilder } from "@grafana/grafana-foundation-sdk/dashboard";
import { downThresholds, q, sel, siteDetailLink, upThresholds } from "./common.js";
import { gauge, section, table, timeSeries } from "./panels.js";

/** The budget's period and the alert windows shown (the defaults of slos.period and slos.alerts). */
const PERIOD = "28d";
const BURN_WINDOWS = ["1h", "6h", "3d"];
const SLOS = ["availability", "latency"] as const;

/** Data source of the Loki panel and of the Explore links: optional, empty when there is no Loki. */
export const LOKI = { type: "loki", uid: "${loki_datasource}" };

export function lokiVariable(): DatasourceVariableBuilder {
  return new DatasourceVariableBuilder("loki_datasource")
    .label("Loki data source")
    .description(
      "Loki data source holding the sites' logs (service_name = the site), for the logs panel and Explore links; optional.",
    )
    .type("loki")
    .regex("")
    .hide(VariableHide.DontHide);
}

/** LogQL: a site's records (Loki's OTLP ingestion makes service.name the index label service_name). */
export function siteLogs(site: string): string {
  return `{service_name="${site}"}`;
}

/** A link to Grafana Explore with the site's logs in the Loki data source. */
export function exploreLink(site: string, title = "Logs in Explore: "): DashboardLinkBuilder {
  const pane = {
    a: {
      datasource: "${loki_datasource}",
      queries: [
        { refId: "A", expr: siteLogs(site), datasource: { type: "loki", uid: "${loki_datasource}" } },
      ],
      range: { from: "${__from}", to: "${__to}" },
    },
  };
  return new DashboardLinkBuilder(title + site).url(
    `/explore?schemaVersion=1&orgId=1&panes=${encodeURIComponent(JSON.stringify(pane))}`,
  );
}

/**
 * `errors ÷ requests ÷ (1 − objective)` of recorded window `w`, the SLI's series by `sli`, the objective
 * by `objective`, matched `on` these labels: how fast the budget burns.
 */
function overBudget(sli: string, objective: string, on: string, w: string): string {
  return `sitehost_site_slo:errors:increase${w}${sli} / sitehost_site_slo:requests:increase${w}${sli} / on (${on}) group_left () (1 - max by (${on}) (sitehost_site_slo_objective_ratio${objective}))`;
}

/** The burn rate of the log-based SLIs over `w`, each against its own objective. */
function burnRate(extra: string, w: string): string {
  return overBudget(sel(extra), sel(extra), "cluster, job, instance, site_id, slo", w);
}

/** The probe SLI's burn rate over `w`: against the availability objective (docs/slo.md). */
function probeBurnRate(extra: string, w: string): string {
  const on = "cluster, job, instance, site_id";
  return overBudget(sel(`${extra}, slo="probe"`), sel(`${extra}, slo="availability"`), on, w);
}

/**
 * blackbox_exporter's own series of a site's probes (its job, the probed URL as instance), kept to the
 * sites of the exporters chosen above through the site's own series.
 */
function ofScopedSites(expr: string, extra?: string): string {
  return `${expr} and on (site_id) sitehost_site_info${sel(extra)}`;
}

export function siteSloSection(d: DashboardBuilder): void {
  const S = sel('site="$site"');
  const bucket = `sitehost_site_http_request_duration_seconds_bucket${S}`;
  const perCache = (metric: string) =>
    q(`sum by (cached) (rate(${metric}${S}[$__rate_interval]))`, { legend: "cached={{cached}}" });
  section(d, "Service-level objectives", [
    timeSeries({
      title: "Latency percentiles",
      description:
        "Median, 90th and 99th percentile of the time the web server took per request (request_time of the web-server log), from the duration histogram; within its buckets' bounds (5 ms to 30 s). Exemplars (with Prometheus's exemplar storage) name a recent log record of each bucket.",
      unit: "s",
      w: 8,
      targets: [0.5, 0.9, 0.99].map((p) =>
        q(`histogram_quantile(${p}, sum by (le) (rate(${bucket}[$__rate_interval])))`, {
          legend: `p${p * 100}`,
          exemplar: true,
        }),
      ),
    }),
    timeSeries({
      title: "Probes from outside: success",
      description:
        "Share of blackbox_exporter's probes of the site's URLs (the /sd/probes targets) that succeeded, per probed URL; with the probe SLI's 5-minute share (all URLs) from the SLO recording rules. Empty without a prober (docs/probes.md).",
      unit: "percentunit",
      w: 8,
      targets: [
        q(
          ofScopedSites(
            `avg by (site_id, instance) (avg_over_time(probe_success{cluster=~"$cluster", site="$site"}[$__rate_interval]))`,
            'site="$site"',
          ),
          { legend: "{{instance}}" },
        ),
        q(
          `1 - sitehost_site_slo:errors:increase5m${sel('site="$site", slo="probe"')} / sitehost_site_slo:requests:increase5m${sel('site="$site", slo="probe"')}`,
          { legend: "probe SLI (5 min)" },
        ),
      ],
      min: 0,
      max: 1,
    }),
    timeSeries({
      title: "Probes from outside: duration",
      description:
        "How long blackbox_exporter's probe of each of the site's URLs took (DNS, connection, TLS, the answer), beside the log-based latency: the visitors' view from outside against the origin's request time.",
      unit: "s",
      w: 8,
      targets: [
        q(
          ofScopedSites(
            `max by (site_id, instance) (probe_duration_seconds{cluster=~"$cluster", site="$site"})`,
            'site="$site"',
          ),
          { legend: "{{instance}}" },
        ),
      ],
    }),
    gauge({
      title: "Error budget left (28 days)",
      description:
        "Share of the error budget (1 − objective) not spent over the last 28 days, per objective: 100 % nothing spent, 0 or below all of it. Needs the SLO recording rules (slo-rules) and 28 days of Prometheus retention (with less, the days kept).",
      unit: "percentunit",
      w: 6,
      targets: SLOS.map((slo) => q(`1 - ${burnRate(`site="$site", slo="${slo}"`, PERIOD)}`, { legend: slo })),
      min: 0,
      max: 1,
      thresholds: downThresholds(0.1, 0.5),
    }),
    timeSeries({
      title: "Burn rate",
      description:
        "How many times faster than its objective allows the site spends its error budget, over the alert windows (1 = exactly over 28 days; the page fires at 14.4 over 1 h, the ticket at 1 over 3 days); probe: the probes from outside against the availability objective. Needs the SLO recording rules.",
      unit: "none",
      w: 10,
      targets: [
        ...SLOS.flatMap((slo) =>
          BURN_WINDOWS.map((w) => q(burnRate(`site="$site", slo="${slo}"`, w), { legend: `${slo} ${w}` })),
        ),
        ...BURN_WINDOWS.map((w) => q(probeBurnRate('site="$site"', w), { legend: `probe ${w}` })),
      ],
    }).links([exploreLink("$site")]),
    timeSeries({
      title: "Response bytes per second",
      description: "Response body bytes per second (body_bytes_sent of the web-server log), by cache status.",
      unit: "Bps",
      targets: [perCache("sitehost_site_http_response_size_bytes_total")],
    }),
    timeSeries({
      title: "Requests without a duration",
      description:
        "Web-server log entries per second without a usable request_time: counted here, left out of the latency percentiles and the latency objective.",
      unit: "reqps",
      // 0 per cache state when every entry had one (the counter appears with the first without).
      targets: [
        q(
          `sum by (cached) (rate(sitehost_site_http_requests_without_duration_total${S}[$__rate_interval])) or 0 * sum by (cached) (rate(sitehost_site_http_responses_total${S}[$__rate_interval]))`,
          { legend: "cached={{cached}}" },
        ),
      ],
    }),
  ]);
  section(d, "Errors in the site's logs", [
    new LogsBuilder()
      .title("PHP and web-server errors")
      .description(
        "The site's PHP and web-server log records of severity ERROR and above, from the Loki data source chosen above (records shipped over OTLP; service_name is the site). Empty without Loki.",
      )
      .datasource(LOKI)
      .unit("none")
      .withTarget(
        new LokiQuery()
          .refId("A")
          .datasource(LOKI)
          .expr(`${siteLogs("$site")} | sitehost_log_stream=~"php|server" | severity_number >= 17`)
          .maxLines(500),
      )
      .span(24)
      .height(10)
      .links([exploreLink("$site", "All of the site's logs in Explore: ")])
      .showTime(true)
      .wrapLogMessage(true)
      .sortOrder(LogsSortOrder.Descending),
  ]);
}

/** The fleet's sites burning their error budget fastest, each linking to its dashboard and its logs. */
export function fleetSloSection(d: DashboardBuilder): void {
  section(d, "Service-level objectives", [
    table({
      title: "Sites burning their error budget fastest",
      description:
        "The ten sites and objectives with the highest burn rate over the last hour (1 = the budget lasts exactly 28 days; the page fires at 14.4). Needs the SLO recording rules (slo-rules). A row links to the site's dashboard and to its logs in Explore.",
      unit: "none",
      w: 24,
      h: 9,
      targets: [q(`topk(10, ${burnRate("", "1h")})`, { table: true })],
      columns: { value: "Burn rate (1h)", hide: ["job", "instance", "cluster"] },
      thresholds: upThresholds(1, 14.4),
    }).dataLinks([siteDetailLink("column"), exploreLink("${__data.fields.site}")]),
    table({
      title: "Sites failing from outside",
      description:
        "Every site URL whose probes by blackbox_exporter (the /sd/probes targets) failed lately (over the last few probes: Grafana's rate interval), with the share that failed: DNS, certificates, the edge, or the site down. Empty while every probe succeeds, or without a prober (docs/probes.md). A row links to the site's dashboard.",
      unit: "percentunit",
      w: 24,
      h: 9,
      targets: [
        q(
          `sort_desc(${ofScopedSites(`(1 - avg by (site_id, site, instance) (avg_over_time(probe_success{cluster=~"$cluster"}[$__rate_interval]))) > 0`)})`,
          { table: true },
        ),
      ],
      columns: { value: "Failed probes (lately)" },
      thresholds: upThresholds(0.05, 0.5),
    }).dataLinks([siteDetailLink("column")]),
  ]);
}
