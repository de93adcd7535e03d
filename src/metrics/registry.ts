import type { Registry } from "prom-client";

/** Get-or-create a metric, so several components (tests, benchmarks) can share one registry. */
export function getOrCreate<T>(registry: Registry, name: string, create: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? create();
}
