/** Site detail: everything the exporter knows about one site. */
import { PanelBuilder as BarGauge } from "@grafana/grafana-foundation-sdk/bargauge";
import {
  BarGaugeDisplayMode,
  BigValueTextMode,
  VizOrientation,
} from "@grafana/grafana-foundation-sdk/common";
import {
  AnnotationQueryBuilder,
  MappingType,
  QueryVariableBuilder,
  RowBuilder,
  VariableRefresh,
  VariableSort,
  type Dashboard,
} from "@grafana/grafana-foundation-sdk/dashboard";
import { PanelBuilder as Gauge } from "@grafana/grafana-foundation-sdk/gauge";
import { PanelBuilder as Stat } from "@grafana/grafana-foundation-sdk/stat";
import { PanelBuilder as Table } from "@grafana/grafana-foundation-sdk/table";
import { PanelBuilder as TimeSeries } from "@grafana/grafana-foundation-sdk/timeseries";
import {
  downThresholds,
  DS,
  finalize,
  organize,
  panel,
  q,
  sel,
  thresholds,
  upThresholds,
  lastValue,
  sitehostDashboard,
} from "./common.js";

export const SITE_UID = "sitehost-site";

const onOff = [
  {
    type: MappingType.ValueToText as const,
    options: { "0": { text: "Off", index: 0 }, "1": { text: "On", index: 1 } },
  },
];

/** 0/1 as no/yes words in the given colours. */
function yesNo(zero: string, one: string, zeroColor: string, oneColor: string) {
  return [
    {
      type: MappingType.ValueToText as const,
      options: {
        "0": { text: zero, color: zeroColor, index: 0 },
        "1": { text: one, color: oneColor, index: 1 },
      },
    },
  ];
}

/** Time left before expiry: red within 3 days, orange within 14. */
const expiryThresholds = () =>
  thresholds([
    { value: null, color: "red" },
    { value: 3 * 86400, color: "orange" },
    { value: 14 * 86400, color: "green" },
  ]);

/**
 * Git deploys as annotations: each newest finished deploy at its own time (the metric's value), green
 * when it succeeded and red when it failed. A deploy overtaken between two collector runs is not shown.
 */
function deployAnnotation(name: string, success: 0 | 1, color: string): AnnotationQueryBuilder {
  const site = sel('site="$site"');
  const expr = `sitehost_site_git_last_deploy_timestamp_seconds${site} * 1000 and on (job, instance, site_id) sitehost_site_git_last_deploy_success${site} == ${success}`;
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

function siteVariable(): QueryVariableBuilder {
  const query = 'label_values(sitehost_site_info{job="$job", instance=~"$instance"}, site)';
  return new QueryVariableBuilder("site")
    .label("Site")
    .description("The site's unique name.")
    .datasource(DS)
    .query(query)
    .definition(query)
    .refresh(VariableRefresh.OnTimeRangeChanged)
    .sort(VariableSort.AlphabeticalCaseInsensitiveAsc);
}

export function siteDashboard(): Dashboard {
  const S = sel('site="$site"');
  const withSite = (extra: string): string => sel(`site="$site", ${extra}`);
  const d = sitehostDashboard({
    title: "Sitehost / Site detail",
    uid: SITE_UID,
    description:
      "One site: state, traffic, storage, performance audits, security, domains, backups, restores, certificates, git deploys and log-derived HTTP and PHP error rates.",
    from: "now-6h",
    refresh: "1m",
  })
    .withVariable(siteVariable())
    .annotation(deployAnnotation("Git deploy", 1, "green"))
    .annotation(deployAnnotation("Failed git deploy", 0, "red"));

  d.withRow(new RowBuilder("Overview"));
  d.withPanel(
    panel(new Stat(), {
      title: "State",
      description: "The site's current platform state (live, deploying, cloning, disabled, ...).",
      unit: "none",
      w: 4,
      h: 5,
      targets: [q(`sitehost_site_state${S} == 1`, { legend: "{{state}}" })],
    })
      .reduceOptions(lastValue())
      .textMode(BigValueTextMode.Name),
  );
  d.withPanel(
    panel(new Table(), {
      title: "Site",
      description: "Site metadata: display name, URL, data center, PHP version, environment and kind.",
      unit: "none",
      w: 14,
      h: 5,
      targets: [q(`sitehost_site_info${S}`, { table: true })],
    }).withTransformation(organize("Value", ["Value"])),
  );
  d.withPanel(
    panel(new Stat(), {
      title: "Edge cache",
      description: "Whether the edge cache is enabled, and whether its defensive mode is on.",
      unit: "none",
      w: 6,
      h: 5,
      targets: [
        q(`sitehost_site_edge_cache_enabled${S}`, { legend: "Edge cache" }),
        q(`sitehost_site_edge_cache_defensive_mode_enabled${S}`, { legend: "Defensive mode" }),
      ],
    })
      .mappings(onOff)
      .reduceOptions(lastValue())
      .textMode(BigValueTextMode.ValueAndName),
  );

  d.withRow(new RowBuilder("Traffic"));
  d.withPanel(
    panel(new TimeSeries(), {
      title: "Requests per second",
      description:
        "Requests per second in the latest complete period, served from the edge cache (cached=true) or not.",
      unit: "reqps",
      targets: [
        q(`sum by (cached) (sitehost_site_requests_per_second${S})`, { legend: "cached={{cached}}" }),
      ],
    }),
  );
  d.withPanel(
    panel(new TimeSeries(), {
      title: "Bandwidth",
      description: "Response bytes per second in the latest complete period, by cache status.",
      unit: "Bps",
      targets: [
        q(`sum by (cached) (sitehost_site_response_bytes_per_second${S})`, { legend: "cached={{cached}}" }),
      ],
    }),
  );
  d.withPanel(
    panel(new BarGauge(), {
      title: "Page views",
      description: "Page views over each period the platform reports (updated daily by the platform).",
      unit: "short",
      w: 9,
      targets: [q(`sitehost_site_page_views${S}`, { legend: "{{period}}", instant: true })],
    })
      .reduceOptions(lastValue())
      .displayMode(BarGaugeDisplayMode.Basic)
      .orientation(VizOrientation.Horizontal),
  );
  d.withPanel(
    panel(new BarGauge(), {
      title: "Unique visits",
      description: "Unique visits over each period the platform reports (updated daily by the platform).",
      unit: "short",
      w: 9,
      targets: [q(`sitehost_site_unique_visits${S}`, { legend: "{{period}}", instant: true })],
    })
      .reduceOptions(lastValue())
      .displayMode(BarGaugeDisplayMode.Basic)
      .orientation(VizOrientation.Horizontal),
  );
  d.withPanel(
    panel(new Stat(), {
      title: "Daily average visits",
      description: "Daily average visits over the latest billing cycle (usage report).",
      unit: "short",
      w: 6,
      targets: [q(`sitehost_site_usage_daily_average_visits${S}`, { legend: "visits per day" })],
    }).reduceOptions(lastValue()),
  );

  d.withRow(new RowBuilder("Storage"));
  d.withPanel(
    panel(new TimeSeries(), {
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
  );
  d.withPanel(
    panel(new Gauge(), {
      title: "Storage used of limit",
      description: "Used bytes divided by the limit, per store. Empty when the site has no limit.",
      unit: "percentunit",
      w: 6,
      targets: [
        q(`sitehost_site_storage_used_bytes${S} / sitehost_site_storage_limit_bytes${S}`, {
          legend: "{{store}}",
        }),
      ],
    })
      .min(0)
      .max(1)
      .thresholds(upThresholds(0.8, 0.9))
      .reduceOptions(lastValue()),
  );
  d.withPanel(
    panel(new Stat(), {
      title: "Daily average storage",
      description: "Daily average storage usage over the latest billing cycle (usage report).",
      unit: "bytes",
      w: 6,
      targets: [q(`sitehost_site_usage_storage_daily_average_bytes${S}`, { legend: "storage" })],
    }).reduceOptions(lastValue()),
  );

  d.withRow(new RowBuilder("Performance audits"));
  d.withPanel(
    panel(new BarGauge(), {
      title: "Audit scores",
      description: "Latest performance audit scores (0-1) per strategy (desktop, mobile) and category.",
      unit: "percentunit",
      targets: [q(`sitehost_site_audit_score${S}`, { legend: "{{strategy}} {{category}}", instant: true })],
    })
      .min(0)
      .max(1)
      .thresholds(downThresholds(0.5, 0.9))
      .reduceOptions(lastValue())
      .displayMode(BarGaugeDisplayMode.Gradient)
      .orientation(VizOrientation.Horizontal),
  );
  d.withPanel(
    panel(new BarGauge(), {
      title: "Web vitals",
      description:
        "Latest audit timings per strategy: first and largest contentful paint, speed index, time to interactive, total blocking time, server response time.",
      unit: "s",
      targets: [
        q(`sitehost_site_audit_timing_seconds${S}`, { legend: "{{strategy}} {{audit}}", instant: true }),
      ],
    })
      .reduceOptions(lastValue())
      .displayMode(BarGaugeDisplayMode.Basic)
      .orientation(VizOrientation.Horizontal),
  );
  d.withPanel(
    panel(new Stat(), {
      title: "Cumulative layout shift",
      description:
        "Latest cumulative layout shift per strategy (unitless; below 0.1 is good, above 0.25 poor).",
      unit: "none",
      targets: [q(`sitehost_site_audit_cumulative_layout_shift${S}`, { legend: "{{strategy}}" })],
    })
      .decimals(3)
      .thresholds(upThresholds(0.1, 0.25))
      .reduceOptions(lastValue())
      .textMode(BigValueTextMode.ValueAndName),
  );
  d.withPanel(
    panel(new Stat(), {
      title: "Audit age",
      description: "Time since the latest performance audit ran, per strategy.",
      unit: "s",
      targets: [q(`time() - sitehost_site_audit_timestamp_seconds${S}`, { legend: "{{strategy}}" })],
    })
      .reduceOptions(lastValue())
      .textMode(BigValueTextMode.ValueAndName),
  );

  d.withRow(new RowBuilder("Security"));
  d.withPanel(
    panel(new Stat(), {
      title: "Extensions",
      description: "Installed plugins and themes by type and status.",
      unit: "none",
      w: 8,
      targets: [q(`sum by (type, status) (sitehost_site_extensions${S})`, { legend: "{{type}} {{status}}" })],
    })
      .reduceOptions(lastValue())
      .textMode(BigValueTextMode.ValueAndName),
  );
  d.withPanel(
    panel(new Stat(), {
      title: "Updates available",
      description: "Plugins and themes with an update available.",
      unit: "none",
      w: 4,
      targets: [q(`sitehost_site_extension_updates_available${S}`, { legend: "{{type}}" })],
    })
      .thresholds(upThresholds(1, 10))
      .reduceOptions(lastValue())
      .textMode(BigValueTextMode.ValueAndName),
  );
  d.withPanel(
    panel(new Stat(), {
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
    })
      .thresholds(upThresholds(1, 1))
      .reduceOptions(lastValue())
      .textMode(BigValueTextMode.ValueAndName),
  );
  d.withPanel(
    panel(new Table(), {
      title: "Known vulnerabilities",
      description:
        "Each known vulnerability of an installed plugin or theme: extension, installed version, fixed-in version and severity.",
      unit: "none",
      w: 8,
      targets: [q(`sitehost_site_vulnerability_info${S}`, { table: true })],
    }).withTransformation(organize("Value", ["Value", "site", "site_id"])),
  );

  d.withRow(new RowBuilder("Domains, backups and restores"));
  d.withPanel(
    panel(new Table(), {
      title: "Domains",
      description: "Every domain of the site: healthy, DNS confirmed and provisioned (1 yes, 0 no).",
      unit: "none",
      w: 14,
      targets: [
        q(`sitehost_site_domain_healthy${S}`, { table: true }),
        q(`sitehost_site_domain_dns_confirmed${S}`, { table: true }),
        q(`sitehost_site_domain_provisioned${S}`, { table: true }),
      ],
    })
      .withTransformation({ id: "merge", options: {} })
      .withTransformation({
        id: "organize",
        options: {
          excludeByName: { Time: true, __name__: true, job: true, instance: true, site: true, site_id: true },
          renameByName: { "Value #A": "Healthy", "Value #B": "DNS confirmed", "Value #C": "Provisioned" },
        },
      })
      .mappings([
        {
          type: MappingType.ValueToText,
          options: {
            "0": { text: "no", color: "red", index: 0 },
            "1": { text: "yes", color: "green", index: 1 },
          },
        },
      ]),
  );
  d.withPanel(
    panel(new Stat(), {
      title: "Time since last backup",
      description:
        "Age of the newest automatic backup per type (filesystem, database). Orange past 24 hours, red past 36 hours.",
      unit: "s",
      w: 10,
      targets: [q(`time() - sitehost_site_backup_last_timestamp_seconds${S}`, { legend: "{{type}}" })],
    })
      .thresholds(
        thresholds([
          { value: null, color: "green" },
          { value: 86400, color: "orange" },
          { value: 129600, color: "red" },
        ]),
      )
      .reduceOptions(lastValue())
      .textMode(BigValueTextMode.ValueAndName),
  );

  d.withPanel(
    panel(new BarGauge(), {
      title: "On-demand backup slots used",
      description:
        "On-demand backups the site holds per type (fs file system, db database) out of the 3 the platform allows; a full type refuses new on-demand backups and data transfers that move it.",
      unit: "none",
      w: 8,
      targets: [q(`sitehost_site_ondemand_backups${S}`, { legend: "{{type}}", instant: true })],
    })
      .min(0)
      .max(3)
      .thresholds(upThresholds(2, 3))
      .reduceOptions(lastValue())
      .displayMode(BarGaugeDisplayMode.Basic)
      .orientation(VizOrientation.Horizontal),
  );
  d.withPanel(
    panel(new Stat(), {
      title: "Latest restore",
      description:
        "State of the site's latest restore (in_progress, completed, failed, or another status as the platform gives it).",
      unit: "none",
      w: 5,
      targets: [q(`sitehost_site_restore_last_state${S} == 1`, { legend: "{{state}}" })],
    })
      .reduceOptions(lastValue())
      .textMode(BigValueTextMode.Name),
  );
  d.withPanel(
    panel(new Stat(), {
      title: "Time since latest restore",
      description: "Time since the site's latest restore was requested.",
      unit: "s",
      w: 5,
      targets: [q(`time() - sitehost_site_restore_last_timestamp_seconds${S}`, { legend: "latest restore" })],
    }).reduceOptions(lastValue()),
  );
  d.withPanel(
    panel(new Stat(), {
      title: "Restores by state",
      description: "Restores in the newest page of the site's restore listing, by state.",
      unit: "none",
      w: 6,
      targets: [q(`sitehost_site_restores${S}`, { legend: "{{state}}" })],
    })
      .reduceOptions(lastValue())
      .textMode(BigValueTextMode.ValueAndName),
  );

  d.withRow(new RowBuilder("Certificates and git deploys"));
  d.withPanel(
    panel(new BarGauge(), {
      title: "Certificate expiry",
      description:
        "Time left before the certificate of each domain of the site expires (A records of the DNS zones); orange within 14 days, red within 3.",
      unit: "s",
      w: 10,
      targets: [
        q(`sitehost_certificate_expiry_timestamp_seconds${S} - time()`, {
          legend: "{{domain}}",
          instant: true,
        }),
      ],
    })
      .thresholds(expiryThresholds())
      .reduceOptions(lastValue())
      .displayMode(BarGaugeDisplayMode.Basic)
      .orientation(VizOrientation.Horizontal),
  );
  d.withPanel(
    panel(new Stat(), {
      title: "Broken certificate records",
      description:
        "Per domain, whether the platform flags its A record as broken (no longer pointing at the platform, so its certificate cannot be renewed).",
      unit: "none",
      w: 6,
      targets: [q(`sitehost_certificate_broken${S}`, { legend: "{{domain}}" })],
    })
      .mappings(yesNo("OK", "Broken", "green", "red"))
      .reduceOptions(lastValue())
      .textMode(BigValueTextMode.ValueAndName),
  );
  d.withPanel(
    panel(new Stat(), {
      title: "Last git deploy",
      description:
        "Whether the site's newest finished git deploy succeeded; empty when the site is not enrolled in the git integration or never deployed. Deploys are also annotations on the graphs.",
      unit: "none",
      w: 4,
      targets: [q(`sitehost_site_git_last_deploy_success${S}`, { legend: "last deploy" })],
    })
      .mappings(yesNo("Failed", "Deployed", "red", "green"))
      .reduceOptions(lastValue()),
  );
  d.withPanel(
    panel(new Stat(), {
      title: "Time since last git deploy",
      description: "Time since the site's newest finished git deploy (successful or failed) was created.",
      unit: "s",
      w: 4,
      targets: [q(`time() - sitehost_site_git_last_deploy_timestamp_seconds${S}`, { legend: "last deploy" })],
    }).reduceOptions(lastValue()),
  );

  d.withRow(new RowBuilder("Logs"));
  d.withPanel(
    panel(new TimeSeries(), {
      title: "HTTP responses by status class",
      description:
        "Web-server responses per second by status class, counted from the site's web-server log records.",
      unit: "reqps",
      w: 8,
      targets: [
        q(`sum by (status_class) (rate(sitehost_site_http_responses_total${S}[$__rate_interval]))`, {
          legend: "{{status_class}}",
        }),
      ],
    }),
  );
  d.withPanel(
    panel(new TimeSeries(), {
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
  );
  d.withPanel(
    panel(new TimeSeries(), {
      title: "Log lag",
      description:
        "Time between now and the newest shipped log record of the site, per stream (php, server).",
      unit: "s",
      w: 8,
      targets: [q(`sitehost_exporter_log_lag_seconds${withSite('stream=~".+"')}`, { legend: "{{stream}}" })],
    }),
  );
  return finalize(d.build());
}
