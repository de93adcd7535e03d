/**
 * A gauge whose series are asked of their owners at each scrape instead of being kept. Thousands of
 * log streams each have a lag and a last read; as prom-client series they cost about 250 bytes each
 * (a labels object and a key string, per series), while the streams already hold the numbers.
 */
import { Gauge, type LabelValues, type Registry } from "prom-client";

export type SeriesSink<L extends string> = (labels: LabelValues<L>, value: number) => void;

/** Whatever holds some of the gauge's series: it names each with its value when asked. */
export interface SeriesSource<L extends string> {
  series(emit: SeriesSink<L>): void;
}

export class ReadGauge<L extends string> extends Gauge<L> {
  private readonly sources = new Set<SeriesSource<L>>();

  constructor(spec: { name: string; help: string; labelNames: readonly L[] }, registry: Registry) {
    super({ ...spec, registers: [registry] });
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
}
