/**
 * The SLI recording rules, per site (`by` the grouping labels, site_id and site), objective (`slo`) and
 * recorded window W (windows.ts says which are read from the raw counters and which are summed from
 * shorter recorded ones):
 *
 *   sitehost_site_slo:requests:increaseW  requests the SLI counts
 *   sitehost_site_slo:errors:increaseW    of those, the bad ones (5xx; slower than the threshold)
 *
 * The latency SLI reads one bucket per site: the one of its own threshold. Each threshold in use (the
 * default's and the overrides') reads its bucket for the sites whose objective series names it
 * (`threshold_seconds`), so a site's good requests never come from another site's bound and no rule
 * reads the other buckets.
 *
 * The probe SLI (`slo="probe"`) counts blackbox_exporter's probes of the targets /sd/probes lists:
 * each probe a request, each failed one an error. Its series are blackbox_exporter's (its job, the
 * probed URL as the instance), so they are summed by site_id and the labels they share with the
 * exporter's, then given the site's own labels from its availability objective series: a site without
 * an availability objective has no probe SLI.
 */
import { durationMs } from "../config/duration.js";
import type { PlannedWindow, WindowSource } from "./windows.js";

export interface RecordingRule {
  record: string;
  expr: string;
  labels: Record<string, string>;
}

export const RESPONSES = "sitehost_site_http_responses_total";
export const DURATION = "sitehost_site_http_request_duration_seconds";
export const OBJECTIVE = "sitehost_site_slo_objective_ratio";
/** The probes of the targets /sd/probes lists (they, and only they, carry site_id). */
export const PROBE = 'probe_success{site_id!=""}';

export const requestsRecord = (w: string) => `sitehost_site_slo:requests:increase${w}`;
export const errorsRecord = (w: string) => `sitehost_site_slo:errors:increase${w}`;

/**
 * The bucket of a bound, whichever way the scraping Prometheus writes its `le`: as exposed (`1`), or
 * normalised to a float (`1.0`), as Prometheus 3 does.
 */
export function bucketMatcher(seconds: string): string {
  return Number.isInteger(Number(seconds)) ? `le=~"${seconds}|${seconds}.0"` : `le="${seconds}"`;
}

/** `by` of every SLI: the grouping labels, then the site. */
export function siteBy(groupingLabels: readonly string[]): string {
  return [...groupingLabels, "site_id", "site"].join(", ");
}

function rawRules(w: string, by: string, thresholds: readonly string[]): RecordingRule[] {
  const availability = { slo: "availability" };
  const latency = { slo: "latency" };
  const good = thresholds
    .map(
      (t) =>
        `sum by (${by}) (increase(${DURATION}_bucket{${bucketMatcher(t)}}[${w}])) and on (${by}) ${OBJECTIVE}{slo="latency", threshold_seconds="${t}"}`,
    )
    .join("\n  or ");
  const rules: RecordingRule[] = [
    {
      record: requestsRecord(w),
      expr: `sum by (${by}) (increase(${RESPONSES}[${w}]))`,
      labels: availability,
    },
    {
      record: errorsRecord(w),
      // A site without any 5xx series has none: 0, not nothing (its requests, just recorded, times 0).
      expr: `sum by (${by}) (increase(${RESPONSES}{status_class="5xx"}[${w}])) or sum by (${by}) (${requestsRecord(w)}{slo="availability"}) * 0`,
      labels: availability,
    },
    {
      record: requestsRecord(w),
      expr: `sum by (${by}) (increase(${DURATION}_count[${w}]))`,
      labels: latency,
    },
  ];
  // No latency objective anywhere: no latency errors to record.
  if (good !== "") {
    rules.push({
      record: errorsRecord(w),
      expr: `sum by (${by}) (${requestsRecord(w)}{slo="latency"})\n- (\n  ${good}\n)`,
      labels: latency,
    });
  }
  return rules;
}

/** Where the probe SLI is recorded: the labels to sum probes by (site_id last), the sites' `by`. */
export interface ProbeSli {
  probeBy: string;
}

function probeRules(w: string, by: string, { probeBy }: ProbeSli): RecordingRule[] {
  // 1 per site with an availability objective, labelled as the exporter's series of the site.
  const sites = `(0 * max by (${by}) (${OBJECTIVE}{slo="availability"}) + 1)`;
  const perSite = (probes: string) => `sum by (${probeBy}) (${probes})
* on (${probeBy}) group_right ()
${sites}`;
  const labels = { slo: "probe" };
  return [
    { record: requestsRecord(w), expr: perSite(`count_over_time(${PROBE}[${w}])`), labels },
    {
      record: errorsRecord(w),
      // probe_success is 1 or 0: the failed ones are the count less the sum.
      expr: perSite(`count_over_time(${PROBE}[${w}]) - sum_over_time(${PROBE}[${w}])`),
      labels,
    },
  ];
}

/**
 * A window summed from a recorded base. Sampled every 30 s (over the divisor), the sum is current.
 * One per step, the steps fall on whole multiples of the step since the epoch, so the sum ends at the
 * last of them: the time since (`time() % step`) is added as that share of the base's latest value,
 * which keeps the window current and gives it a value before its first whole step.
 */
function summedRules(
  w: string,
  source: Extract<WindowSource, { kind: "sum" }>,
  probes: ProbeSli | undefined,
): RecordingRule[] {
  const { base, step, divisor } = source;
  const stepS = durationMs(step) / 1000;
  const slos = probes ? ["availability", "latency", "probe"] : ["availability", "latency"];
  return slos.flatMap((slo) =>
    [requestsRecord, errorsRecord].map((name) => {
      const latest = `${name(base)}{slo="${slo}"}`;
      const sum = `sum_over_time(${latest}[${w}:${step}])`;
      const since = `${latest} * (time() % ${stepS}) / ${stepS}`;
      return {
        record: name(w),
        expr: divisor === 1 ? `${sum} + ${since}\nor ${since}` : `${sum} / ${divisor}`,
        labels: { slo },
      };
    }),
  );
}

export function sliRules(
  planned: PlannedWindow,
  groupingLabels: readonly string[],
  thresholds: readonly string[],
  probes?: ProbeSli,
): RecordingRule[] {
  const { window, source } = planned;
  if (source.kind !== "raw") return summedRules(window, source, probes);
  const by = siteBy(groupingLabels);
  return [...rawRules(window, by, thresholds), ...(probes ? probeRules(window, by, probes) : [])];
}
