/**
 * Runs collectors by name: discovery (src/discovery) and the collectors it is handed (per-site and
 * account-level, src/collectors; runs.ts runs them); never one collector twice at once; the collector
 * self-metrics and status; and what each collector's next run will cost.
 */
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { sourcedApi } from "../api/sourced.js";
import type { SitehostApi } from "../api/types.js";
import type { CollectorCost, CollectorSet, RunResult } from "../collectors/types.js";
import { COLLECTOR_NAMES, type CollectorName, type Config } from "../config/schema.js";
import type { SiteDiscovery } from "../discovery/discovery.js";
import type { MetricStore } from "../metrics/store.js";
import type { Site } from "../api/schemas.js";
import { settlesWithin } from "../util/time.js";
import {
  runAccountCollector,
  runSiteCollector,
  type SettledRun,
  type SiteCollectedListener,
} from "./runs.js";
import { errorReason } from "../api/errors.js";
import { FailureLog } from "./failureLog.js";
import { collectorSelfMetrics, type CollectorSelfMetrics } from "./selfMetrics.js";

/**
 * What a run came to. `error`: why a failed run failed (the error of the run, or of its first site
 * when every site failed), so a caller can say why without asking the API again.
 */
export interface RunOutcome {
  result: RunResult | "skipped";
  error?: unknown;
}

export interface CollectorStatus {
  name: CollectorName;
  enabled: boolean;
  schedule: string;
  running: boolean;
  completedRuns: number;
  lastRun?: { startedAt: Date; durationSeconds: number; result: RunResult };
  /** Why the last failed run failed, and when (cleared by a run that worked): the status page shows it. */
  lastError?: { reason: string; message: string; at: Date };
  /** When a run last worked (success or partial). */
  lastSuccessAt?: Date;
}

/** What one run of a collector is expected to cost, for planning the request budget. */
export interface CollectorCostInfo {
  name: CollectorName;
  enabled: boolean;
  schedule: string;
  /** The next run. */
  requestsPerRun: number;
  /** A run on average at steady state (adaptive polling spreads some sites over several runs). */
  plannedRequestsPerRun: number;
}

/** Sites of one run in flight at once: the API budget paces them, this bounds memory and promises. */
export function siteConcurrencyFor(maxConcurrency: number): number {
  return Math.max(1, Math.min(maxConcurrency * 2, 64));
}

/** What the runner works with besides discovery and the collectors. */
export interface RunnerServices {
  api: SitehostApi;
  store: MetricStore;
  registry: Registry;
  logger: Logger;
  /** Called with what a per-site collector published for a site (the traffic hints the log tailers). */
  onSiteCollected?: SiteCollectedListener;
  now?: () => number;
}

export interface RunnerDeps extends RunnerServices {
  /** The site list every collector works on; it runs as the `inventory` collector. */
  discovery: SiteDiscovery;
  collectors: CollectorSet;
  /** `collectors`: each one's `enabled` and `schedule`. */
  settings: Config["collectors"];
  /** Sites of one run in flight at once (siteConcurrencyFor). */
  siteConcurrency: number;
}

export class CollectorRunner {
  readonly discovery: SiteDiscovery;
  readonly siteConcurrency: number;
  private readonly running = new Set<CollectorName>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly statuses = new Map<CollectorName, CollectorStatus>();
  private readonly metrics: CollectorSelfMetrics;
  private readonly log: Logger;
  /** Failures said once per cause (src/scheduling/failureLog.ts). */
  private readonly failures: FailureLog;
  private readonly abort = new AbortController();
  private readonly now: () => number;

  constructor(private readonly deps: RunnerDeps) {
    this.discovery = deps.discovery;
    this.siteConcurrency = deps.siteConcurrency;
    this.metrics = collectorSelfMetrics(deps.registry);
    this.log = deps.logger.child({ component: "collectors" });
    this.failures = new FailureLog(this.log);
    this.now = deps.now ?? Date.now;
    for (const name of COLLECTOR_NAMES) {
      this.statuses.set(name, {
        name,
        enabled: this.isEnabled(name),
        schedule: deps.settings[name].schedule,
        running: false,
        completedRuns: 0,
      });
    }
  }

  /** Enabled in config, and (discovery aside) not every metric it would publish excluded. */
  isEnabled(name: CollectorName): boolean {
    if (!this.deps.settings[name].enabled) return false;
    return name === this.discoveryName || !this.deps.store.collectorFullyExcluded(name);
  }

  /** The collector that discovers the sites: it runs first, the others wait for its first success. */
  get discoveryName(): SiteDiscovery["name"] {
    return this.discovery.name;
  }

  get sites(): readonly Site[] {
    return this.discovery.sites;
  }

  get discovered(): boolean {
    return this.discovery.discovered;
  }

  private cost(name: CollectorName): CollectorCost {
    return name === this.discoveryName ? this.discovery : this.deps.collectors[name];
  }

  /** API requests the collector's next run is expected to make over the current sites. */
  requestsPerRun(name: CollectorName): number {
    return this.cost(name).requestsPerRun(this.sites);
  }

  /** Every collector's expected cost per run, with its schedule. */
  costs(): CollectorCostInfo[] {
    return COLLECTOR_NAMES.map((name) => {
      const cost = this.cost(name);
      const requestsPerRun = cost.requestsPerRun(this.sites);
      return {
        name,
        enabled: this.isEnabled(name),
        schedule: this.deps.settings[name].schedule,
        requestsPerRun,
        plannedRequestsPerRun: cost.plannedRequestsPerRun?.(this.sites) ?? requestsPerRun,
      };
    });
  }

  status(): CollectorStatus[] {
    return [...this.statuses.values()].map((s) => ({ ...s, running: this.running.has(s.name) }));
  }

  /** The enabled collectors that have not finished a first run yet. */
  withoutFirstRun(): CollectorName[] {
    return this.status()
      .filter((s) => s.enabled && s.completedRuns === 0)
      .map((s) => s.name);
  }

  /** The costs of the first runs still to finish (start-up work for the budget). */
  firstRunsPending(): CollectorCostInfo[] {
    const pending = new Set(this.withoutFirstRun());
    return this.costs().filter((c) => pending.has(c.name));
  }

  /** Run a collector unless its previous run is still going (then the tick is skipped and counted). */
  async run(name: CollectorName): Promise<RunOutcome> {
    if (this.abort.signal.aborted) return { result: "skipped" };
    if (this.running.has(name)) {
      this.metrics.skipped.inc({ collector: name });
      this.log.warn({ collector: name }, "previous run still going; skipping this tick");
      return { result: "skipped" };
    }
    this.running.add(name);
    const started = this.now();
    const promise = this.dispatch(name)
      .catch((err: unknown): SettledRun => {
        if (!this.abort.signal.aborted) this.failures.runFailed(name, err);
        return { result: "failure", error: err };
      })
      .then((outcome) => {
        const { result } = outcome;
        if (result === "success") this.failures.succeeded(name);
        const seconds = (this.now() - started) / 1000;
        this.metrics.runs.inc({ collector: name, result });
        this.metrics.duration.set({ collector: name }, seconds);
        if (result !== "failure") this.metrics.lastSuccess.set({ collector: name }, this.now() / 1000);
        const status = this.statuses.get(name) as CollectorStatus;
        status.completedRuns += 1;
        status.lastRun = { startedAt: new Date(started), durationSeconds: seconds, result };
        if (result === "failure") {
          const err = outcome.error;
          status.lastError = {
            reason: errorReason(err),
            message: err instanceof Error ? err.message : String(err ?? "failed"),
            at: new Date(this.now()),
          };
        } else {
          status.lastSuccessAt = new Date(this.now());
          delete status.lastError;
        }
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

  /**
   * Run a collector now unless a run of it is going (an extra run asked for from outside the
   * schedule, such as a rediscovery after a webhook): undefined when one is, and nothing is counted.
   */
  async runUnlessRunning(name: CollectorName): Promise<RunOutcome | undefined> {
    return this.running.has(name) ? undefined : this.run(name);
  }

  private async dispatch(name: CollectorName): Promise<SettledRun> {
    if (name === this.discoveryName) {
      const { result, failures } = await this.discovery.refresh(this.abort.signal);
      for (const reason of failures) this.metrics.siteErrors.inc({ collector: name, reason });
      return { result };
    }
    const collector = this.deps.collectors[name];
    const ctx = {
      ...this.deps,
      api: sourcedApi(this.deps.api, name),
      metrics: this.metrics,
      log: this.log,
      failures: this.failures,
      signal: this.abort.signal,
      now: this.now,
      siteConcurrency: this.siteConcurrency,
    };
    return collector.scope === "site"
      ? runSiteCollector(collector, ctx)
      : runAccountCollector(collector, ctx);
  }

  /** Abort runs in flight and wait for them (bounded). */
  async stop(timeoutMs = 5000): Promise<void> {
    this.abort.abort(new Error("shutting down"));
    await settlesWithin(Promise.allSettled([...this.inFlight]), timeoutMs);
  }
}
