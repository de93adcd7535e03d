/** Discovery, the collectors and the runner over them, put together the one way the daemon and `once` run them. */
import { createCollectors, wakeCollectors } from "../collectors/index.js";
import { SiteChanges } from "../collectors/siteChanges.js";
import { UNKEPT_TRAFFIC_STATE, type TrafficStateStore } from "../collectors/trafficState.js";
import type { TrafficPollingSettings } from "../collectors/trafficPolling.js";
import type { CollectorEnv, CollectorSet } from "../collectors/types.js";
import { durationMs } from "../config/duration.js";
import { BACKING_OFF_COLLECTORS, type BackingOffCollector, type Config } from "../config/schema.js";
import type { CadenceSettings } from "../collectors/cadence.js";
import type { ChangeBackoffSettings } from "../collectors/changeBackoff.js";
import { SiteDiscovery } from "../discovery/discovery.js";
import { runsPerSecond } from "./plan.js";
import { CollectorRunner, siteConcurrencyFor, type RunnerServices } from "./runner.js";

export interface CollectionSettings {
  /** The `sites` filters and the shard. */
  sites: Config["sites"];
  /** Each collector's `enabled` and `schedule`. */
  collectors: Config["collectors"];
  /** `api.maxConcurrency`: the sites a run keeps in flight follow it. */
  maxConcurrency: number;
}

export interface CollectionDeps extends RunnerServices {
  /** Where the traffic counters are kept across restarts (default: not kept). */
  trafficState?: TrafficStateStore;
  /** Replaces the collectors (tests). */
  createCollectors?: (env: CollectorEnv) => CollectorSet;
}

/** A collector's runs (its schedule's average interval) and its longest wait (`maxInterval`). */
function cadenceOf(collector: { schedule: string; maxInterval: string }): CadenceSettings {
  return {
    runEveryMs: 1000 / runsPerSecond(collector.schedule),
    maxIntervalMs: durationMs(collector.maxInterval),
  };
}

/** The traffic collector's polling from its settings: runs at the schedule, idle sites up to maxInterval. */
export function trafficPollingSettings(traffic: Config["collectors"]["traffic"]): TrafficPollingSettings {
  return cadenceOf(traffic);
}

/** How the collectors that back off for unchanged sites do: runs at their schedules, up to each maxInterval. */
export function backoffSettings(
  collectors: Config["collectors"],
): Record<BackingOffCollector, ChangeBackoffSettings> {
  return Object.fromEntries(
    BACKING_OFF_COLLECTORS.map((name) => [name, cadenceOf(collectors[name])]),
  ) as Record<BackingOffCollector, ChangeBackoffSettings>;
}

export function createCollection(
  settings: CollectionSettings,
  deps: CollectionDeps,
): { discovery: SiteDiscovery; runner: CollectorRunner; collectors: CollectorSet } {
  const { api, store, registry, logger, now = Date.now } = deps;
  const siteConcurrency = siteConcurrencyFor(settings.maxConcurrency);
  const discovery = new SiteDiscovery({ sites: settings.sites, api, store, registry, logger, now });
  const collectors = (deps.createCollectors ?? createCollectors)({
    now,
    concurrency: siteConcurrency,
    traffic: {
      polling: trafficPollingSettings(settings.collectors.traffic),
      state: deps.trafficState ?? UNKEPT_TRAFFIC_STATE,
    },
    performance: settings.collectors.performance,
    statistics: settings.collectors.statistics,
    backoff: backoffSettings(settings.collectors),
  });
  // A site whose listing changed in what a collector's answers follow is asked again by that collector.
  const siteChanges = new SiteChanges();
  discovery.onSites((sites) => {
    for (const [siteId, names] of siteChanges.listed(sites)) wakeCollectors(collectors, names, siteId);
  });
  const runner = new CollectorRunner({
    ...deps,
    discovery,
    collectors,
    settings: settings.collectors,
    siteConcurrency,
    now,
  });
  return { discovery, runner, collectors };
}
