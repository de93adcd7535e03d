/**
 * One run of a per-site or an account-level collector: what it fetched goes into the store, site by
 * site. A per-site run keeps a bounded number of sites in flight and isolates failures per site (a
 * failing site keeps its last good samples); a 404 goes to the 404 policy (notFound.ts).
 */
import type { Logger } from "pino";
import { errorReason } from "../api/errors.js";
import type { Site } from "../api/schemas.js";
import type { SourcedApi } from "../api/sourced.js";
import type { AccountCollector, RunResult, SiteCollector } from "../collectors/types.js";
import type { SiteDiscovery } from "../discovery/discovery.js";
import type { Sample } from "../metrics/sample.js";
import type { MetricStore } from "../metrics/store.js";
import { forEachLimited } from "../util/pool.js";
import { isNotFound, settleNotFound } from "./notFound.js";
import type { FailureLog, SiteFailures } from "./failureLog.js";
import type { CollectorSelfMetrics } from "./selfMetrics.js";

/** What a run came to, with the error that failed it (of the run, or of its first site when every site failed). */
export interface SettledRun {
  result: RunResult;
  error?: unknown;
}

/** Called with what a per-site collector published for a site. */
export type SiteCollectedListener = (collector: string, site: Site, samples: readonly Sample[]) => void;

export interface RunContext {
  /** The API bound to the collector's name in the request budget. */
  api: SourcedApi;
  store: MetricStore;
  discovery: Pick<SiteDiscovery, "sites" | "has" | "confirmGone">;
  metrics: Pick<CollectorSelfMetrics, "siteErrors">;
  log: Logger;
  /** Says failures once per cause. */
  failures: Pick<FailureLog, "sitesFailed">;
  signal: AbortSignal;
  now: () => number;
  /** Sites of one run in flight at once. */
  siteConcurrency: number;
  onSiteCollected?: SiteCollectedListener;
}

/**
 * A per-site run over the sites due (every selected site, unless the collector says which). A
 * collector that commits what it fetched has the run's samples published only after the commit.
 */
export async function runSiteCollector(collector: SiteCollector, ctx: RunContext): Promise<SettledRun> {
  const { api, discovery, signal } = ctx;
  const startedAt = ctx.now();
  const sites = discovery.sites.filter((site) => collector.due?.(site, startedAt) ?? true);
  const held: Array<[Site, Sample[]]> = [];
  const publish = (site: Site, samples: Sample[]) => {
    if (!discovery.has(site.id)) return; // removed meanwhile
    ctx.store.replaceSite(collector.name, String(site.id), samples);
    ctx.onSiteCollected?.(collector.name, site, samples);
  };
  let failures = 0;
  let firstError: unknown;
  const byReason = new Map<string, SiteFailures>();
  await forEachLimited(
    sites,
    ctx.siteConcurrency,
    async (site) => {
      try {
        const input = await collector.fetch(api, site, signal);
        if (!discovery.has(site.id)) return; // removed meanwhile
        const samples = collector.collect(site, input, ctx.now());
        if (collector.commit) held.push([site, samples]);
        else publish(site, samples);
      } catch (err) {
        if (signal.aborted) return;
        if (isNotFound(err)) return settleNotFound(collector.name, site, ctx);
        failures += 1;
        firstError ??= err;
        const reason = errorReason(err);
        ctx.metrics.siteErrors.inc({ collector: collector.name, reason });
        const seen = byReason.get(reason);
        if (seen) seen.count += 1;
        else byReason.set(reason, { count: 1, site: { id: site.id, name: site.name }, err });
      }
    },
    signal,
  );
  if (collector.commit && held.length > 0) {
    // What was fetched is kept even when the run was stopped: it is published at the next run.
    await collector.commit();
    for (const [site, samples] of held) publish(site, samples);
  }
  if (byReason.size > 0 && !signal.aborted) ctx.failures.sitesFailed(collector.name, byReason, sites.length);
  if (collector.summary && !signal.aborted) {
    ctx.store.replaceGlobal(collector.name, collector.summary(discovery.sites, ctx.now()));
  }
  if (failures === 0) return { result: "success" };
  return failures >= sites.length ? { result: "failure", error: firstError } : { result: "partial" };
}

export async function runAccountCollector(collector: AccountCollector, ctx: RunContext): Promise<SettledRun> {
  const { store, discovery } = ctx;
  const sites = [...discovery.sites];
  const out = await collector.run(ctx.api, sites, ctx.signal, ctx.now());
  for (const site of sites) {
    if (!discovery.has(site.id)) continue; // removed meanwhile
    store.replaceSite(collector.name, String(site.id), out.bySite.get(site.id) ?? []);
  }
  store.replaceGlobal(collector.name, out.global);
  for (const reason of out.failures) ctx.metrics.siteErrors.inc({ collector: collector.name, reason });
  if (out.failures.length > 0) {
    ctx.log.warn(
      { collector: collector.name, failed: out.failures.length, parts: out.parts },
      "parts of the run failed; keeping their last samples",
    );
  }
  if (out.failures.length === 0) return { result: "success" };
  return { result: out.failures.length >= out.parts ? "failure" : "partial" };
}
