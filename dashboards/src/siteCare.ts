/** The site dashboard's rows about looking after a site: security, domains, backups, certificates, deploys, logs. */
import type { DashboardBuilder } from "@grafana/grafana-foundation-sdk/dashboard";
import { DAY, downThresholds, q, sel, upThresholds } from "./common.js";
import { barGauge, section, stat, table, timeSeries } from "./panels.js";

export function siteCareSections(d: DashboardBuilder): void {
  const S = sel('site="$site"');
  const withSite = (extra: string): string => sel(`site="$site", ${extra}`);
  section(d, "Security", [
    stat({
      title: "Extensions",
      description: "Installed plugins and themes by type and status.",
      unit: "none",
      w: 8,
      targets: [q(`sum by (type, status) (sitehost_site_extensions${S})`, { legend: "{{type}} {{status}}" })],
      show: "both",
    }),
    stat({
      title: "Updates available",
      description:
        "Plugins and themes with an update available, by type; 0 when none. Beside them, any whose update field says neither none nor available (such as 'version higher than expected'), not counted as updates.",
      unit: "none",
      w: 4,
      targets: [
        q(`sitehost_site_extension_updates_available${S} or on () vector(0)`, { legend: "{{type}}" }),
        q(
          `sitehost_site_extension_updates_unclear${S} or on () label_replace(vector(0), "type", "any type", "", "")`,
          { legend: "unclear ({{type}})" },
        ),
      ],
      thresholds: upThresholds(1, 10),
      show: "both",
    }),
    stat({
      title: "Vulnerable extensions",
      description:
        "Plugins and themes with at least one known vulnerability, by highest severity; 0 when none.",
      unit: "none",
      w: 4,
      targets: [
        q(`sum by (severity) (sitehost_site_vulnerable_extensions${S}) or on () vector(0)`, {
          legend: "{{severity}}",
        }),
      ],
      thresholds: upThresholds(1, 1),
      show: "both",
    }),
    table({
      title: "Known vulnerabilities",
      description:
        "Each known vulnerability of an installed plugin or theme: extension, installed version, fixed-in version and severity.",
      unit: "none",
      w: 8,
      targets: [q(`sitehost_site_vulnerability_info${S}`, { table: true })],
      columns: { value: "Value", hide: ["Value", "site", "site_id"] },
    }),
  ]);

  section(d, "Domains, backups and restores", [
    table({
      title: "Domains",
      description: "Every domain of the site: healthy, DNS confirmed and provisioned (1 yes, 0 no).",
      unit: "none",
      w: 14,
      targets: [
        q(`sitehost_site_domain_healthy${S}`, { table: true }),
        q(`sitehost_site_domain_dns_confirmed${S}`, { table: true }),
        q(`sitehost_site_domain_provisioned${S}`, { table: true }),
      ],
      transformations: [
        { id: "merge", options: {} },
        {
          id: "organize",
          options: {
            excludeByName: {
              Time: true,
              __name__: true,
              job: true,
              instance: true,
              site: true,
              site_id: true,
            },
            renameByName: { "Value #A": "Healthy", "Value #B": "DNS confirmed", "Value #C": "Provisioned" },
          },
        },
      ],
      words: { "0": ["no", "red"], "1": ["yes", "green"] },
    }),
    stat({
      title: "Time since last backup",
      description:
        "Age of the newest automatic backup per type (filesystem, database). Orange past 24 hours, red past 36 hours.",
      unit: "s",
      w: 10,
      targets: [q(`time() - sitehost_site_backup_last_timestamp_seconds${S}`, { legend: "{{type}}" })],
      thresholds: upThresholds(DAY, 1.5 * DAY),
      show: "both",
    }),
    barGauge({
      title: "On-demand backup slots used",
      description:
        "On-demand backups the site holds per type (fs file system, db database) out of the 3 the platform allows; a full type refuses new on-demand backups and data transfers that move it. 0 when none.",
      unit: "none",
      w: 8,
      targets: [
        q(`sitehost_site_ondemand_backups${S} or on () vector(0)`, { legend: "{{type}}", instant: true }),
      ],
      min: 0,
      max: 3,
      thresholds: upThresholds(2, 3),
    }),
    stat({
      title: "Latest restore",
      description:
        "State of the site's latest restore (in_progress, completed, failed, or another status as the platform gives it).",
      unit: "none",
      w: 5,
      targets: [q(`sitehost_site_restore_last_state${S} == 1`, { legend: "{{state}}" })],
      show: "name",
    }),
    stat({
      title: "Time since latest restore",
      description: "Time since the site's latest restore was requested.",
      unit: "s",
      w: 5,
      targets: [q(`time() - sitehost_site_restore_last_timestamp_seconds${S}`, { legend: "latest restore" })],
    }),
    stat({
      title: "Restores by state",
      description: "Restores in the newest page of the site's restore listing, by state; 0 when none.",
      unit: "none",
      w: 6,
      targets: [q(`sitehost_site_restores${S} or on () vector(0)`, { legend: "{{state}}" })],
      show: "both",
    }),
  ]);

  section(d, "Certificates and git deploys", [
    barGauge({
      title: "Certificate expiry",
      description:
        "Time left before the certificate of each domain of the site expires (A records of the DNS zones); orange within 14 days, red within 3.",
      unit: "s",
      w: 7,
      targets: [
        q(`sitehost_certificate_expiry_timestamp_seconds${S} - time()`, {
          legend: "{{domain}}",
          instant: true,
        }),
      ],
      thresholds: downThresholds(3 * DAY, 14 * DAY),
    }),
    stat({
      title: "Broken certificate records",
      description:
        "Per domain, whether the platform flags its A record as broken (no longer pointing at the platform, so its certificate cannot be renewed).",
      unit: "none",
      w: 6,
      targets: [q(`sitehost_certificate_broken${S}`, { legend: "{{domain}}" })],
      words: { "0": ["OK", "green"], "1": ["Broken", "red"] },
      show: "both",
    }),
    stat({
      title: "Last git deploy",
      description:
        "Whether the site's newest finished git deploy succeeded; empty when the site is not enrolled in the git integration or never deployed. Deploys are also annotations on the graphs.",
      unit: "none",
      w: 4,
      targets: [q(`sitehost_site_git_last_deploy_success${S}`, { legend: "last deploy" })],
      words: { "0": ["Failed", "red"], "1": ["Deployed", "green"] },
    }),
    stat({
      title: "Time since last git deploy",
      description: "Time since the site's newest finished git deploy (successful or failed) was created.",
      unit: "s",
      w: 4,
      targets: [q(`time() - sitehost_site_git_last_deploy_timestamp_seconds${S}`, { legend: "last deploy" })],
    }),
    stat({
      title: "Git connection",
      description:
        "Whether the site's git deployment is connected to its repository and a provider token is stored; empty when the site is not enrolled in the git integration. Disconnected, pushes are not deployed.",
      unit: "none",
      w: 3,
      targets: [
        q(`sitehost_site_git_connected${S}`, { legend: "connected" }),
        q(`sitehost_site_git_token_stored${S}`, { legend: "token" }),
      ],
      words: { "0": ["No", "red"], "1": ["Yes", "green"] },
      show: "both",
    }),
  ]);

  section(d, "Logs", [
    timeSeries({
      title: "HTTP responses by status class",
      description:
        "Web-server responses per second by status class, counted from the site's web-server log records. Exemplars (with Prometheus's exemplar storage) name a recent 5xx log record.",
      unit: "reqps",
      w: 8,
      targets: [
        q(`sum by (status_class) (rate(sitehost_site_http_responses_total${S}[$__rate_interval]))`, {
          legend: "{{status_class}}",
          exemplar: true,
        }),
      ],
    }),
    timeSeries({
      title: "PHP log entries by severity",
      description:
        "PHP log entries per second by severity (fatal, parse, error, warning, notice, deprecated, other).",
      unit: "cps",
      w: 8,
      targets: [
        q(`sum by (severity) (rate(sitehost_site_php_log_entries_total${S}[$__rate_interval]))`, {
          legend: "{{severity}}",
        }),
      ],
    }),
    timeSeries({
      title: "Log lag",
      description:
        "Time between now and the newest shipped log record of the site, per stream (php, server).",
      unit: "s",
      w: 8,
      targets: [q(`sitehost_exporter_log_lag_seconds${withSite('stream=~".+"')}`, { legend: "{{stream}}" })],
    }),
  ]);
}
