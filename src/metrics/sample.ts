/** The unit collectors produce and the metric store keeps. */
import type { MetricName } from "./families.js";
import type { HistogramSuffix } from "./family.js";

export type Labels = Readonly<Record<string, string>>;

/**
 * One series value. `N` is the set of family names it may carry: by default the families of
 * src/metrics/families.ts, so a misspelt or unknown metric name does not compile.
 */
export interface Sample<N extends string = MetricName> {
  /** Full metric name, e.g. `sitehost_site_storage_used_bytes`. */
  name: N;
  labels: Labels;
  value: number;
  /** A histogram's series: `_bucket` (with an `le` label), `_sum` or `_count` after the family's name. */
  suffix?: HistogramSuffix;
  /**
   * A recent event this series counted, shown in OpenMetrics only and only on a counter's series or a
   * histogram's `_bucket` (where OpenMetrics allows one).
   */
  exemplar?: Exemplar;
}

/** Labels (128 characters in all at most), the event's value and when it happened. */
export interface Exemplar {
  labels: Labels;
  value: number;
  timestampMs?: number;
}

export type { HistogramSuffix, MetricFamily, MetricType } from "./family.js";
