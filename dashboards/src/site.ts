/** Site detail: everything the exporter knows about one site. */
import { AnnotationQueryBuilder, type Dashboard } from "@grafana/grafana-foundation-sdk/dashboard";
import { downThresholds, DS, finalize, q, sel, upThresholds, sitehostDashboard } from "./common.js";
import { barGauge, gauge, section, stat, table, timeSeries, trafficRate, trafficSeries } from "./panels.js";
import { siteCareSections } from "./siteCare.js";
import { lokiVariable, siteSloSection } from "./slo.js";
import { siteVariable } from "./variables.js";

export const SITE_UID = "sitehost-site";

/**
 * Failed git deploys as annotations, each newest finished deploy at its own time (the metric's
 * value); successful ones are changes. A deploy overtaken between two collector runs is not shown.
 */
function deployAnnotation(name: string, success: 0 | 1, color: string): AnnotationQueryBuilder {
  const site = sel('site="$site"');
  const expr = `sitehost_site_git_last_deploy_timestamp_seconds${site} * 1000 and on (cluster, job, instance, site_id) sitehost_site_git_last_deploy_success${site} == ${success}`;
  return new AnnotationQueryBuilder()
    .name(name)
    .datasource(DS)
    .enable(true)
    .iconColor(color)
    .target(q(expr).refId("Anno"))
    .expr(expr)
    .useValueForTime(true)
    .step("60s")
    .titleFormat(name)
    .textFormat("{{site}}");
}

/**
 * Changes (deploys, plugins, themes, restores, PHP versions, conversions, maintenance, access) as
 * annotations, each at its own time (the marker's value), named by its kind.
 */
export function changeAnnotation(selector: string, text: string, enabled = true): AnnotationQueryBuilder {
  const expr = `sitehost_site_change_timestamp_seconds${selector} * 1000`;
  return new AnnotationQueryBuilder()
    .name("Changes")
    .datasource(DS)
    .enable(enabled)
    .iconColor("blue")
    .target(q(expr).refId("Anno"))
    .expr(expr)
    .useValueForTime(true)
    .step("60s")
    .titleFormat("{{kind}}")
    .textFormat(text);
}

export function siteDashboard(): Dashboard {
  const S = sel('site="$site"');
  const d = sitehostDashboard({
    title: "Sitehost / Site detail",
    uid: SITE_UID,
    description:
      "One site: state, traffic, storage, performance audits, security, domains, backups, restores, certificates, git deploys and log-derived HTTP and PHP error rates.",
    from: "now-6h",
    refresh: "1m",
  })
    .withVariable(siteVariable())
    .withVariable(lokiVariable())
    .annotation(changeAnnotation(sel('site="$site"'), "{{kind}} on {{site}}"))
    .annotation(deployAnnotation("Failed git deploy", 0, "red"));

  section(d, "Overview", [
    stat({
      title: "State",
      description: "The site's current platform state (live, deploying, cloning, disabled, ...).",
      unit: "none",
      w: 4,
      h: 5,
      targets: [q(`sitehost_site_state${S} == 1`, { legend: "{{state}}" })],
      show: "name",
    }),
    stat({
      title: "Maintenance mode and hacked",
      description:
        "Maintenance mode (visitors get the maintenance page; the platform state still says live) and whether the platform's support marked the site hacked, from its webhook events and activity log.",
      unit: "none",
      w: 4,
      h: 5,
      targets: [
        q(`sitehost_site_maintenance_mode${S}`, { legend: "maintenance" }),
        q(`sitehost_site_hacked${S}`, { legend: "hacked" }),
      ],
      words: { "0": ["no", "green"], "1": ["yes", "red"] },
      show: "both",
    }),
    stat({
      title: "PHP version supported",
      description:
        "Whether the site's PHP version is among those the platform supports (GET /sites/php-versions); a dropped version stops getting security fixes.",
      unit: "none",
      w: 3,
      h: 5,
      targets: [q(`sitehost_site_php_version_supported${S}`, { legend: "supported" })],
      words: { "0": ["no", "red"], "1": ["yes", "green"] },
    }),
    table({
      title: "Site",
      description: "Site metadata: display name, URL, data center, PHP version, environment and kind.",
      unit: "none",
      w: 7,
      h: 5,
      targets: [q(`sitehost_site_info${S}`, { table: true })],
      columns: { value: "Value", hide: ["Value"] },
    }),
    stat({
      title: "Edge cache",
      description: "Whether the edge cache is enabled, and whether its defensive mode is on.",
      unit: "none",
      w: 6,
      h: 5,
      targets: [
        q(`sitehost_site_edge_cache_enabled${S}`, { legend: "Edge cache" }),
        q(`sitehost_site_edge_cache_defensive_mode_enabled${S}`, { legend: "Defensive mode" }),
      ],
      words: { "0": ["Off"], "1": ["On"] },
      show: "both",
    }),
  ]);

  const perPeriod = (title: string, metric: string, what: string) =>
    barGauge({
      title,
      description: `${what} over each period the exporter publishes (collectors.statistics.periods; by default yesterday, the current and the last month), updated daily by the platform.`,
      unit: "short",
      w: 9,
      targets: [q(`${metric}${S}`, { legend: "{{period}}", instant: true })],
    });
  section(d, "Changes", [
    table({
      title: "Changes in the last 24 h",
      description:
        "The site's latest change of each kind in the last 24 hours (deploy, plugin, theme, restore, php, conversion, maintenance, access), newest first, each counted once whichever of its webhook event, activity log entry and the polled lists told it. They are also the blue annotations on the graphs; the activity log in Loki has who did what.",
      unit: "dateTimeAsIso",
      w: 12,
      h: 6,
      targets: [q(`sort_desc(sitehost_site_change_timestamp_seconds${S} * 1000)`, { table: true })],
      columns: { value: "When", hide: ["site_id", "site"] },
    }),
    table({
      title: "New PHP errors in the last 24 h",
      description:
        "When the site's latest new PHP error group of each severity first appeared in the last 24 hours: an error (message and file, numbers and quoted values aside) the site had not logged before. Its records carry sitehost.php.error_group in the log store; a fatal one within an hour after a change fires SitehostSitePhpNewFatalErrorAfterChange.",
      unit: "dateTimeAsIso",
      w: 12,
      h: 6,
      targets: [
        q(`sort_desc(sitehost_site_php_error_group_new_timestamp_seconds${S} * 1000)`, { table: true }),
      ],
      columns: { value: "First seen", hide: ["site_id", "site"] },
    }),
  ]);

  section(d, "Traffic", [
    trafficSeries({
      title: "Requests per second",
      description:
        "Requests per second, served from the edge cache (cached=true) or not: the rate of sitehost_site_requests_total over at least 15 minutes (every traffic period counted once; the counter moves when the site is polled), and the newest period of the site's last traffic answer (latest).",
      unit: "reqps",
      targets: [
        q(`sum by (cached) (${trafficRate("sitehost_site_requests_total", S)})`, {
          legend: "cached={{cached}}",
        }),
        q(`sum by (cached) (sitehost_site_requests_per_second${S})`, { legend: "cached={{cached}} latest" }),
      ],
    }),
    trafficSeries({
      title: "Bandwidth",
      description:
        "Response bytes per second by cache status: the rate of sitehost_site_response_bytes_total over at least 15 minutes, and the newest period of the site's last traffic answer (latest).",
      unit: "Bps",
      targets: [
        q(`sum by (cached) (${trafficRate("sitehost_site_response_bytes_total", S)})`, {
          legend: "cached={{cached}}",
        }),
        q(`sum by (cached) (sitehost_site_response_bytes_per_second${S})`, {
          legend: "cached={{cached}} latest",
        }),
      ],
    }),
    perPeriod("Page views", "sitehost_site_page_views", "Page views"),
    perPeriod("Unique visits", "sitehost_site_unique_visits", "Unique visits"),
    stat({
      title: "Daily average visits",
      description: "Daily average visits over the latest billing cycle (usage report).",
      unit: "short",
      w: 6,
      targets: [q(`sitehost_site_usage_daily_average_visits${S}`, { legend: "visits per day" })],
    }),
  ]);

  section(d, "Storage", [
    timeSeries({
      title: "Storage used and limit",
      description:
        "Bytes used per store (filesystem, database), the store's limit and the warning level (limit minus warning headroom) when the platform sets them.",
      unit: "bytes",
      targets: [
        q(`sitehost_site_storage_used_bytes${S}`, { legend: "used {{store}}" }),
        q(`sitehost_site_storage_limit_bytes${S}`, { legend: "limit {{store}}" }),
        q(`sitehost_site_storage_limit_bytes${S} - sitehost_site_storage_warning_headroom_bytes${S}`, {
          legend: "warning level {{store}}",
        }),
      ],
    }),
    gauge({
      title: "Storage used of limit",
      description: "Used bytes divided by the limit, per store. Empty when the site has no limit.",
      unit: "percentunit",
      w: 6,
      targets: [
        q(`sitehost_site_storage_used_bytes${S} / sitehost_site_storage_limit_bytes${S}`, {
          legend: "{{store}}",
        }),
      ],
      min: 0,
      max: 1,
      thresholds: upThresholds(0.8, 0.9),
    }),
    stat({
      title: "Daily average storage",
      description: "Daily average storage usage over the latest billing cycle (usage report).",
      unit: "bytes",
      w: 6,
      targets: [q(`sitehost_site_usage_storage_daily_average_bytes${S}`, { legend: "storage" })],
    }),
  ]);

  section(d, "Performance audits", [
    barGauge({
      title: "Audit scores",
      description:
        "Latest performance audit scores (0-1) per strategy and category: mobile, and desktop when the exporter publishes it (collectors.performance.strategies).",
      unit: "percentunit",
      targets: [q(`sitehost_site_audit_score${S}`, { legend: "{{strategy}} {{category}}", instant: true })],
      min: 0,
      max: 1,
      thresholds: downThresholds(0.5, 0.9),
      gradient: true,
    }),
    barGauge({
      title: "Web vitals",
      description:
        "Latest audit timings per strategy: first and largest contentful paint, speed index, time to interactive, total blocking time, server response time.",
      unit: "s",
      targets: [
        q(`sitehost_site_audit_timing_seconds${S}`, { legend: "{{strategy}} {{audit}}", instant: true }),
      ],
    }),
    stat({
      title: "Cumulative layout shift",
      description:
        "Latest cumulative layout shift per strategy (unitless; below 0.1 is good, above 0.25 poor).",
      unit: "none",
      targets: [q(`sitehost_site_audit_cumulative_layout_shift${S}`, { legend: "{{strategy}}" })],
      decimals: 3,
      thresholds: upThresholds(0.1, 0.25),
      show: "both",
    }),
    stat({
      title: "Audit age",
      description: "Time since the latest performance audit ran, per strategy.",
      unit: "s",
      targets: [q(`time() - sitehost_site_audit_timestamp_seconds${S}`, { legend: "{{strategy}}" })],
      show: "both",
    }),
  ]);

  siteSloSection(d);
  siteCareSections(d);
  section(d, "Access", [
    stat({
      title: "CMS users and administrators",
      description:
        "Users of the site's cms and how many are administrators (the access collector). No administrator count for a site with more than 1,000 users.",
      unit: "none",
      w: 8,
      h: 6,
      targets: [
        q(`sitehost_site_cms_users${S}`, { legend: "users" }),
        q(`count(sitehost_site_cms_administrator_info${S})`, { legend: "administrators" }),
      ],
      show: "both",
    }),
    table({
      title: "Administrators",
      description:
        "Each administrator of the site's cms by login; a login new within the hour fires SitehostSiteCmsAdministratorAdded.",
      unit: "none",
      w: 16,
      h: 6,
      targets: [q(`sitehost_site_cms_administrator_info${S}`, { table: true })],
      columns: { value: "Value", hide: ["Value", "site_id"] },
    }),
  ]);
  return finalize(d.build());
}
