/**
 * Every per-site and account metric family of the public contract
 * (DESIGN.md "Metrics"). Drives HELP/TYPE in the exposition, `metrics.exclude`
 * and docs/metrics.md.
 */
import type { MetricFamily } from "./sample.js";

const f = (
  name: string,
  collector: string,
  type: MetricFamily["type"],
  labels: readonly string[],
  help: string,
  source: string,
  perSite = true,
): MetricFamily => ({ name, collector, type, labels, help, source, perSite });

export const METRIC_FAMILIES: readonly MetricFamily[] = [
  f("sitehost_account_sites", "inventory", "gauge", ["kind"], "Sites on the account, by kind (billable, staging, total).", "GET /account", false),
  f("sitehost_account_site_capacity", "inventory", "gauge", ["kind"], "Maximum sites the account may have, by kind (billable, staging).", "GET /account", false),
  f("sitehost_account_max_sites", "inventory", "gauge", [], "Maximum number of sites of the account.", "GET /account", false),
  f("sitehost_site_info", "inventory", "info", ["display_name", "url", "datacenter", "php_version", "environment", "kind"], "Site metadata; always 1.", "GET /sites"),
  f("sitehost_site_state", "inventory", "stateset", ["state"], "Site state: 1 for the current state, 0 for the other known states.", "GET /sites"),
  f("sitehost_site_storage_used_bytes", "inventory", "gauge", ["store"], "Storage used by the site in bytes, by store (filesystem, database).", "GET /sites"),
  f("sitehost_site_storage_limit_bytes", "inventory", "gauge", ["store"], "Storage limit of the site in bytes, by store; only when a limit is set.", "GET /sites"),
  f("sitehost_site_storage_warning_headroom_bytes", "inventory", "gauge", ["store"], "Warning headroom below the storage limit in bytes, by store; only when set.", "GET /sites"),
  f("sitehost_site_edge_cache_enabled", "inventory", "gauge", [], "1 when the edge cache is enabled for the site.", "GET /sites"),
  f("sitehost_site_edge_cache_defensive_mode_enabled", "inventory", "gauge", [], "1 when the edge cache's defensive mode is on (and not past its end time).", "GET /sites"),
  f("sitehost_site_page_views", "statistics", "gauge", ["period"], "Page views of the site over the period (updated daily by the platform).", "GET /sites/{id}/statistics"),
  f("sitehost_site_unique_visits", "statistics", "gauge", ["period"], "Unique visits of the site over the period (updated daily by the platform).", "GET /sites/{id}/statistics"),
  f("sitehost_site_usage_storage_daily_average_bytes", "usage", "gauge", [], "Daily average storage usage in bytes over the latest billing cycle.", "GET /sites/{id}/reports/usage"),
  f("sitehost_site_usage_daily_average_visits", "usage", "gauge", [], "Daily average visits over the latest billing cycle.", "GET /sites/{id}/reports/usage"),
  f("sitehost_site_audit_score", "performance", "gauge", ["strategy", "category"], "Latest performance audit score as a ratio 0-1, by strategy and category.", "GET /sites/{id}/reports/performance/latest"),
  f("sitehost_site_audit_timing_seconds", "performance", "gauge", ["strategy", "audit"], "Latest performance audit timing in seconds, by strategy and audit.", "GET /sites/{id}/reports/performance/latest"),
  f("sitehost_site_audit_cumulative_layout_shift", "performance", "gauge", ["strategy"], "Latest cumulative layout shift (unitless), by strategy.", "GET /sites/{id}/reports/performance/latest"),
  f("sitehost_site_audit_timestamp_seconds", "performance", "gauge", ["strategy"], "When the latest performance audit ran, Unix seconds.", "GET /sites/{id}/reports/performance/latest"),
  f("sitehost_site_requests_per_second", "traffic", "gauge", ["cached"], "Requests per second in the latest complete period, by cache status.", "POST /sites/{id}/metrics"),
  f("sitehost_site_response_bytes_per_second", "traffic", "gauge", ["cached"], "Response bytes per second in the latest complete period, by cache status.", "POST /sites/{id}/metrics"),
  f("sitehost_site_extensions", "security", "gauge", ["type", "status"], "Installed plugins and themes, by type and status.", "GET /sites/{id}/security-alerts/plugins and /themes"),
  f("sitehost_site_extension_updates_available", "security", "gauge", ["type"], "Plugins and themes with an update available, by type.", "GET /sites/{id}/security-alerts/plugins and /themes"),
  f("sitehost_site_vulnerable_extensions", "security", "gauge", ["type", "severity"], "Plugins and themes with known vulnerabilities, by type and highest severity.", "GET /sites/{id}/security-alerts/plugins and /themes"),
  f("sitehost_site_vulnerability_info", "security", "info", ["type", "extension", "version", "fixed_in", "severity"], "A known vulnerability of an installed plugin or theme; always 1.", "GET /sites/{id}/security-alerts/plugins and /themes"),
  f("sitehost_site_domain_healthy", "domains", "gauge", ["domain", "primary"], "1 when the domain is healthy.", "GET /sites/{id}/domains"),
  f("sitehost_site_domain_dns_confirmed", "domains", "gauge", ["domain", "primary"], "1 when the domain's DNS is confirmed.", "GET /sites/{id}/domains"),
  f("sitehost_site_domain_provisioned", "domains", "gauge", ["domain", "primary"], "1 when the domain is provisioned.", "GET /sites/{id}/domains"),
  f("sitehost_site_backup_last_timestamp_seconds", "backups", "gauge", ["type"], "Time of the newest automatic backup, Unix seconds, by type (filesystem, database).", "GET /sites/{id}/backups"),
  f("sitehost_site_http_responses_total", "logs", "counter", ["status_class", "cached"], "Web-server responses counted from shipped log records, by status class and cache status.", "GET /sites/{id}/logs/server"),
  f("sitehost_site_php_log_entries_total", "logs", "counter", ["severity"], "PHP log entries counted from shipped log records, by severity.", "GET /sites/{id}/logs/php"),
];

export const FAMILY_BY_NAME: ReadonlyMap<string, MetricFamily> = new Map(METRIC_FAMILIES.map((m) => [m.name, m]));
