/** Discovery, the collectors and their runner as the daemon puts them together, over a fake API, for unit tests. */
import pino from "pino";
import { Registry } from "prom-client";
import type { SitehostApi } from "../../src/api/types.js";
import { BACKING_OFF_COLLECTORS, type Config } from "../../src/config/schema.js";
import { METRIC_FAMILIES } from "../../src/metrics/families.js";
import { MetricStore } from "../../src/metrics/store.js";
import { createCollection, type CollectionDeps } from "../../src/scheduling/collection.js";
import { ReadinessPolicy } from "../../src/scheduling/readiness.js";

export function collectionFor(
  config: Config,
  api: SitehostApi,
  deps: Partial<Omit<CollectionDeps, "api">> = {},
) {
  const store = deps.store ?? new MetricStore(METRIC_FAMILIES);
  const registry = deps.registry ?? new Registry();
  const logger = deps.logger ?? pino({ level: "silent" });
  const { discovery, runner, collectors } = createCollection(
    { sites: config.sites, collectors: config.collectors, maxConcurrency: config.api.maxConcurrency },
    { ...deps, api, store, registry, logger },
  );
  const policy = new ReadinessPolicy({
    discoveredAt: () => discovery.discoveredAt,
    withoutFirstRun: () => runner.withoutFirstRun(),
    discoveryError: () => runner.status().find((s) => s.name === discovery.name)?.lastError?.message,
    readyTimeout: config.web.readyTimeout,
    logger,
    now: deps.now,
  });
  return { discovery, runner, collectors, store, registry, readiness: () => policy.check() };
}

/**
 * `collectors` settings under which every collector asks every site at every run (no backing off for
 * unchanged answers): for tests whose runs follow each other on one clock, about something else.
 */
export const EVERY_RUN: Record<string, { maxInterval: string }> = Object.fromEntries(
  BACKING_OFF_COLLECTORS.map((name) => [name, { maxInterval: "1s" }]),
);

/** The store's exposition lines that start with `prefix`, sorted. */
export function linesOf(store: MetricStore, prefix: string): string[] {
  return store
    .render()
    .split("\n")
    .filter((l) => l.startsWith(prefix))
    .sort();
}
