/**
 * Runs collectors by scope: discovery (src/discovery), per-site collectors with a bounded number of
 * sites in flight and per-site failure isolation, and account-level collectors; no overlapping runs
 * of one collector; the collector self-metrics; and what each collector's next run will cost.
 */
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { ApiHttpError, errorReason } from "../api/errors.js";
import type { Site } from "../api/schemas.js";
import type { SitehostApi } from "../api/types.js";
import { createCollectors } from "../collectors/index.js";
import type { AccountCollector, Collector, RunResult, SiteCollector } from "../collectors/types.js";
import { COLLECTOR_NAMES, type CollectorName, type Config } from "../config/schema.js";
import { SiteDiscovery, type SitesListener } from "../discovery/discovery.js";
import type { MetricStore } from "../metrics/store.js";
import type { Sample } from "../metrics/sample.js";
import { durationMs } from "../config/duration.js";
import { forEachLimited } from "../util/pool.js";
import { settlesWithin } from "../util/time.js";
import { collectorSelfMetrics, type CollectorSelfMetrics } from "./selfMetrics.js";

/**
 * What a run came to. `error`: why a failed run failed (the error of the run, or of its first site
 * when every site failed), so a caller can say why without asking the API again.
 */
export interface RunOutcome {
  result: RunResult | "skipped";
  error?: unknown;
}

type SettledRun = RunOutcome & { result: RunResult };

export interface CollectorStatus {
  name: CollectorName;
  enabled: boolean;
  schedule: string;
  running: boolean;
  completedRuns: number;
  lastRun?: { startedAt: Date; durationSeconds: number; result: RunResult };
}

/** What one run of a collector is expected to cost, for planning the request budget. */
export interface CollectorCostInfo {
  name: CollectorName;
  enabled: boolean;
  schedule: string;
  requestsPerRun: number;
}

export interface RunnerDeps {
  config: Config;
  api: SitehostApi;
  store: MetricStore;
  registry: Registry;
  logger: Logger;
  /** Called with the selected sites after every discovery and when a site is found gone. */
  onSites?: SitesListener;
  /** Called with what a per-site collector published for a site (the traffic hints the log tailers). */
  onSiteCollected?: (collector: string, site: Site, samples: readonly Sample[]) => void;
  now?: () => number;
}

export class CollectorRunner {
  /** The site list every collector works on; subscribe with `discovery.onSites`. */
  readonly discovery: SiteDiscovery;
  private readonly collectors = new Map<CollectorName, Collector>();
  private readonly running = new Set<CollectorName>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly statuses = new Map<CollectorName, CollectorStatus>();
  private readonly metrics: CollectorSelfMetrics;
  private readonly log: Logger;
  private readonly abort = new AbortController();
  private readonly now: () => number;
  private readyBeforeFirstRuns = false;
  /** Sites of one run in flight at once: the API budget paces them, this bounds memory and promises. */
  readonly siteConcurrency: number;

  constructor(private readonly deps: RunnerDeps) {
    this.metrics = collectorSelfMetrics(deps.registry);
    this.log = deps.logger.child({ component: "collectors" });
    this.now = deps.now ?? Date.now;
    this.siteConcurrency = Math.max(1, Math.min(deps.config.api.maxConcurrency * 2, 64));
    this.discovery = new SiteDiscovery({ ...deps, now: this.now });
    if (deps.onSites) this.discovery.onSites(deps.onSites);
    const all: Collector[] = [
      this.discovery,
      ...createCollectors({ now: this.now, concurrency: this.siteConcurrency }),
    ];
    for (const c of all) this.collectors.set(c.name, c);
    for (const name of COLLECTOR_NAMES) {
      if (!this.collectors.has(name)) throw new Error(`no collector named ${name}`);
      this.statuses.set(name, {
        name,
        enabled: this.isEnabled(name),
        schedule: deps.config.collectors[name].schedule,
        running: false,
        completedRuns: 0,
      });
    }
  }

  private collector(name: CollectorName): Collector {
    const c = this.collectors.get(name);
    if (!c) throw new Error(`unknown collector ${name}`);
    return c;
  }

  /** Enabled in config, and (discovery aside) not every metric it would publish excluded. */
  isEnabled(name: CollectorName): boolean {
    if (!this.deps.config.collectors[name].enabled) return false;
    return this.collector(name).scope === "discovery" || !this.deps.store.collectorFullyExcluded(name);
  }

  /** The collector that discovers the sites: it runs first, the others wait for its first success. */
  get discoveryName(): CollectorName {
    return this.discovery.name;
  }

  get sites(): readonly Site[] {
    return this.discovery.sites;
  }

  get discovered(): boolean {
    return this.discovery.discovered;
  }

  /** API requests the collector's next run is expected to make over the current sites. */
  requestsPerRun(name: CollectorName): number {
    return this.collector(name).requestsPerRun(this.sites);
  }

  /** Every collector's expected cost per run, with its schedule. */
  costs(): CollectorCostInfo[] {
    return COLLECTOR_NAMES.map((name) => ({
      name,
      enabled: this.isEnabled(name),
      schedule: this.deps.config.collectors[name].schedule,
      requestsPerRun: this.requestsPerRun(name),
    }));
  }

  status(): CollectorStatus[] {
    return [...this.statuses.values()].map((s) => ({ ...s, running: this.running.has(s.name) }));
  }

  /** The enabled collectors that have not finished a first run yet. */
  private withoutFirstRun(): CollectorName[] {
    return this.status()
      .filter((s) => s.enabled && s.completedRuns === 0)
      .map((s) => s.name);
  }

  /** Requests of the first runs still to finish, by collector (start-up work for the budget). */
  firstRunsPending(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const name of this.withoutFirstRun()) out[name] = this.requestsPerRun(name);
    return out;
  }

  /**
   * Ready once discovery worked and every enabled collector finished a first run, or, when the
   * request budget stretches those first runs, `web.readyTimeout` after discovery: a large account
   * at a tight budget would otherwise stay unready for minutes (holding back a rollout) while the
   * hourly collectors' first runs crawl. The reason then names the first runs still going.
   */
  readiness(): { ready: boolean; reason?: string } {
    const discoveredAt = this.discovery.discoveredAt;
    if (discoveredAt === undefined) return { ready: false, reason: "site discovery has not succeeded yet" };
    const waiting = this.withoutFirstRun();
    if (waiting.length === 0) return { ready: true };
    const timeoutMs = durationMs(this.deps.config.web.readyTimeout);
    if (timeoutMs > 0 && this.now() - discoveredAt >= timeoutMs) {
      if (!this.readyBeforeFirstRuns) {
        this.readyBeforeFirstRuns = true;
        this.log.warn(
          { collectors: waiting, readyTimeout: this.deps.config.web.readyTimeout },
          "ready before these collectors finished a first run: the request budget stretches them; their metrics appear when they finish",
        );
      }
      return { ready: true, reason: `first run still going for ${waiting.join(", ")}` };
    }
    return { ready: false, reason: `waiting for a first run of ${waiting.join(", ")}` };
  }

  /** Run a collector unless its previous run is still going (then the tick is skipped and counted). */
  async run(name: CollectorName): Promise<RunOutcome> {
    if (this.abort.signal.aborted) return { result: "skipped" };
    const collector = this.collector(name);
    if (this.running.has(name)) {
      this.metrics.skipped.inc({ collector: name });
      this.log.warn({ collector: name }, "previous run still going; skipping this tick");
      return { result: "skipped" };
    }
    this.running.add(name);
    const started = this.now();
    const promise = this.dispatch(collector)
      .catch((err: unknown): SettledRun => {
        if (!this.abort.signal.aborted) this.log.error({ collector: name, err }, "collector run failed");
        return { result: "failure", error: err };
      })
      .then((outcome) => {
        const { result } = outcome;
        const seconds = (this.now() - started) / 1000;
        this.metrics.runs.inc({ collector: name, result });
        this.metrics.duration.set({ collector: name }, seconds);
        if (result !== "failure") this.metrics.lastSuccess.set({ collector: name }, this.now() / 1000);
        const status = this.statuses.get(name) as CollectorStatus;
        status.completedRuns += 1;
        status.lastRun = { startedAt: new Date(started), durationSeconds: seconds, result };
        this.running.delete(name);
        return outcome;
      });
    this.inFlight.add(promise);
    try {
      return await promise;
    } finally {
      this.inFlight.delete(promise);
    }
  }

  private async dispatch(collector: Collector): Promise<SettledRun> {
    switch (collector.scope) {
      case "discovery":
        return { result: await collector.refresh(this.abort.signal) };
      case "site":
        return this.runSiteCollector(collector);
      case "account":
        return this.runAccountCollector(collector);
    }
  }

  private async runSiteCollector(collector: SiteCollector): Promise<SettledRun> {
    const sites = [...this.sites];
    const signal = this.abort.signal;
    let failures = 0;
    let firstError: unknown;
    await forEachLimited(
      sites,
      this.siteConcurrency,
      async (site) => {
        try {
          const input = await collector.fetch(this.deps.api, site, signal);
          if (!this.discovery.has(site.id)) return; // removed meanwhile
          const samples = collector.collect(site, input, this.now());
          this.deps.store.replaceSite(collector.name, String(site.id), samples);
          this.deps.onSiteCollected?.(collector.name, site, samples);
        } catch (err) {
          if (signal.aborted) return;
          if (err instanceof ApiHttpError && err.status === 404) {
            // Deleted since discovery: discovery drops all of its series. Else the site has none of this
            // data (no audit run yet, say): nothing to publish.
            if (!(await this.discovery.confirmGone(site, signal))) {
              this.log.debug({ collector: collector.name, site: site.name }, "no data for this site (404)");
              this.deps.store.replaceSite(collector.name, String(site.id), []);
            }
            return;
          }
          failures += 1;
          firstError ??= err;
          this.metrics.siteErrors.inc({ collector: collector.name, reason: errorReason(err) });
          this.log.warn(
            { collector: collector.name, site: site.name, siteId: site.id, err },
            "site collection failed; keeping its last samples",
          );
        }
      },
      signal,
    );
    if (collector.summary && !signal.aborted) {
      this.deps.store.replaceGlobal(collector.name, collector.summary(this.sites, this.now()));
    }
    if (failures === 0) return { result: "success" };
    return failures >= sites.length ? { result: "failure", error: firstError } : { result: "partial" };
  }

  private async runAccountCollector(collector: AccountCollector): Promise<SettledRun> {
    const sites = [...this.sites];
    const out = await collector.run(this.deps.api, sites, this.abort.signal, this.now());
    for (const site of sites) {
      if (!this.discovery.has(site.id)) continue; // removed meanwhile
      this.deps.store.replaceSite(collector.name, String(site.id), out.bySite.get(site.id) ?? []);
    }
    this.deps.store.replaceGlobal(collector.name, out.global);
    for (const reason of out.failures) this.metrics.siteErrors.inc({ collector: collector.name, reason });
    if (out.failures.length > 0) {
      this.log.warn(
        { collector: collector.name, failed: out.failures.length, parts: out.parts },
        "parts of the run failed; keeping their last samples",
      );
    }
    if (out.failures.length === 0) return { result: "success" };
    return { result: out.failures.length >= out.parts ? "failure" : "partial" };
  }

  /** Abort runs in flight and wait for them (bounded). */
  async stop(timeoutMs = 5000): Promise<void> {
    this.abort.abort(new Error("shutting down"));
    await settlesWithin(Promise.allSettled([...this.inFlight]), timeoutMs);
  }
}
