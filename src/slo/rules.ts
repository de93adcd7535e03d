/**
 * The SLO rules, generated from the `slos` section: recording rules for the SLIs of every site over
 * each window (sliRules.ts, windows.ts), and multi-window multi-burn-rate alerts (the SRE workbook's
 * scheme) with a low-traffic guard. The objectives are not in the rules but in each site's
 * `sitehost_site_slo_objective_ratio` series, so the rules do not grow with the sites or the
 * overrides. The Helm chart renders the same rules from its values (templates/_slo.tpl); a test
 * renders both and compares them.
 */
import { thresholdsInUse, type SlosConfig } from "../config/slos.js";
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

/** Error ratio over `w` above `burnRate` times the site's budget. */
function burning(slo: string, w: string, burnRate: number, on: string): string {
  const sel = `{slo="${slo}"}`;
  return `${errorsRecord(w)}${sel} / ${requestsRecord(w)}${sel} > on (${on}) (${burnRate} * (1 - max by (${on}) (${OBJECTIVE}${sel})))`;
}

function alertRules(slos: SlosConfig): AlertingRule[] {
  const on = `${siteBy(slos.groupingLabels)}, slo`;
  const rules: AlertingRule[] = [];
  const classes = Object.keys(slos.alerts).sort();
  for (const sli of SLIS) {
    for (const name of classes) {
      const cls = slos.alerts[name] as SlosConfig["alerts"][string];
      for (const w of cls.windows) {
        rules.push({
          alert: sli.alert,
          expr: [
            burning(sli.slo, w.long, w.burnRate, on),
            `and on (${on}) ${burning(sli.slo, w.short, w.burnRate, on)}`,
            `and on (${on}) ${errorsRecord(w.long)}{slo="${sli.slo}"} >= ${slos.minFailedRequests}`,
          ].join("\n"),
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
  }
  return rules;
}

export function sloRuleGroups(slos: SlosConfig): RuleGroup[] {
  const planned = planWindows(slos.windows, slos.period);
  const thresholds = thresholdsInUse(slos);
  const rulesOf = (fast: boolean) =>
    planned.filter((p) => p.fast === fast).flatMap((p) => sliRules(p, slos.groupingLabels, thresholds));
  const slow = rulesOf(false);
  return [
    { name: "sitehost-slo-sli", rules: rulesOf(true) },
    ...(slow.length > 0 ? [{ name: "sitehost-slo-sli-long", interval: SLOW_INTERVAL, rules: slow }] : []),
    { name: "sitehost-slo-alerts", rules: alertRules(slos) },
  ];
}
