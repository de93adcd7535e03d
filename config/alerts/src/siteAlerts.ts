/** Alerts about the sites and the account: state, storage, security, domains, backups, certificates, traffic. */
import { alert, type GroupDef } from "./rule.js";

/**
 * The vulnerability alerts keep the metric's own `severity` label (the extension's highest vulnerability
 * severity) as `vulnerability_severity`: the alert's `severity` label overwrites it, and a site with two
 * vulnerability severities would otherwise make two series with one label set, which fails the rule.
 */
const vulnerable = (sel: string, matcher: string): string =>
  `label_replace(sitehost_site_vulnerable_extensions{${sel}, severity${matcher}"critical|high"}, "vulnerability_severity", "$1", "severity", "(.+)") > 0`;

export const SITE_GROUP: GroupDef = {
  name: "sitehost-sites",
  rules: [
    alert({
      alert: "SitehostSiteDisabled",
      severity: "warning",
      for: "5m",
      expr: (c) => `sitehost_site_state{${c.sel}, state="disabled"} == 1`,
      summary: "A site is disabled.",
      description: (c) =>
        `Site {{ $labels.site }} (id {{ $labels.site_id }}) has been in state disabled for ${c.for}; it serves no visitors.`,
    }),
    alert({
      alert: "SitehostSiteHacked",
      severity: "critical",
      expr: (c) => `sitehost_site_hacked{${c.sel}} == 1`,
      summary: "The platform's support marked a site as hacked.",
      description: () =>
        "Site {{ $labels.site }} (id {{ $labels.site_id }}) was marked hacked by the platform's support and disabled; only support can mark it safe again.",
    }),
    alert({
      alert: "SitehostSiteMaintenanceModeLeftOn",
      severity: "warning",
      // `for` rather than a window over the gauge: an instant selector costs one sample a site.
      for: "2h",
      comment:
        "The mode is known from events and activity entries only; sitehost_site_state says live meanwhile.",
      expr: (c) => `sitehost_site_maintenance_mode{${c.sel}} == 1`,
      summary: "A site has been left in maintenance mode.",
      description: (c) =>
        `Site {{ $labels.site }} (id {{ $labels.site_id }}) has been in maintenance mode for ${c.for}; visitors get the maintenance page.`,
    }),
    alert({
      alert: "SitehostSitePhpVersionUnsupported",
      severity: "warning",
      for: "1h",
      expr: (c) => `sitehost_site_php_version_supported{${c.sel}} == 0`,
      summary: "A site runs a PHP version the platform no longer supports.",
      description: () =>
        "Site {{ $labels.site }} (id {{ $labels.site_id }}) runs a PHP version that is not among the platform's supported versions; it gets no security fixes.",
    }),
    alert<"threshold">({
      alert: "SitehostSiteStorageNearLimit",
      severity: "warning",
      for: "30m",
      params: { threshold: 0.9 },
      paramDocs: {
        threshold: "Share of the limit used (also fires inside the platform's warning headroom).",
      },
      expr: (
        c,
      ) => `sitehost_site_storage_used_bytes{${c.sel}} / sitehost_site_storage_limit_bytes{${c.sel}} > ${c.p.threshold}
or (
  sitehost_site_storage_used_bytes{${c.sel}} / sitehost_site_storage_limit_bytes{${c.sel}}
  and sitehost_site_storage_used_bytes{${c.sel}} > sitehost_site_storage_limit_bytes{${c.sel}} - sitehost_site_storage_warning_headroom_bytes{${c.sel}}
)`,
      summary: "A site is close to its storage limit.",
      description: () =>
        "Site {{ $labels.site }} uses {{ $value | humanizePercentage }} of its {{ $labels.store }} storage limit.",
    }),
    alert({
      alert: "SitehostSiteVulnerableExtensionCritical",
      severity: "critical",
      for: "10m",
      expr: (c) => vulnerable(c.sel, "=~"),
      summary: "A site runs a plugin or theme with a high or critical vulnerability.",
      description: () =>
        "Site {{ $labels.site }} has {{ $value }} {{ $labels.type }}(s) with a known {{ $labels.vulnerability_severity }} vulnerability.",
    }),
    alert({
      alert: "SitehostSiteVulnerableExtension",
      severity: "warning",
      for: "10m",
      expr: (c) => vulnerable(c.sel, "!~"),
      summary: "A site runs a plugin or theme with a known vulnerability.",
      description: () =>
        "Site {{ $labels.site }} has {{ $value }} {{ $labels.type }}(s) with a known vulnerability of severity {{ $labels.vulnerability_severity }}.",
    }),
    alert({
      alert: "SitehostSiteDomainUnhealthy",
      severity: "warning",
      for: "15m",
      expr: (c) => `sitehost_site_domain_healthy{${c.sel}} == 0`,
      summary: "A domain of a site is unhealthy.",
      description: (c) =>
        `Domain {{ $labels.domain }} (primary={{ $labels.primary }}) of site {{ $labels.site }} has been unhealthy for ${c.for}.`,
    }),
    alert<"hours">({
      alert: "SitehostSiteBackupStale",
      severity: "warning",
      for: "30m",
      params: { hours: 36 },
      paramDocs: { hours: "Age of the newest automatic backup of a type." },
      expr: (c) => `time() - sitehost_site_backup_last_timestamp_seconds{${c.sel}} > ${c.p.hours} * 3600`,
      summary: "A site has no recent automatic backup.",
      description: (c) =>
        `The newest {{ $labels.type }} backup of site {{ $labels.site }} is {{ $value | humanizeDuration }} old (more than ${c.p.hours} hours).`,
    }),
    alert({
      alert: "SitehostSiteOnDemandBackupSlotsFull",
      severity: "info",
      for: "1h",
      comment: "The platform allows 3 on-demand backups of each type.",
      expr: (c) => `sitehost_site_ondemand_backups{${c.sel}, type=~"fs|db"} >= 3`,
      summary: "A site has used all its on-demand backup slots of a type.",
      description: () =>
        "Site {{ $labels.site }} holds {{ $value }} on-demand {{ $labels.type }} backups, every slot the platform allows; another on-demand backup of that type, and a data transfer that moves it, are refused until one is deleted or expires.",
    }),
    alert<"days">({
      alert: "SitehostSiteRestoreFailed",
      severity: "warning",
      for: "5m",
      comment: "Only restores requested recently: an old failure nobody retried is history, not news.",
      params: { days: 7 },
      paramDocs: { days: "Restores requested longer ago are left out." },
      expr: (c) => `sitehost_site_restore_last_state{${c.sel}, state="failed"} == 1
and on (${c.byWith("site_id")})
time() - sitehost_site_restore_last_timestamp_seconds{${c.sel}} < ${c.p.days} * 86400`,
      summary: "The latest restore of a site failed.",
      description: () =>
        "The latest restore of site {{ $labels.site }} (id {{ $labels.site_id }}) failed; the site may be partly restored.",
    }),
    alert({
      alert: "SitehostSiteGitDeployFailed",
      severity: "warning",
      for: "5m",
      expr: (c) => `sitehost_site_git_last_deploy_success{${c.sel}} == 0`,
      summary: "The latest git deploy of a site failed.",
      description: () =>
        "The newest finished git deploy of site {{ $labels.site }} (id {{ $labels.site_id }}) failed; the site does not run the code last pushed for it.",
    }),
    alert({
      alert: "SitehostSiteCmsAdministratorAdded",
      severity: "warning",
      comment:
        "A login that was not an administrator an hour ago, on a site whose users were read then (not a new site, nor the exporter's first hour).",
      expr: (c) =>
        `(sitehost_site_cms_administrator_info{${c.sel}} unless sitehost_site_cms_administrator_info{${c.sel}} offset 1h)
and on (${c.byWith("site_id")}) (sitehost_site_cms_users{${c.sel}} offset 1h)`,
      summary: "A site has a new cms administrator.",
      description: () =>
        "Site {{ $labels.site }} (id {{ $labels.site_id }}) has a new cms administrator: {{ $labels.login }}. A new administrator is the classic sign of a compromised site; check that someone meant to add it.",
    }),
    alert<"minutes">({
      alert: "SitehostSitePhpNewFatalErrorAfterChange",
      severity: "warning",
      comment:
        "A PHP error group of severity fatal or parse first seen on a site within the given minutes after one of its changes (the nearest one before it names the change; a change stamped up to a minute after the error counts too: entry times have one-second precision and the change's may come from another clock); it fires for that long after the error's first entry, once.",
      params: { minutes: 60 },
      paramDocs: {
        minutes: "How soon after a change a new fatal error counts, and how long the alert fires.",
      },
      expr: (c) =>
        `bottomk by (${c.byWith("site_id")}) (1,
  clamp_min(
    (
      max by (${c.byWith("site_id", "site")}) (sitehost_site_php_error_group_new_timestamp_seconds{${c.sel}, severity=~"fatal|parse"})
      - on (${c.byWith("site_id")}) group_right ()
      sitehost_site_change_timestamp_seconds{${c.sel}}
    ) > -60 < ${c.p.minutes} * 60,
    0
  )
)
and on (${c.byWith("site_id")})
  time() - max by (${c.byWith("site_id")}) (sitehost_site_php_error_group_new_timestamp_seconds{${c.sel}, severity=~"fatal|parse"}) < ${c.p.minutes} * 60`,
      summary: "A new fatal PHP error appeared on a site soon after a change.",
      description: () =>
        "Site {{ $labels.site }} (id {{ $labels.site_id }}) logs a fatal PHP error it did not log before, {{ $value | humanizeDuration }} after its latest change of kind {{ $labels.kind }}. The change may have broken it: the PHP log records carry sitehost.php.error_group, the change's activity or webhook record says who did what.",
    }),
    alert({
      alert: "SitehostSiteGitDisconnected",
      severity: "warning",
      for: "15m",
      comment: "Only sites that have deployed with git: an enrolled site that never used it is left alone.",
      expr: (c) =>
        `sitehost_site_git_connected{${c.sel}} == 0 and sitehost_site_git_last_deploy_timestamp_seconds{${c.sel}}`,
      summary: "A site's git deployment is no longer connected to its repository.",
      description: () =>
        "Site {{ $labels.site }} (id {{ $labels.site_id }}) deployed with git before, but its git deployment is no longer connected: new pushes are not deployed.",
    }),
    alert<"days">({
      alert: "SitehostCertificateExpiringSoon",
      severity: "warning",
      for: "1h",
      comment:
        "The platform renews certificates well ahead; this many days left means renewal is not happening. Below SitehostCertificateExpiringSoonCritical's days that alert takes over.",
      params: { days: 14 },
      paramDocs: { days: "Days left before the certificate expires." },
      expr: (c) => `sitehost_certificate_expiry_timestamp_seconds{${c.sel}} - time() < ${c.p.days} * 86400
and sitehost_certificate_expiry_timestamp_seconds{${c.sel}} - time() >= ${c.ref("SitehostCertificateExpiringSoonCritical", "days")} * 86400`,
      summary: (c) => `A certificate expires within ${c.p.days} days.`,
      description: () =>
        "The certificate of {{ $labels.domain }} (zone {{ $labels.zone }}, site {{ $labels.site }}) expires in {{ $value | humanizeDuration }}.",
    }),
    alert<"days">({
      alert: "SitehostCertificateExpiringSoonCritical",
      severity: "critical",
      for: "15m",
      params: { days: 3 },
      paramDocs: { days: "Days left before the certificate expires (or has expired)." },
      expr: (c) => `sitehost_certificate_expiry_timestamp_seconds{${c.sel}} - time() < ${c.p.days} * 86400`,
      summary: (c) => `A certificate expires within ${c.p.days} days, or has expired.`,
      description: () =>
        "The certificate of {{ $labels.domain }} (zone {{ $labels.zone }}, site {{ $labels.site }}) has {{ $value | humanizeDuration }} left (negative once expired).",
    }),
    alert<"days">({
      alert: "SitehostCertificateServedOlder",
      severity: "warning",
      for: "1h",
      comment:
        "The probes' view of a certificate against the platform's: needs blackbox_exporter probing the /sd/probes targets (docs/probes.md); silent without it.",
      params: { days: 1 },
      paramDocs: { days: "How many days sooner the served certificate may expire than the platform's one." },
      expr: (
        c,
      ) => `min by (${c.byWith("site_id", "site", "domain")}) (sitehost_certificate_expiry_timestamp_seconds{${c.sel}})
- on (${c.byWithoutTarget("site_id", "domain")}) group_left ()
min by (${c.byWithoutTarget("site_id", "domain")}) (probe_ssl_earliest_cert_expiry{site_id!=""})
> ${c.p.days} * 86400`,
      summary: "A site serves an older certificate than the platform holds.",
      description: () =>
        "Visitors of {{ $labels.domain }} (site {{ $labels.site }}) get a certificate that expires {{ $value | humanizeDuration }} sooner than the one the platform reports for it: the platform's certificate is not the one served (a proxy or CDN in front with its own, or an edge that has not picked up the renewal). The expiry alerts read the platform's and will not warn in time.",
    }),
    alert({
      alert: "SitehostCertificateBrokenRecord",
      severity: "warning",
      for: "1h",
      expr: (c) => `sitehost_certificate_broken{${c.sel}} == 1`,
      summary: "A domain's A record no longer points at the platform.",
      description: () =>
        "The platform flags the A record of {{ $labels.domain }} (zone {{ $labels.zone }}, site {{ $labels.site }}) as broken; its certificate cannot be renewed until the record points at the site again.",
    }),
    alert<"threshold">({
      alert: "SitehostSitePerformanceScoreLow",
      severity: "info",
      for: "1h",
      params: { threshold: 0.5 },
      paramDocs: { threshold: "Performance audit score (0-1)." },
      expr: (c) => `sitehost_site_audit_score{${c.sel}, category="performance"} < ${c.p.threshold}`,
      summary: "A site has a poor performance audit score.",
      description: (c) =>
        `The {{ $labels.strategy }} performance score of site {{ $labels.site }} is {{ $value | humanizePercentage }} (below {{ ${c.p.threshold} | humanizePercentage }}).`,
    }),
    alert<"threshold">({
      alert: "SitehostSitePerformanceScoreDropped",
      severity: "warning",
      for: "30m",
      params: { threshold: 0.2 },
      paramDocs: { threshold: "Drop of the performance audit score (0-1) against a day ago." },
      expr: (c) => `sitehost_site_audit_score{${c.sel}, category="performance"} offset 1d
- sitehost_site_audit_score{${c.sel}, category="performance"}
> ${c.p.threshold}`,
      summary: "The performance audit score of a site dropped sharply.",
      description: () =>
        "The {{ $labels.strategy }} performance score of site {{ $labels.site }} is {{ $value | humanizePercentage }} lower than a day ago.",
    }),
    alert<"threshold" | "minRequestsPerSecond">({
      alert: "SitehostSiteHighHttp5xxRate",
      severity: "warning",
      for: "10m",
      comment: "Needs log tailing (logs.enabled); ignores sites with little traffic in their logs.",
      params: { threshold: 0.05, minRequestsPerSecond: 0.1 },
      paramDocs: {
        threshold: "Share of responses with a 5xx status.",
        minRequestsPerSecond: "Sites with fewer logged requests are left out.",
      },
      expr: (
        c,
      ) => `sum by (${c.byWith("site_id", "site")}) (rate(sitehost_site_http_responses_total{${c.sel}, status_class="5xx"}[10m]))
/ sum by (${c.byWith("site_id", "site")}) (rate(sitehost_site_http_responses_total{${c.sel}}[10m]))
> ${c.p.threshold}
and on (${c.byWith("site_id")})
sum by (${c.byWith("site_id")}) (rate(sitehost_site_http_responses_total{${c.sel}}[10m])) > ${c.p.minRequestsPerSecond}`,
      summary: "A site answers many requests with 5xx errors.",
      description: () =>
        "{{ $value | humanizePercentage }} of the responses of site {{ $labels.site }} in the last 10 minutes were 5xx errors.",
    }),
    alert<"perMinute">({
      alert: "SitehostSitePhpFatalErrors",
      severity: "warning",
      for: "10m",
      comment: "Needs log tailing (logs.enabled).",
      params: { perMinute: 1 },
      paramDocs: { perMinute: "PHP fatal and parse errors per minute." },
      expr: (c) =>
        `sum by (${c.byWith("site_id", "site")}) (rate(sitehost_site_php_log_entries_total{${c.sel}, severity=~"fatal|parse"}[10m])) * 60 > ${c.p.perMinute}`,
      summary: "A site logs PHP fatal errors at a high rate.",
      description: () =>
        "Site {{ $labels.site }} logs {{ $value | humanize }} PHP fatal or parse errors per minute.",
    }),
    alert<"threshold">({
      alert: "SitehostAccountSiteCapacityNearlyUsed",
      severity: "warning",
      for: "30m",
      params: { threshold: 0.9 },
      paramDocs: { threshold: "Share of a site capacity used." },
      expr: (
        c,
      ) => `sitehost_account_sites{${c.sel}, kind=~"billable|staging"} / sitehost_account_site_capacity{${c.sel}} > ${c.p.threshold}
or label_replace(sitehost_account_sites{${c.sel}, kind="total"} / ignoring (kind) sitehost_account_max_sites{${c.sel}}, "kind", "total", "", "") > ${c.p.threshold}`,
      summary: "The hosting account has nearly used its site capacity.",
      description: () =>
        "The account uses {{ $value | humanizePercentage }} of its {{ $labels.kind }} site capacity; new sites of that kind may soon be refused.",
    }),
  ],
};
