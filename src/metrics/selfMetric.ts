/**
 * The exporter's own metrics (prom-client), declared one way: `counter`, `gauge` or `histogram` with
 * a name, help and label names, got from the registry when a component already declared it (several
 * components, tests and benchmarks share one registry), created on it otherwise. Published families
 * about sites and the account are not declared here: they are data (src/metrics/families.ts).
 */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import { ReadGauge } from "./readGauge.js";

export interface SelfMetricSpec<L extends string> {
  /** Full name, `sitehost_` or `sitehost_exporter_` first. */
  name: string;
  help: string;
  labelNames?: readonly L[];
}

function existing<T>(registry: Registry, name: string): T | undefined {
  return registry.getSingleMetric(name) as T | undefined;
}

export function counter<L extends string = never>(registry: Registry, spec: SelfMetricSpec<L>): Counter<L> {
  return (
    existing<Counter<L>>(registry, spec.name) ??
    new Counter<L>({ ...spec, labelNames: spec.labelNames ?? [], registers: [registry] })
  );
}

export function gauge<L extends string = never>(
  registry: Registry,
  spec: SelfMetricSpec<L> & {
    /** Sets the value(s) at each scrape. */
    collect?: (this: Gauge<L>) => void;
  },
): Gauge<L> {
  return (
    existing<Gauge<L>>(registry, spec.name) ??
    new Gauge<L>({ ...spec, labelNames: spec.labelNames ?? [], registers: [registry] })
  );
}

/** A gauge whose series its sources name at each scrape (see ReadGauge). */
export function readGauge<L extends string>(
  registry: Registry,
  spec: SelfMetricSpec<L> & { labelNames: readonly L[] },
): ReadGauge<L> {
  const found = registry.getSingleMetric(spec.name);
  if (found === undefined) return new ReadGauge<L>(spec, registry);
  if (found instanceof ReadGauge) return found as ReadGauge<L>;
  throw new Error(`${spec.name} is already declared as another kind of metric`);
}

export function histogram<L extends string = never>(
  registry: Registry,
  spec: SelfMetricSpec<L> & { buckets: number[] },
): Histogram<L> {
  return (
    existing<Histogram<L>>(registry, spec.name) ??
    new Histogram<L>({ ...spec, labelNames: spec.labelNames ?? [], registers: [registry] })
  );
}
