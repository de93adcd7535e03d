/** The unit collectors produce and the metric store keeps. */
import type { MetricName } from "./families.js";

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
}

export type HistogramSuffix = "_bucket" | "_sum" | "_count";

export type MetricType = "gauge" | "counter" | "stateset" | "info" | "histogram";

/** Static description of a published metric family (drives HELP/TYPE and docs/metrics.md). */
export interface MetricFamily<N extends string = string> {
  name: N;
  help: string;
  /** `info` and `stateset` are exposed as gauges (Prometheus text format). */
  type: MetricType;
  /** Label names beyond site_id and site, in order. */
  labels: readonly string[];
  /** Whether the series carry site_id and site. */
  perSite: boolean;
  /** Collector that produces it (for `metrics.exclude` and docs). */
  collector: string;
  /** Source endpoint, for docs. */
  source: string;
}
