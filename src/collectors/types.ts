/**
 * What a collector is, for the runner and the request budget. Two scopes (discovery, which lists the
 * sites, is scheduled like a collector too: src/scheduling/runner.ts):
 * - `site`: asks the same endpoints about each selected site; the runner drives the sites;
 * - `account`: walks account-level resources (DNS zones, say) whose requests do not follow the site list.
 * Every collector says what its next run will cost in API requests (`requestsPerRun`), so the
 * request budget can be planned from the schedules.
 */
import type { Site } from "../api/schemas.js";
import type { SourcedApi } from "../api/sourced.js";
import type { AuditStrategy, StatisticsPeriod } from "../config/collectorOptions.js";
import type { BackingOffCollector, CollectorName } from "../config/schema.js";
import type { ChangeBackoffSettings } from "./changeBackoff.js";
import type { Sample } from "../metrics/sample.js";
import type { TrafficPollingSettings } from "./trafficPolling.js";
import type { TrafficStateStore } from "./trafficState.js";

export type RunResult = "success" | "partial" | "failure";

export interface CollectorCost {
  readonly name: CollectorName;
  /** API requests the next run is expected to make over these selected sites. */
  requestsPerRun(sites: readonly Site[]): number;
  /** What a run makes on average at steady state, when that differs from the next run (adaptive polling). */
  plannedRequestsPerRun?(sites: readonly Site[]): number;
}

/** Asks about each selected site; the runner handles concurrency, per-site failures and 404s. */
export interface SiteCollector<Input = unknown> extends CollectorCost {
  readonly scope: "site";
  /** Requests one run makes per site it asks about. */
  readonly requestsPerSite: number;
  /** Asks the API (bound to this collector's name in the request budget) about one site. */
  fetch(api: SourcedApi, site: Site, signal: AbortSignal): Promise<Input>;
  /** Pure: the fetched input to the site's samples. */
  collect(site: Site, input: Input, nowMs: number): Sample[];
  /** Whether a run at `nowMs` asks about the site (absent: every run asks about every site). */
  due?(site: Site, nowMs: number): boolean;
  /**
   * Makes what the run fetched durable (counters kept across restarts). When present, the run's
   * samples are published only after it succeeded, never before.
   */
  commit?(): Promise<void>;
  /** Loads what `commit` saved; called once before the first run. Throws when it cannot be trusted. */
  resume?(): Promise<void>;
  /** Samples without site labels after each run, from what the collector remembers (optional). */
  summary?(sites: readonly Site[], nowMs: number): Sample[];
}

/** What one run of an account-level collector produced. */
export interface AccountRun {
  /** Samples by site id; a selected site absent here publishes nothing of this collector. */
  bySite: ReadonlyMap<number, Sample[]>;
  /** Samples without site labels. */
  global: Sample[];
  /** Requests this run made (the next run's estimate). */
  requests: number;
  /** Independent parts of the run (a zone, a record) ... */
  parts: number;
  /** ... and the reasons (`errorReason`) of those that failed and kept their last samples. */
  failures: string[];
}

export interface AccountCollector extends CollectorCost {
  readonly scope: "account";
  run(api: SourcedApi, sites: readonly Site[], signal: AbortSignal, nowMs: number): Promise<AccountRun>;
}

/** Every collector but discovery's (`inventory`, which lists the sites: src/discovery). */
export type CollectorSetName = Exclude<CollectorName, "inventory">;

/** A collector that asks less often about what does not change, and what makes it ask again (webhook events). */
export interface Wakeable {
  /** Ask about the site at the next run (undefined: every site). */
  wake(siteId: number | undefined): void;
}

/** One collector of each name, under its name: a set without one does not compile. */
export type CollectorSet = {
  readonly [N in CollectorSetName]: (SiteCollector | AccountCollector) & {
    readonly name: N;
  } & (N extends BackingOffCollector ? Wakeable : unknown);
};

/** What the traffic collector is given: its clock, its polling, where it keeps its counters. */
export interface TrafficEnv {
  now: () => number;
  polling: TrafficPollingSettings;
  state: TrafficStateStore;
}

/** What collectors get from the runner when they are created (one set per runner). */
export interface CollectorEnv {
  now: () => number;
  /** Requests an account-level collector keeps in flight at once (the API budget paces them). */
  concurrency: number;
  /** The traffic collector's polling and where it keeps its counters. */
  traffic: Omit<TrafficEnv, "now">;
  /** The audit strategies the performance collector publishes (`collectors.performance.strategies`). */
  performance: { strategies: readonly AuditStrategy[] };
  /** The periods the statistics collector publishes (`collectors.statistics.periods`). */
  statistics: { periods: readonly StatisticsPeriod[] };
  /** How the collectors that ask less often about unchanged sites back off (absent: they ask every run). */
  backoff?: Record<BackingOffCollector, ChangeBackoffSettings>;
}
