/** Fleet overview: every site of the account at a glance. */
import { GraphDrawStyle } from "@grafana/grafana-foundation-sdk/common";
import type { Dashboard } from "@grafana/grafana-foundation-sdk/dashboard";
import { DAY, downThresholds, finalize, q, sel, upThresholds, sitehostDashboard } from "./common.js";
import {
  barGauge,
  problemCount,
  section,
  siteRanking,
  stat,
  table,
  timeSeries,
  trafficRanking,
  trafficRate,
  trafficSeries,
} from "./panels.js";
import { changeAnnotation } from "./site.js";
import { fleetSloSection, lokiVariable } from "./slo.js";

export const FLEET_UID = "sitehost-fleet";

export function fleetDashboard(): Dashboard {
  const S = sel();
  const d = sitehostDashboard({
    title: "Sitehost / Fleet overview",
    uid: FLEET_UID,
    description:
      "Every site of the hosting account: states, capacity, traffic, storage, security, performance, domains, backups, certificates, git deploys, restores and the platform's webhook events.",
    from: "now-6h",
    refresh: "1m",
  })
    .withVariable(lokiVariable())
    // Off by default: a fleet's changes are many marks; the site dashboard shows one site's.
    .annotation(changeAnnotation(S, "{{kind}} on {{site}}", false));

  fleetSloSection(d);
  section(d, "Sites and account", [
    stat({
      title: "Sites",
      description: "Sites the exporter watches (after include/exclude filters).",
      unit: "none",
      w: 4,
      targets: [q(`count(sitehost_site_info${S})`, { legend: "sites" })],
    }),
    stat({
      title: "Sites by state",
      description: "Number of sites in each platform state (live, deploying, cloning, disabled, ...).",
      unit: "none",
      w: 8,
      targets: [q(`count by (state) (sitehost_site_state${S} == 1)`, { legend: "{{state}}" })],
      show: "both",
    }),
    stat({
      title: "Sites by kind",
      description: "Number of sites of each kind (live, staging, sandbox, kit).",
      unit: "none",
      w: 6,
      targets: [q(`count by (kind) (sitehost_site_info${S})`, { legend: "{{kind}}" })],
      show: "both",
    }),
    barGauge({
      title: "Account capacity used",
      description:
        "Sites on the account against what the account allows: billable and staging sites against their capacity, and all sites against the account maximum.",
      unit: "percentunit",
      w: 6,
      targets: [
        q(
          `max by (kind) (sitehost_account_sites${sel('kind=~"billable|staging"')}) / max by (kind) (sitehost_account_site_capacity${S})`,
          { legend: "{{kind}}", instant: true },
        ),
        q(`max(sitehost_account_sites${sel('kind="total"')}) / max(sitehost_account_max_sites${S})`, {
          legend: "total",
          instant: true,
        }),
      ],
      min: 0,
      max: 1,
      thresholds: upThresholds(0.8, 0.95),
      gradient: true,
    }),
  ]);

  section(d, "Maintenance mode and hacked sites", [
    problemCount({
      title: "In maintenance mode",
      description:
        "Sites in maintenance mode (visitors get the maintenance page while the platform state says live), from webhook events and activity logs.",
      unit: "none",
      w: 4,
      h: 6,
      targets: [q(`count(sitehost_site_maintenance_mode${S} == 1) or vector(0)`, { legend: "maintenance" })],
    }),
    problemCount({
      title: "Hacked",
      description: "Sites the platform's support marked hacked (and disabled) and has not enabled again.",
      unit: "none",
      w: 4,
      h: 6,
      targets: [q(`count(sitehost_site_hacked${S} == 1) or vector(0)`, { legend: "hacked" })],
    }),
    table({
      title: "Maintenance mode (on first)",
      description: "Every site's maintenance mode; sites in maintenance sort to the top.",
      unit: "none",
      w: 8,
      h: 6,
      targets: [q(`sort_desc(sitehost_site_maintenance_mode${S})`, { table: true })],
      siteLink: "column",
      words: { "0": ["Off", "green"], "1": ["Maintenance", "orange"] },
      columns: { value: "Mode", hide: ["site_id"] },
    }),
    table({
      title: "Hacked (first)",
      description: "Whether the platform's support marked each site hacked; hacked sites sort to the top.",
      unit: "none",
      w: 8,
      h: 6,
      targets: [q(`sort_desc(sitehost_site_hacked${S})`, { table: true })],
      siteLink: "column",
      words: { "0": ["No", "green"], "1": ["Hacked", "red"] },
      columns: { value: "Hacked", hide: ["site_id"] },
    }),
  ]);

  section(d, "Changes", [
    stat({
      title: "Sites changed in the last 24 h",
      description:
        "Sites with a change in the last 24 hours, by kind: deploys, plugin and theme changes, restores, PHP versions, conversions, maintenance toggles and access changes, each told by its webhook event, activity log entry or the polled lists.",
      unit: "none",
      w: 8,
      h: 6,
      targets: [
        q(`count by (kind) (sitehost_site_change_timestamp_seconds${S})`, {
          legend: "{{kind}}",
          instant: true,
        }),
      ],
      show: "both",
    }),
    timeSeries({
      title: "New PHP error groups",
      description:
        "PHP errors the sites had not logged before (new error groups: message and file, numbers and quoted values aside), by severity, per interval. Fatal ones soon after a change fire SitehostSitePhpNewFatalErrorAfterChange.",
      unit: "short",
      w: 8,
      h: 6,
      targets: [
        q(`sum by (severity) (increase(sitehost_php_error_groups_new_total${S}[$__rate_interval]))`, {
          legend: "{{severity}}",
        }),
      ],
      min: 0,
    })
      .drawStyle(GraphDrawStyle.Bars)
      .fillOpacity(80),
    timeSeries({
      title: "Changes",
      description:
        "Changes to the sites by kind over time, each counted once when the exporter learnt it (from a webhook event, an activity log entry or polling).",
      unit: "short",
      w: 8,
      h: 6,
      targets: [
        q(`sum by (kind) (increase(sitehost_changes_total${S}[$__rate_interval]))`, { legend: "{{kind}}" }),
      ],
      min: 0,
    })
      .drawStyle(GraphDrawStyle.Bars)
      .fillOpacity(80),
    table({
      title: "Latest changes (newest first)",
      description:
        "Each site's latest change of each kind in the last 24 hours, newest first. Turn on the Changes annotation (top of the dashboard) to see them on the graphs.",
      unit: "dateTimeAsIso",
      w: 24,
      h: 6,
      targets: [q(`sort_desc(sitehost_site_change_timestamp_seconds${S} * 1000)`, { table: true })],
      siteLink: "column",
      columns: { value: "When", hide: ["site_id"] },
    }),
  ]);

  section(d, "Traffic", [
    trafficSeries({
      title: "Requests per second",
      description:
        "Requests per second across the fleet, served from the edge cache (cached=true) or not: the rate of sitehost_site_requests_total, every traffic period counted once, over at least 15 minutes (the counters move as sites are polled).",
      unit: "reqps",
      w: 8,
      targets: [
        q(`sum by (cached) (${trafficRate("sitehost_site_requests_total", S)})`, {
          legend: "cached={{cached}}",
        }),
      ],
    }),
    trafficSeries({
      title: "Bandwidth",
      description:
        "Response bytes per second across the fleet, by cache status: the rate of sitehost_site_response_bytes_total over at least 15 minutes.",
      unit: "Bps",
      w: 8,
      targets: [
        q(`sum by (cached) (${trafficRate("sitehost_site_response_bytes_total", S)})`, {
          legend: "cached={{cached}}",
        }),
      ],
    }),
    trafficSeries({
      title: "Edge cache hit ratio",
      description: "Share of requests across the fleet that the edge cache served, over at least 15 minutes.",
      unit: "percentunit",
      w: 8,
      targets: [
        q(
          `sum(${trafficRate("sitehost_site_requests_total", sel('cached="true"'))}) / sum(${trafficRate("sitehost_site_requests_total", S)})`,
          { legend: "hit ratio" },
        ),
      ],
      min: 0,
      max: 1,
    }),
    trafficRanking({
      title: "Top sites by traffic",
      description:
        "The ten sites with the most requests per second (cached and uncached) over the last 15 minutes or more.",
      unit: "reqps",
      targets: [
        q(`topk(10, sum by (site) (${trafficRate("sitehost_site_requests_total", S)}))`, {
          legend: "{{site}}",
          instant: true,
        }),
      ],
    }),
    timeSeries({
      title: "HTTP 5xx ratio (from logs)",
      description:
        "Share of web-server responses with a 5xx status across the fleet, counted from the shipped web-server log records.",
      unit: "percentunit",
      w: 12,
      h: 10,
      targets: [
        q(
          `(sum(rate(sitehost_site_http_responses_total${sel('status_class="5xx"')}[$__rate_interval])) or vector(0)) / sum(rate(sitehost_site_http_responses_total${S}[$__rate_interval]))`,
          { legend: "5xx ratio" },
        ),
      ],
      min: 0,
    }),
  ]);

  section(d, "Storage, security and performance", [
    siteRanking({
      title: "Storage against limit",
      description:
        "The ten sites closest to a storage limit: used bytes divided by the limit, per store (filesystem, database). Sites without a limit are not shown.",
      unit: "percentunit",
      targets: [
        q(`topk(10, sitehost_site_storage_used_bytes${S} / sitehost_site_storage_limit_bytes${S})`, {
          legend: "{{site}} {{store}}",
          instant: true,
        }),
      ],
      min: 0,
      max: 1,
      thresholds: upThresholds(0.8, 0.9),
    }),
    table({
      title: "Vulnerable extensions",
      description:
        "Sites with plugins or themes that have known vulnerabilities, by type and highest severity.",
      unit: "none",
      w: 12,
      h: 10,
      targets: [
        q(`sum by (site, type, severity) (sitehost_site_vulnerable_extensions${S})`, { table: true }),
      ],
      siteLink: "column",
      columns: { value: "Extensions" },
    }),
    siteRanking({
      title: "Worst performance scores",
      description:
        "The ten lowest performance audit scores (0-1) across sites and the strategies published (mobile, and desktop when collectors.performance.strategies lists it).",
      unit: "percentunit",
      targets: [
        q(`bottomk(10, sitehost_site_audit_score${sel('category="performance"')})`, {
          legend: "{{site}} {{strategy}}",
          instant: true,
        }),
      ],
      min: 0,
      max: 1,
      thresholds: downThresholds(0.5, 0.9),
    }),
    problemCount({
      title: "Unhealthy domains",
      description: "Number of domains across the fleet that the platform reports as not healthy.",
      unit: "none",
      w: 4,
      h: 10,
      targets: [q(`count(sitehost_site_domain_healthy${S} == 0) or vector(0)`, { legend: "unhealthy" })],
    }),
    table({
      title: "Domain health (unhealthy first)",
      description: "Every domain of every site with its health; unhealthy domains sort to the top.",
      unit: "none",
      w: 8,
      h: 10,
      targets: [q(`sort(sitehost_site_domain_healthy${S})`, { table: true })],
      siteLink: "column",
      words: { "0": ["Unhealthy", "red"], "1": ["Healthy", "green"] },
      columns: { value: "Health", hide: ["site_id"] },
    }),
    siteRanking({
      title: "Oldest backups",
      description:
        "The ten sites whose newest automatic backup is oldest, per type (filesystem, database). Orange past 24 hours, red past 36 hours.",
      unit: "s",
      targets: [
        q(`topk(10, time() - sitehost_site_backup_last_timestamp_seconds${S})`, {
          legend: "{{site}} {{type}}",
          instant: true,
        }),
      ],
      thresholds: upThresholds(DAY, 1.5 * DAY),
    }),
  ]);

  section(d, "Certificates, git deploys, on-demand backups and restores", [
    siteRanking({
      title: "Certificates expiring soonest",
      description:
        "The ten certificates (A records of the DNS zones) with the least time left before they expire; orange within 14 days, red within 3.",
      unit: "s",
      targets: [
        q(`bottomk(10, sitehost_certificate_expiry_timestamp_seconds${S} - time())`, {
          legend: "{{domain}} ({{site}})",
          instant: true,
        }),
      ],
      thresholds: downThresholds(3 * DAY, 14 * DAY),
    }),
    problemCount({
      title: "Broken certificate records",
      description:
        "A records the platform flags as broken (no longer pointing at the platform, so their certificates cannot be renewed).",
      unit: "none",
      w: 4,
      h: 10,
      targets: [q(`count(sitehost_certificate_broken${S} == 1) or vector(0)`, { legend: "broken" })],
    }),
    table({
      title: "Git deploys (failed first)",
      description:
        "The newest finished git deploy of every site enrolled in the git integration; failed deploys sort to the top.",
      unit: "none",
      w: 8,
      h: 10,
      targets: [q(`sort(sitehost_site_git_last_deploy_success${S})`, { table: true })],
      siteLink: "column",
      words: { "0": ["Failed", "red"], "1": ["Deployed", "green"] },
      columns: { value: "Last deploy", hide: ["site_id"] },
    }),
    siteRanking({
      title: "On-demand backup slots used",
      description:
        "The ten sites and types (fs file system, db database) with the most on-demand backups, out of the 3 the platform allows per type; a full type refuses new on-demand backups and data transfers. 0 when no site holds one.",
      unit: "none",
      targets: [
        q(`topk(10, sitehost_site_ondemand_backups${S}) or on () vector(0)`, {
          legend: "{{site}} {{type}}",
          instant: true,
        }),
      ],
      min: 0,
      max: 3,
      thresholds: upThresholds(2, 3),
    }),
    problemCount({
      title: "Failed restores",
      description: "Failed restores across the newest page of every site's restore listing.",
      unit: "none",
      w: 4,
      h: 10,
      targets: [
        q(`sum(sitehost_site_restores${sel('state="failed"')}) or vector(0)`, { legend: "failed restores" }),
      ],
    }),
    table({
      title: "Latest restore per site",
      description: "The state of each site's latest restore (in_progress, completed, failed, ...).",
      unit: "none",
      w: 8,
      h: 10,
      targets: [q(`sitehost_site_restore_last_state${S} == 1`, { table: true })],
      siteLink: "column",
      columns: { value: "Value", hide: ["Value", "site_id"] },
    }),
  ]);

  section(d, "Platform events (webhooks)", [
    timeSeries({
      title: "Platform events",
      description:
        "Webhook events the platform sent, per interval and event (needs webhooks.enabled). A hacked site and every *_failed event are drawn red; the events' log records say which site.",
      unit: "short",
      w: 24,
      targets: [
        q(`sum by (event) (increase(sitehost_events_total${S}[$__rate_interval]))`, { legend: "{{event}}" }),
      ],
      min: 0,
    })
      .drawStyle(GraphDrawStyle.Bars)
      .fillOpacity(80)
      .overrideByRegexp("site_hacked|.*_failed", [
        { id: "color", value: { mode: "fixed", fixedColor: "red" } },
      ]),
  ]);
  return finalize(d.build());
}
