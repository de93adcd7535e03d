/** What a metric family is: its name, type, labels and where it comes from. */

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
