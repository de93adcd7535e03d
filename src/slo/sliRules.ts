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

/**
 * A window summed from a recorded base. Sampled every 30 s (over the divisor), the sum is current.
 * One per step, the steps fall on whole multiples of the step since the epoch, so the sum ends at the
 * last of them: the time since (`time() % step`) is added as that share of the base's latest value,
 * which keeps the window current and gives it a value before its first whole step.
 */
function summedRules(w: string, source: Extract<WindowSource, { kind: "sum" }>): RecordingRule[] {
  const { base, step, divisor } = source;
  const stepS = durationMs(step) / 1000;
  return ["availability", "latency"].flatMap((slo) =>
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
): RecordingRule[] {
  const { window, source } = planned;
  return source.kind === "raw"
    ? rawRules(window, siteBy(groupingLabels), thresholds)
    : summedRules(window, source);
}
