/** The unit collectors produce and the metric store keeps. */
export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  /** Full metric name, e.g. `sitehost_site_storage_used_bytes`. */
  name: string;
  labels: Labels;
  value: number;
}

export type MetricType = "gauge" | "counter" | "stateset" | "info";

/** Static description of a published metric family (drives HELP/TYPE and docs/metrics.md). */
export interface MetricFamily {
  name: string;
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
