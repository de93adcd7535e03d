/**
 * The SLO rules, generated from the `slos` section: recording rules for the SLIs of every site over
 * each window, and multi-window multi-burn-rate alerts (the SRE workbook's scheme) with a low-traffic
 * guard. The objectives are not in the rules but in each site's `sitehost_site_slo_objective_ratio`
 * series, so the rules do not grow with the sites or the overrides. The Helm chart renders the same
 * rules from its values (templates/_slo.tpl); a test renders both and compares them.
 *
 * Recorded per site, objective (`slo`) and window W (each of slos.windows, and slos.period for the
 * error budget left):
 *   sitehost_site_slo:requests:increaseW  requests the SLI counts
 *   sitehost_site_slo:errors:increaseW    of those, the bad ones (5xx; slower than the threshold)
 */
import type { SlosConfig } from "../config/slos.js";

export interface RecordingRule {
  record: string;
  expr: string;
  labels: Record<string, string>;
}
export interface AlertingRule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}
export interface RuleGroup {
  name: string;
  rules: Array<RecordingRule | AlertingRule>;
}

export const RUNBOOK_BASE =
  "https://github.com/sitehost-exporter/sitehost-exporter/blob/main/docs/runbook.md#";

/** Per site, kept apart per exporter (and cluster), as the dashboards select them. */
const BY = "cluster, job, instance, site_id, site";
const RESPONSES = "sitehost_site_http_responses_total";
const DURATION = "sitehost_site_http_request_duration_seconds";
const OBJECTIVE = "sitehost_site_slo_objective_ratio";

export const requestsRecord = (w: string) => `sitehost_site_slo:requests:increase${w}`;
export const errorsRecord = (w: string) => `sitehost_site_slo:errors:increase${w}`;

function sliRules(w: string): RecordingRule[] {
  const availability = { slo: "availability" };
  const latency = { slo: "latency" };
  return [
    {
      record: requestsRecord(w),
      expr: `sum by (${BY}) (increase(${RESPONSES}[${w}]))`,
      labels: availability,
    },
    {
      record: errorsRecord(w),
      // A site without any 5xx series has none: 0, not nothing.
      expr: `sum by (${BY}) (increase(${RESPONSES}{status_class="5xx"}[${w}])) or sum by (${BY}) (increase(${RESPONSES}[${w}])) * 0`,
      labels: availability,
    },
    {
      record: requestsRecord(w),
      expr: `sum by (${BY}) (increase(${DURATION}_count[${w}]))`,
      labels: latency,
    },
    {
      record: errorsRecord(w),
      // Good: the bucket of the site's own threshold (its objective's le); sites without a latency
      // objective get no series.
      expr: `sum by (${BY}) (increase(${DURATION}_count[${w}])) - sum by (${BY}) (increase(${DURATION}_bucket[${w}]) and on (site_id, le) ${OBJECTIVE}{slo="latency"})`,
      labels: latency,
    },
  ];
}

const SLIS = [
  {
    slo: "availability",
    alert: "SitehostSiteAvailabilityBudgetBurn",
    what: "answers 5xx",
    summary: "Site {{ $labels.site }} is spending its availability error budget too fast.",
  },
  {
    slo: "latency",
    alert: "SitehostSiteLatencyBudgetBurn",
    what: "serves slower than its latency threshold",
    summary: "Site {{ $labels.site }} is spending its latency error budget too fast.",
  },
] as const;

/** Error ratio over `w` above `burnRate` times the site's budget. */
function burning(slo: string, w: string, burnRate: number): string {
  const sel = `{slo="${slo}"}`;
  return `${errorsRecord(w)}${sel} / ${requestsRecord(w)}${sel} > on (site_id, slo) group_left () (${burnRate} * (1 - max by (site_id, slo) (${OBJECTIVE}${sel})))`;
}

function alertRules(slos: SlosConfig): AlertingRule[] {
  const rules: AlertingRule[] = [];
  const classes = Object.keys(slos.alerts).sort();
  for (const sli of SLIS) {
    for (const name of classes) {
      const cls = slos.alerts[name] as SlosConfig["alerts"][string];
      for (const w of cls.windows) {
        const sel = `{slo="${sli.slo}"}`;
        rules.push({
          alert: sli.alert,
          expr: [
            burning(sli.slo, w.long, w.burnRate),
            `and on (site_id, slo) ${burning(sli.slo, w.short, w.burnRate)}`,
            `and on (site_id, slo) ${errorsRecord(w.long)}${sel} >= ${slos.minFailedRequests}`,
          ].join("\n"),
          ...(w.for ? { for: w.for } : {}),
          labels: { severity: cls.severity, class: name, long: w.long, short: w.short },
          annotations: {
            summary: sli.summary,
            description: `Site {{ $labels.site }} (id {{ $labels.site_id }}) ${sli.what} for {{ $value | humanizePercentage }} of its requests over the last ${w.long}, and still over the last ${w.short}: at least ${w.burnRate} times the rate its objective allows.`,
            runbook_url: `${RUNBOOK_BASE}${sli.alert.toLowerCase()}`,
          },
        });
      }
    }
  }
  return rules;
}

/** The alert windows, then the budget's period (the dashboards' budget left) unless it is one of them. */
export function recordedWindows(slos: SlosConfig): string[] {
  return slos.windows.includes(slos.period) ? slos.windows : [...slos.windows, slos.period];
}

export function sloRuleGroups(slos: SlosConfig): RuleGroup[] {
  return [
    { name: "sitehost-slo-sli", rules: recordedWindows(slos).flatMap((w) => sliRules(w)) },
    { name: "sitehost-slo-alerts", rules: alertRules(slos) },
  ];
}
