/**
 * The SLO rules, generated from the `slos` section: recording rules for the SLIs of every site over
 * each window (sliRules.ts, windows.ts), and multi-window multi-burn-rate alerts (the SRE workbook's
 * scheme) with a low-traffic guard. The objectives are not in the rules but in each site's
 * `sitehost_site_slo_objective_ratio` series, so the rules do not grow with the sites or the
 * overrides. The Helm chart renders the same rules from its values (templates/_slo.tpl); a test
 * renders both and compares them.
 */
import { probeGroupingLabels, thresholdsInUse, type SlosConfig } from "../config/slos.js";
import { runbookUrl } from "../util/runbook.js";
import { errorsRecord, OBJECTIVE, requestsRecord, siteBy, sliRules, type RecordingRule } from "./sliRules.js";
import { planWindows, SLOW_INTERVAL } from "./windows.js";

export type { RecordingRule } from "./sliRules.js";

export interface AlertingRule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}
export interface RuleGroup {
  name: string;
  /** Absent: Prometheus's global evaluation interval. */
  interval?: string;
  rules: Array<RecordingRule | AlertingRule>;
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

/** Error ratio over `w` above `burnRate` times the budget of the site's `objective` (its own by default). */
function burning(slo: string, w: string, burnRate: number, on: string, objective = slo): string {
  const sel = `{slo="${slo}"}`;
  return `${errorsRecord(w)}${sel} / ${requestsRecord(w)}${sel} > on (${on}) (${burnRate} * (1 - max by (${on}) (${OBJECTIVE}{slo="${objective}"})))`;
}

type AlertClass = SlosConfig["alerts"][string];
type BurnWindow = AlertClass["windows"][number];

/** Every window of every alert class, the classes in name order. */
function classWindows(slos: SlosConfig): Array<{ name: string; cls: AlertClass; w: BurnWindow }> {
  return Object.keys(slos.alerts)
    .sort()
    .flatMap((name) => {
      const cls = slos.alerts[name] as AlertClass;
      return cls.windows.map((w) => ({ name, cls, w }));
    });
}

/**
 * An alert's condition: the SLI burns at `w`'s rate over both its windows, matched `on` these labels,
 * with at least `min` errors in the long one (the low-traffic guard).
 */
function burnCondition(slo: string, w: BurnWindow, on: string, min: number, objective = slo): string[] {
  return [
    burning(slo, w.long, w.burnRate, on, objective),
    `and on (${on}) ${burning(slo, w.short, w.burnRate, on, objective)}`,
    `and on (${on}) ${errorsRecord(w.long)}{slo="${slo}"} >= ${min}`,
  ];
}

const PROBE_ALERT = "SitehostSiteProbeBudgetBurn";

/**
 * Probes failing at a burn rate, by the site's traffic over the long window. Quiet: its logs counted
 * too few requests for the log-based alert's guard even at that burn rate (or none: logs off), so the
 * probes are the only word on it and alert with the class's severity. Busy: the log-based alert speaks
 * for the visitors who reach the origin; the probes see what the logs cannot (DNS, certificates, the
 * edge) or a prober's own trouble, and alert with `slos.probes.busySeverity`.
 */
function probeAlertRules(slos: SlosConfig): AlertingRule[] {
  // On the site alone: compared with the availability objective, the probe SLI keeps no `slo` label.
  const by = siteBy(slos.groupingLabels);
  const rules: AlertingRule[] = [];
  for (const { name, cls, w } of classWindows(slos)) {
    // Requests the logs counted, times the share this burn rate would fail: enough for their guard.
    const busy = `${requestsRecord(w.long)}{slo="availability"} * on (${by}) (${w.burnRate} * (1 - max by (${by}) (${OBJECTIVE}{slo="availability"}))) >= ${slos.minFailedRequests}`;
    const failing = burnCondition("probe", w, by, slos.probes.minFailedProbes, "availability");
    for (const traffic of ["quiet", "busy"] as const) {
      rules.push({
        alert: PROBE_ALERT,
        expr: [...failing, `${traffic === "quiet" ? "unless" : "and"} on (${by}) (${busy})`].join("\n"),
        ...(w.for ? { for: w.for } : {}),
        labels: {
          severity: traffic === "quiet" ? cls.severity : slos.probes.busySeverity,
          class: name,
          long: w.long,
          short: w.short,
          slo: "probe",
          traffic,
        },
        annotations: {
          summary: "Site {{ $labels.site }} fails its probes from outside.",
          description: `Probes of site {{ $labels.site }} (id {{ $labels.site_id }}) failed {{ $value | humanizePercentage }} of the time over the last ${w.long}, and still over the last ${w.short}: at least ${w.burnRate} times the rate its availability objective allows. ${
            traffic === "quiet"
              ? "Its logs counted too few requests over that time to alert on their own: the probes are the only word on it."
              : "Its logs count enough requests to alert on their own (SitehostSiteAvailabilityBudgetBurn): the probes see what they cannot (DNS, the certificate, the edge), or the prober is in trouble."
          }`,
          runbook_url: runbookUrl(PROBE_ALERT),
        },
      });
    }
  }
  return rules;
}

function alertRules(slos: SlosConfig): AlertingRule[] {
  const on = `${siteBy(slos.groupingLabels)}, slo`;
  const rules: AlertingRule[] = [];
  for (const sli of SLIS) {
    for (const { name, cls, w } of classWindows(slos)) {
      rules.push({
        alert: sli.alert,
        expr: burnCondition(sli.slo, w, on, slos.minFailedRequests).join("\n"),
        ...(w.for ? { for: w.for } : {}),
        labels: { severity: cls.severity, class: name, long: w.long, short: w.short },
        annotations: {
          summary: sli.summary,
          description: `Site {{ $labels.site }} (id {{ $labels.site_id }}) ${sli.what} for {{ $value | humanizePercentage }} of its requests over the last ${w.long}, and still over the last ${w.short}: at least ${w.burnRate} times the rate its objective allows.`,
          runbook_url: runbookUrl(sli.alert),
        },
      });
    }
  }
  return rules;
}

export function sloRuleGroups(slos: SlosConfig): RuleGroup[] {
  const planned = planWindows(slos.windows, slos.period);
  const thresholds = thresholdsInUse(slos);
  const probes = slos.probes.enabled
    ? { probeBy: [...probeGroupingLabels(slos), "site_id"].join(", ") }
    : undefined;
  const rulesOf = (fast: boolean) =>
    planned
      .filter((p) => p.fast === fast)
      .flatMap((p) => sliRules(p, slos.groupingLabels, thresholds, probes));
  const slow = rulesOf(false);
  return [
    { name: "sitehost-slo-sli", rules: rulesOf(true) },
    ...(slow.length > 0 ? [{ name: "sitehost-slo-sli-long", interval: SLOW_INTERVAL, rules: slow }] : []),
    {
      name: "sitehost-slo-alerts",
      rules: [...alertRules(slos), ...(slos.probes.enabled ? probeAlertRules(slos) : [])],
    },
  ];
}
