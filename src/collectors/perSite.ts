import type { CollectorSetName, SiteCollector } from "./types.js";

/** A per-site collector without memory: it costs `requestsPerSite` for every selected site. */
export function perSite<I, N extends CollectorSetName>(
  c: Omit<SiteCollector<I>, "scope" | "requestsPerRun" | "name"> & { name: N },
): SiteCollector<I> & { name: N } {
  return { ...c, scope: "site", requestsPerRun: (sites) => sites.length * c.requestsPerSite };
}
