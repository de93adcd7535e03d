/** Fleet overview: every site of the account at a glance. */
import { PanelBuilder as BarGauge } from "@grafana/grafana-foundation-sdk/bargauge";
import {
  BarGaugeDisplayMode,
  BigValueTextMode,
  GraphDrawStyle,
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
  organize,
  panel,
  q,
  sel,
  thresholds,
  upThresholds,
  lastValue,
  sitehostDashboard,
} from "./common.js";

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
  });

  d.withRow(new RowBuilder("Sites and account"));
  d.withPanel(
    panel(new Stat(), {
      title: "Sites",
      description: "Sites the exporter watches (after include/exclude filters).",
      unit: "none",
      w: 4,
      targets: [q(`count(sitehost_site_info${S})`, { legend: "sites" })],
    }).reduceOptions(lastValue()),
  );
  d.withPanel(
    panel(new Stat(), {
      title: "Sites by state",
      description: "Number of sites in each platform state (live, deploying, cloning, disabled, ...).",
      unit: "none",
      w: 8,
      targets: [q(`count by (state) (sitehost_site_state${S} == 1)`, { legend: "{{state}}" })],
    })
      .reduceOptions(lastValue())
      .textMode(BigValueTextMode.ValueAndName),
  );
  d.withPanel(
    panel(new Stat(), {
      title: "Sites by kind",
      description: "Number of sites of each kind (live, staging, sandbox, kit).",
      unit: "none",
      w: 6,
      targets: [q(`count by (kind) (sitehost_site_info${S})`, { legend: "{{kind}}" })],
    })
      .reduceOptions(lastValue())
      .textMode(BigValueTextMode.ValueAndName),
  );
  d.withPanel(
    panel(new BarGauge(), {
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
    })
      .min(0)
      .max(1)
      .thresholds(upThresholds(0.8, 0.95))
      .reduceOptions(lastValue())
      .displayMode(BarGaugeDisplayMode.Gradient)
      .orientation(VizOrientation.Horizontal),
  );

  d.withRow(new RowBuilder("Traffic"));
  d.withPanel(
    panel(new TimeSeries(), {
      title: "Requests per second",
      description: "Requests per second across the fleet, served from the edge cache (cached=true) or not.",
      unit: "reqps",
      w: 8,
      targets: [
        q(`sum by (cached) (sitehost_site_requests_per_second${S})`, { legend: "cached={{cached}}" }),
      ],
    }),
  );
  d.withPanel(
    panel(new TimeSeries(), {
      title: "Bandwidth",
      description: "Response bytes per second across the fleet, by cache status.",
      unit: "Bps",
      w: 8,
      targets: [
        q(`sum by (cached) (sitehost_site_response_bytes_per_second${S})`, { legend: "cached={{cached}}" }),
      ],
    }),
  );
  d.withPanel(
    panel(new TimeSeries(), {
      title: "Edge cache hit ratio",
      description: "Share of requests across the fleet that the edge cache served.",
      unit: "percentunit",
      w: 8,
      targets: [
        q(
          `sum(sitehost_site_requests_per_second${sel('cached="true"')}) / sum(sitehost_site_requests_per_second${S})`,
          { legend: "hit ratio" },
        ),
      ],
    })
      .min(0)
      .max(1),
  );
  d.withPanel(
    panel(new BarGauge(), {
      title: "Top sites by traffic",
      description:
        "The ten sites with the most requests per second (cached and uncached) in the latest period.",
      unit: "reqps",
      w: 12,
      h: 10,
      targets: [
        q(`topk(10, sum by (site) (sitehost_site_requests_per_second${S}))`, {
          legend: "{{site}}",
          instant: true,
        }),
      ],
    })
      .dataLinks([siteDetailLink("label")])
      .reduceOptions(lastValue())
      .displayMode(BarGaugeDisplayMode.Gradient)
      .orientation(VizOrientation.Horizontal),
  );
  d.withPanel(
    panel(new TimeSeries(), {
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
    }).min(0),
  );

  d.withRow(new RowBuilder("Storage, security and performance"));
  d.withPanel(
    panel(new BarGauge(), {
      title: "Storage against limit",
      description:
        "The ten sites closest to a storage limit: used bytes divided by the limit, per store (filesystem, database). Sites without a limit are not shown.",
      unit: "percentunit",
      w: 12,
      h: 10,
      targets: [
        q(`topk(10, sitehost_site_storage_used_bytes${S} / sitehost_site_storage_limit_bytes${S})`, {
          legend: "{{site}} {{store}}",
          instant: true,
        }),
      ],
    })
      .dataLinks([siteDetailLink("label")])
      .min(0)
      .max(1)
      .thresholds(upThresholds(0.8, 0.9))
      .reduceOptions(lastValue())
      .displayMode(BarGaugeDisplayMode.Gradient)
      .orientation(VizOrientation.Horizontal),
  );
  d.withPanel(
    panel(new Table(), {
      title: "Vulnerable extensions",
      description:
        "Sites with plugins or themes that have known vulnerabilities, by type and highest severity.",
      unit: "none",
      w: 12,
      h: 10,
      targets: [
        q(`sum by (site, type, severity) (sitehost_site_vulnerable_extensions${S})`, { table: true }),
      ],
    })
      .dataLinks([siteDetailLink("column")])
      .withTransformation(organize("Extensions")),
  );
  d.withPanel(
    panel(new BarGauge(), {
      title: "Worst performance scores",
      description:
        "The ten lowest performance audit scores (0-1) across sites and strategies (desktop, mobile).",
      unit: "percentunit",
      w: 12,
      h: 10,
      targets: [
        q(`bottomk(10, sitehost_site_audit_score${sel('category="performance"')})`, {
          legend: "{{site}} {{strategy}}",
          instant: true,
        }),
      ],
    })
      .dataLinks([siteDetailLink("label")])
      .min(0)
      .max(1)
      .thresholds(downThresholds(0.5, 0.9))
      .reduceOptions(lastValue())
      .displayMode(BarGaugeDisplayMode.Gradient)
      .orientation(VizOrientation.Horizontal),
  );
  d.withPanel(
    panel(new Stat(), {
      title: "Unhealthy domains",
      description: "Number of domains across the fleet that the platform reports as not healthy.",
      unit: "none",
      w: 4,
      h: 10,
      targets: [q(`count(sitehost_site_domain_healthy${S} == 0) or vector(0)`, { legend: "unhealthy" })],
    })
      .reduceOptions(lastValue())
      .thresholds(upThresholds(1, 1)),
  );
  d.withPanel(
    panel(new Table(), {
      title: "Domain health (unhealthy first)",
      description: "Every domain of every site with its health; unhealthy domains sort to the top.",
      unit: "none",
      w: 8,
      h: 10,
      targets: [q(`sort(sitehost_site_domain_healthy${S})`, { table: true })],
    })
      .dataLinks([siteDetailLink("column")])
      .mappings([
        {
          type: MappingType.ValueToText,
          options: {
            "0": { text: "Unhealthy", color: "red", index: 0 },
            "1": { text: "Healthy", color: "green", index: 1 },
          },
        },
      ])
      .withTransformation(organize("Health", ["site_id"])),
  );
  d.withPanel(
    panel(new BarGauge(), {
      title: "Oldest backups",
      description:
        "The ten sites whose newest automatic backup is oldest, per type (filesystem, database). Orange past 24 hours, red past 36 hours.",
      unit: "s",
      w: 12,
      h: 10,
      targets: [
        q(`topk(10, time() - sitehost_site_backup_last_timestamp_seconds${S})`, {
          legend: "{{site}} {{type}}",
          instant: true,
        }),
      ],
    })
      .dataLinks([siteDetailLink("label")])
      .thresholds(
        thresholds([
          { value: null, color: "green" },
          { value: 86400, color: "orange" },
          { value: 129600, color: "red" },
        ]),
      )
      .reduceOptions(lastValue())
      .displayMode(BarGaugeDisplayMode.Gradient)
      .orientation(VizOrientation.Horizontal),
  );

  d.withRow(new RowBuilder("Certificates, git deploys, on-demand backups and restores"));
  d.withPanel(
    panel(new BarGauge(), {
      title: "Certificates expiring soonest",
      description:
        "The ten certificates (A records of the DNS zones) with the least time left before they expire; orange within 14 days, red within 3.",
      unit: "s",
      w: 12,
      h: 10,
      targets: [
        q(`bottomk(10, sitehost_certificate_expiry_timestamp_seconds${S} - time())`, {
          legend: "{{domain}} ({{site}})",
          instant: true,
        }),
      ],
    })
      .dataLinks([siteDetailLink("label")])
      .thresholds(
        thresholds([
          { value: null, color: "red" },
          { value: 3 * 86400, color: "orange" },
          { value: 14 * 86400, color: "green" },
        ]),
      )
      .reduceOptions(lastValue())
      .displayMode(BarGaugeDisplayMode.Gradient)
      .orientation(VizOrientation.Horizontal),
  );
  d.withPanel(
    panel(new Stat(), {
      title: "Broken certificate records",
      description:
        "A records the platform flags as broken (no longer pointing at the platform, so their certificates cannot be renewed).",
      unit: "none",
      w: 4,
      h: 10,
      targets: [q(`count(sitehost_certificate_broken${S} == 1) or vector(0)`, { legend: "broken" })],
    })
      .reduceOptions(lastValue())
      .thresholds(upThresholds(1, 1)),
  );
  d.withPanel(
    panel(new Table(), {
      title: "Git deploys (failed first)",
      description:
        "The newest finished git deploy of every site enrolled in the git integration; failed deploys sort to the top.",
      unit: "none",
      w: 8,
      h: 10,
      targets: [q(`sort(sitehost_site_git_last_deploy_success${S})`, { table: true })],
    })
      .dataLinks([siteDetailLink("column")])
      .mappings([
        {
          type: MappingType.ValueToText,
          options: {
            "0": { text: "Failed", color: "red", index: 0 },
            "1": { text: "Deployed", color: "green", index: 1 },
          },
        },
      ])
      .withTransformation(organize("Last deploy", ["site_id"])),
  );
  d.withPanel(
    panel(new BarGauge(), {
      title: "On-demand backup slots used",
      description:
        "The ten sites and types (fs file system, db database) with the most on-demand backups, out of the 3 the platform allows per type; a full type refuses new on-demand backups and data transfers.",
      unit: "none",
      w: 12,
      h: 10,
      targets: [
        q(`topk(10, sitehost_site_ondemand_backups${S})`, { legend: "{{site}} {{type}}", instant: true }),
      ],
    })
      .dataLinks([siteDetailLink("label")])
      .min(0)
      .max(3)
      .thresholds(upThresholds(2, 3))
      .reduceOptions(lastValue())
      .displayMode(BarGaugeDisplayMode.Gradient)
      .orientation(VizOrientation.Horizontal),
  );
  d.withPanel(
    panel(new Stat(), {
      title: "Failed restores",
      description: "Failed restores across the newest page of every site's restore listing.",
      unit: "none",
      w: 4,
      h: 10,
      targets: [
        q(`sum(sitehost_site_restores${sel('state="failed"')}) or vector(0)`, { legend: "failed restores" }),
      ],
    })
      .reduceOptions(lastValue())
      .thresholds(upThresholds(1, 1)),
  );
  d.withPanel(
    panel(new Table(), {
      title: "Latest restore per site",
      description: "The state of each site's latest restore (in_progress, completed, failed, ...).",
      unit: "none",
      w: 8,
      h: 10,
      targets: [q(`sitehost_site_restore_last_state${S} == 1`, { table: true })],
    })
      .dataLinks([siteDetailLink("column")])
      .withTransformation(organize("Value", ["Value", "site_id"])),
  );

  d.withRow(new RowBuilder("Platform events (webhooks)"));
  d.withPanel(
    panel(new TimeSeries(), {
      title: "Platform events",
      description:
        "Webhook events the platform sent, per interval and event (needs webhooks.enabled). A hacked site and every *_failed event are drawn red; the events' log records say which site.",
      unit: "short",
      w: 24,
      targets: [
        q(`sum by (event) (increase(sitehost_events_total${S}[$__rate_interval]))`, { legend: "{{event}}" }),
      ],
    })
      .min(0)
      .drawStyle(GraphDrawStyle.Bars)
      .fillOpacity(80)
      .overrideByRegexp("site_hacked|.*_failed", [
        { id: "color", value: { mode: "fixed", fixedColor: "red" } },
      ]),
  );
  return finalize(d.build());
}
