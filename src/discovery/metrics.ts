/** Discovery's own gauges: whether the platform answered, and how many sites were selected. */
import type { Registry } from "prom-client";
import { gauge } from "../metrics/selfMetric.js";

export function discoveryMetrics(registry: Registry) {
  return {
    up: gauge(registry, {
      name: "sitehost_up",
      help: "1 when the last token request and site discovery worked.",
    }),
    sitesDiscovered: gauge(registry, {
      name: "sitehost_exporter_sites_discovered",
      help: "Sites selected by the last discovery (after filters and sharding).",
    }),
  };
}

export type DiscoveryMetrics = ReturnType<typeof discoveryMetrics>;
