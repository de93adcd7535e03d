/**
 * A gauge whose series are asked of their owners at each scrape instead of being kept. Thousands of
 * log streams each have a lag and a last read; as prom-client series they cost about 250 bytes each
 * (a labels object and a key string, per series), while the streams already hold the numbers.
 *
 * Rendered by prom-client, each series would also cost about ten short-lived objects per scrape (its
 * labels formatted into an array, joined, then the line), tens of megabytes at every scrape of
 * 5,000 sites: the exporter's registry (`SelfRegistry`) asks the gauge for its text instead, which
 * writes each line once. The text is what prom-client renders, line for line.
 */
import { Gauge, Registry, type LabelValues, type Metric } from "prom-client";
import { writtenText, type ChunkWriter } from "./gzipMembers.js";
import { openMetricsHeader, type ExpositionFormat } from "./openMetrics.js";
import { escapeHelp, escapeLabelValue, formatValue } from "./render.js";

export type SeriesSink<L extends string> = (labels: LabelValues<L>, value: number) => void;

/** Whatever holds some of the gauge's series: it names each with its value when asked. */
export interface SeriesSource<L extends string> {
  series(emit: SeriesSink<L>): void;
}

/** A sample value as prom-client writes it: as the store does, but NaN as `Nan`. */
const valueText = (value: number): string => (Number.isNaN(value) ? "Nan" : formatValue(value));

export class ReadGauge<L extends string> extends Gauge<L> {
  private readonly sources = new Set<SeriesSource<L>>();
  private readonly spec: { name: string; help: string };

  constructor(spec: { name: string; help: string; labelNames: readonly L[] }, registry: Registry) {
    super({ ...spec, registers: [registry] });
    this.spec = { name: spec.name, help: spec.help };
  }

  add(source: SeriesSource<L>): void {
    this.sources.add(source);
  }

  delete(source: SeriesSource<L>): void {
    this.sources.delete(source);
  }

  /** The metric as prom-client renders it (name, help, type; it holds no series), with the sources' series. */
  override async get(): ReturnType<Gauge<L>["get"]> {
    const metric = await super.get();
    const values: typeof metric.values = [];
    const emit: SeriesSink<L> = (labels, value) => void values.push({ labels, value });
    for (const source of this.sources) source.series(emit);
    return { ...metric, values };
  }

  /**
   * The family written straight into the exposition: its header (`format`'s), then a line per series,
   * each written once (tens of thousands at every scrape of thousands of sites).
   */
  write(out: ChunkWriter, format: ExpositionFormat = "text"): void {
    const { name, help } = this.spec;
    out.text(
      format === "text"
        ? `# HELP ${name} ${escapeHelp(help)}\n# TYPE ${name} gauge\n`
        : openMetricsHeader(name, help, "gauge"),
    );
    const emit: SeriesSink<L> = (labels, value) => {
      out.text(name);
      let first = true;
      for (const key in labels) {
        const v = labels[key as L];
        out.text(first ? "{" : ",");
        out.text(key);
        out.text('="');
        out.text(typeof v === "string" ? escapeLabelValue(v) : String(v));
        out.text('"');
        first = false;
      }
      out.text(first ? " " : "} ");
      out.number(value, valueText);
      out.line();
    };
    for (const source of this.sources) source.series(emit);
  }

  /** The family in the text format as prom-client renders it (no newline after the last line). */
  text(): string {
    return writtenText((out) => this.write(out)).slice(0, -1);
  }
}

/** prom-client's own per-family rendering, which `SelfRegistry` replaces for the gauges read at each scrape. */
declare module "prom-client" {
  interface Registry {
    getMetricsAsString(metric: Metric): Promise<string>;
  }
}

/**
 * The exporter's registry: prom-client's, with the gauges read at each scrape rendering their own
 * text, and what the exposition needs to write those straight into its body (`besideReadGauges`,
 * `readGauges`).
 */
export class SelfRegistry extends Registry {
  override getMetricsAsString(metric: Metric): Promise<string> {
    return metric instanceof ReadGauge && this.contentType === Registry.PROMETHEUS_CONTENT_TYPE
      ? Promise.resolve(metric.text())
      : super.getMetricsAsString(metric);
  }

  /** Every other metric, as `metrics()` renders them in the text format. */
  async besideReadGauges(): Promise<string> {
    const others = (this.getMetricsAsArray() as unknown as Metric[]).filter((m) => !(m instanceof ReadGauge));
    const texts = await Promise.all(others.map((metric) => super.getMetricsAsString(metric)));
    return texts.length === 0 ? "" : `${texts.join("\n\n")}\n`;
  }

  readGauges(): Array<ReadGauge<string>> {
    return (this.getMetricsAsArray() as unknown as Metric[]).filter(
      (metric): metric is ReadGauge<string> => metric instanceof ReadGauge,
    );
  }
}
