/** Discovery, the collectors and the runner over them, put together the one way the daemon and `once` run them. */
import { createCollectors } from "../collectors/index.js";
import type { CollectorEnv, CollectorSet } from "../collectors/types.js";
import type { Config } from "../config/schema.js";
import { SiteDiscovery } from "../discovery/discovery.js";
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
  /** Replaces the collectors (tests). */
  createCollectors?: (env: CollectorEnv) => CollectorSet;
}

export function createCollection(
  settings: CollectionSettings,
  deps: CollectionDeps,
): { discovery: SiteDiscovery; runner: CollectorRunner } {
  const { api, store, registry, logger, now = Date.now } = deps;
  const siteConcurrency = siteConcurrencyFor(settings.maxConcurrency);
  const discovery = new SiteDiscovery({ sites: settings.sites, api, store, registry, logger, now });
  const collectors = (deps.createCollectors ?? createCollectors)({ now, concurrency: siteConcurrency });
  const runner = new CollectorRunner({
    ...deps,
    discovery,
    collectors,
    settings: settings.collectors,
    siteConcurrency,
    now,
  });
  return { discovery, runner };
}
