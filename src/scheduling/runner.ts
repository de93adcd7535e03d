/**
 * Runs collectors: discovery (inventory) and the per-site collectors, with no
 * overlapping runs, a bounded number of sites in flight, per-site failure
 * isolation and the collector self-metrics.
 */
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { ApiHttpError, errorReason } from "../api/errors.js";
import type { Site } from "../api/schemas.js";
import type { SitehostApi } from "../api/types.js";
import { collectAccount, collectSite } from "../collectors/inventory.js";
import { SITE_COLLECTORS, type SiteCollector } from "../collectors/index.js";
import { COLLECTOR_NAMES, type CollectorName, type Config } from "../config/schema.js";
import { filterSites } from "../discovery/filter.js";
import type { MetricStore } from "../metrics/store.js";
import type { Sample } from "../metrics/sample.js";
import { collectorSelfMetrics, type CollectorSelfMetrics } from "./selfMetrics.js";

export type RunResult = "success" | "partial" | "failure";

export interface CollectorStatus {
  name: CollectorName;
  enabled: boolean;
  schedule: string;
  running: boolean;
  completedRuns: number;
  lastRun?: { startedAt: Date; durationSeconds: number; result: RunResult };
}

export interface RunnerDeps {
  config: Config;
  api: SitehostApi;
  store: MetricStore;
  registry: Registry;
  logger: Logger;
  /** Called with the selected sites after every discovery and when a site is found gone. */
  onSites?: (sites: readonly Site[]) => void;
  /** Called with what a per-site collector published for a site (the traffic hints the log tailers). */
  onSiteCollected?: (collector: string, site: Site, samples: readonly Sample[]) => void;
  now?: () => number;
}

export class CollectorRunner {
  private currentSites: Site[] = [];
  private discoveredOnce = false;
  private readonly running = new Set<CollectorName>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly statuses = new Map<CollectorName, CollectorStatus>();
  private readonly metrics: CollectorSelfMetrics;
  private readonly log: Logger;
  private readonly abort = new AbortController();
  private readonly now: () => number;
  /** Sites of one run in flight at once: the API budget paces them, this bounds memory and promises. */
  readonly siteConcurrency: number;

  constructor(private readonly deps: RunnerDeps) {
    this.metrics = collectorSelfMetrics(deps.registry);
    this.log = deps.logger.child({ component: "collectors" });
    this.now = deps.now ?? Date.now;
    this.siteConcurrency = Math.max(1, Math.min(deps.config.api.maxConcurrency * 2, 64));
    for (const name of COLLECTOR_NAMES) {
      const c = deps.config.collectors[name];
      this.statuses.set(name, {
        name,
        enabled: this.isEnabled(name),
        schedule: c.schedule,
        running: false,
        completedRuns: 0,
      });
    }
    this.metrics.up.set(0);
  }

  /** Enabled in config, and not every metric it would publish excluded. */
  isEnabled(name: CollectorName): boolean {
    if (!this.deps.config.collectors[name].enabled) return false;
    return name === "inventory" || !this.deps.store.collectorFullyExcluded(name);
  }

  get sites(): readonly Site[] {
    return this.currentSites;
  }

  get discovered(): boolean {
    return this.discoveredOnce;
  }

  status(): CollectorStatus[] {
    return [...this.statuses.values()].map((s) => ({ ...s, running: this.running.has(s.name) }));
  }

  /** Ready once discovery worked and every enabled collector finished a first run. */
  readiness(): { ready: boolean; reason?: string } {
    if (!this.discoveredOnce) return { ready: false, reason: "site discovery has not succeeded yet" };
    const waiting = this.status().filter((s) => s.enabled && s.completedRuns === 0);
    return waiting.length === 0
      ? { ready: true }
      : { ready: false, reason: `waiting for a first run of ${waiting.map((s) => s.name).join(", ")}` };
  }

  /** Run a collector unless its previous run is still going (then the tick is skipped and counted). */
  async run(name: CollectorName): Promise<RunResult | "skipped"> {
    if (this.abort.signal.aborted) return "skipped";
    if (this.running.has(name)) {
      this.metrics.skipped.inc({ collector: name });
      this.log.warn({ collector: name }, "previous run still going; skipping this tick");
      return "skipped";
    }
    this.running.add(name);
    const started = this.now();
    const promise = (async (): Promise<RunResult> => {
      if (name === "inventory") return this.runInventory();
      const collector = SITE_COLLECTORS.find((c) => c.name === name);
      if (!collector) throw new Error(`unknown collector ${name}`);
      return this.runSiteCollector(collector);
    })()
      .catch((err: unknown): RunResult => {
        if (!this.abort.signal.aborted) {
          this.log.error({ collector: name, err: (err as Error).message }, "collector run failed");
        }
        return "failure";
      })
      .then((result) => {
        const seconds = (this.now() - started) / 1000;
        this.metrics.runs.inc({ collector: name, result });
        this.metrics.duration.set({ collector: name }, seconds);
        if (result !== "failure") this.metrics.lastSuccess.set({ collector: name }, this.now() / 1000);
        const status = this.statuses.get(name) as CollectorStatus;
        status.completedRuns += 1;
        status.lastRun = { startedAt: new Date(started), durationSeconds: seconds, result };
        this.running.delete(name);
        return result;
      });
    this.inFlight.add(promise);
    try {
      return await promise;
    } finally {
      this.inFlight.delete(promise);
    }
  }

  private async runInventory(): Promise<RunResult> {
    const signal = this.abort.signal;
    let listed;
    let account;
    try {
      [listed, account] = await Promise.all([
        this.deps.api.allSites({ signal, source: "inventory" }),
        this.deps.api.account(undefined, { signal, source: "inventory" }).catch((err: unknown) => {
          // The account view is nice to have; discovery stands without it.
          this.metrics.siteErrors.inc({ collector: "inventory", reason: errorReason(err) });
          this.log.warn({ err: (err as Error).message }, "could not read the account");
          return undefined;
        }),
      ]);
    } catch (err) {
      this.metrics.up.set(0);
      throw err;
    }
    this.metrics.up.set(1);
    const selected = filterSites(listed.items, this.deps.config.sites);
    const now = this.now();
    if (account) this.deps.store.replaceGlobal("inventory", collectAccount(account));
    const keep = new Set<string>();
    for (const site of selected) {
      keep.add(String(site.id));
      this.deps.store.replaceSite("inventory", String(site.id), collectSite(site, now));
    }
    // Sites gone (or filtered out) lose every series of every collector at once.
    this.deps.store.retainSites(keep);
    const before = new Set(this.currentSites.map((s) => s.id));
    const added = selected.filter((s) => !before.has(s.id)).length;
    const removed = this.currentSites.filter((s) => !keep.has(String(s.id))).length;
    this.currentSites = selected;
    this.discoveredOnce = true;
    this.metrics.sitesDiscovered.set(selected.length);
    if (added || removed) this.log.info({ sites: selected.length, added, removed }, "site discovery");
    this.deps.onSites?.(selected);
    return listed.rejected > 0 || !account ? "partial" : "success";
  }

  private async runSiteCollector(collector: SiteCollector): Promise<RunResult> {
    const sites = [...this.currentSites];
    if (sites.length === 0) return "success";
    const signal = this.abort.signal;
    let failures = 0;
    let next = 0;
    const worker = async () => {
      while (next < sites.length && !signal.aborted) {
        const site = sites[next++] as Site;
        try {
          const input = await collector.fetch(this.deps.api, site, signal);
          if (!this.currentSites.some((s) => s.id === site.id)) continue; // removed meanwhile
          const samples = collector.collect(site, input, this.now());
          this.deps.store.replaceSite(collector.name, String(site.id), samples);
          this.deps.onSiteCollected?.(collector.name, site, samples);
        } catch (err) {
          if (signal.aborted) return;
          if (err instanceof ApiHttpError && err.status === 404) {
            if (await this.siteIsGone(site.id, signal)) {
              // Deleted since discovery: drop all of its series now.
              this.log.info({ site: site.name, siteId: site.id }, "site is gone (404); dropping its series");
              this.forgetSite(site.id);
            } else {
              // The site is there; it has none of this data (no audit run yet, say): nothing to publish.
              this.log.debug({ collector: collector.name, site: site.name }, "no data for this site (404)");
              this.deps.store.replaceSite(collector.name, String(site.id), []);
            }
            continue;
          }
          failures += 1;
          this.metrics.siteErrors.inc({ collector: collector.name, reason: errorReason(err) });
          this.log.warn(
            { collector: collector.name, site: site.name, siteId: site.id, err: (err as Error).message },
            "site collection failed; keeping its last samples",
          );
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.siteConcurrency, sites.length) }, worker));
    if (failures === 0) return "success";
    return failures >= sites.length ? "failure" : "partial";
  }

  /**
   * A 404 on a per-site endpoint means the site was deleted only if the site itself is 404 too: the
   * platform also answers 404 for data a site does not have. Any other answer keeps the site.
   */
  private async siteIsGone(siteId: number, signal: AbortSignal): Promise<boolean> {
    try {
      await this.deps.api.site({ id: siteId }, { signal, source: "inventory" });
      return false;
    } catch (err) {
      return err instanceof ApiHttpError && err.status === 404;
    }
  }

  private forgetSite(siteId: number): void {
    this.deps.store.removeSite(String(siteId));
    this.currentSites = this.currentSites.filter((s) => s.id !== siteId);
    this.metrics.sitesDiscovered.set(this.currentSites.length);
    this.deps.onSites?.(this.currentSites);
  }

  /** Abort runs in flight and wait for them (bounded). */
  async stop(timeoutMs = 5000): Promise<void> {
    this.abort.abort(new Error("shutting down"));
    await Promise.race([
      Promise.allSettled([...this.inFlight]),
      new Promise((r) => setTimeout(r, timeoutMs).unref()),
    ]);
  }
}
