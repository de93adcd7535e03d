/**
 * A per-site collector whose sites are asked less often while their answers stay the same
 * (changeBackoff.ts): a site not due keeps its last samples. What it costs: at the next run, what the
 * collector costs over the sites due; at steady state, each site's share of the runs.
 */
import type { Site } from "../api/schemas.js";
import type { SourcedApi } from "../api/sourced.js";
import { ChangeBackoff, type ChangeBackoffSettings } from "./changeBackoff.js";
import type { CollectorSetName, SiteCollector, Wakeable } from "./types.js";

export function backingOff<I, N extends CollectorSetName>(
  inner: SiteCollector<I> & { name: N },
  settings: ChangeBackoffSettings,
  now: () => number,
): SiteCollector<I> & { name: N } & Wakeable {
  const backoff = new ChangeBackoff(settings);
  const due = (site: Site, nowMs: number) =>
    backoff.due(site.id, nowMs) && (inner.due?.(site, nowMs) ?? true);
  const wrapped: SiteCollector<I> & { name: N } & Wakeable = {
    scope: "site",
    name: inner.name,
    requestsPerSite: inner.requestsPerSite,
    due,
    requestsPerRun(sites: readonly Site[]): number {
      const at = now();
      return inner.requestsPerRun(sites.filter((s) => backoff.dueNext(s.id, at)));
    },
    plannedRequestsPerRun(sites: readonly Site[]): number {
      let sum = 0;
      for (const site of sites) {
        const one = inner.plannedRequestsPerRun?.([site]) ?? inner.requestsPerRun([site]);
        sum += one * backoff.share(site.id);
      }
      return sum;
    },
    async fetch(api: SourcedApi, site: Site, signal: AbortSignal): Promise<I> {
      const input = await inner.fetch(api, site, signal);
      backoff.answered(site.id, input, now());
      return input;
    },
    collect: (site, input, nowMs) => inner.collect(site, input, nowMs),
    wake(siteId: number | undefined): void {
      if (siteId === undefined) backoff.wakeAll();
      else backoff.wake(siteId);
    },
    summary(sites: readonly Site[], nowMs: number) {
      const selected = new Set(sites.map((s) => s.id));
      backoff.retain((key) => selected.has(key as number));
      return inner.summary?.(sites, nowMs) ?? [];
    },
  };
  if (inner.commit) wrapped.commit = () => inner.commit?.() ?? Promise.resolve();
  if (inner.resume) wrapped.resume = () => inner.resume?.() ?? Promise.resolve();
  return wrapped;
}
