/**
 * What only the exporter holding the checkpoint lock runs (or any exporter, with logs off): discovery
 * and the collectors, the log pipeline, the request plan, the webhook receiver's queue and the
 * schedules. Every part is built first, each from what was built before it; then they start in the
 * order of the list in `activate` and stop in the reverse order.
 */
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { ApiClient } from "../api/client.js";
import type { Config } from "../config/schema.js";
import { publishShardInfo, reconcileShardLayout } from "../ha/shardLayout.js";
import type { ExportHealth } from "../logs/otlp/exportHealth.js";
import { LogPipeline } from "../logs/pipeline.js";
import type { MetricStore } from "../metrics/store.js";
import { BudgetPlanner, type StartupWork } from "../scheduling/budgetPlanner.js";
import { createCollection } from "../scheduling/collection.js";
import {
  adviceFor,
  collectorSources,
  firstRunWithinSeconds,
  type PlannedSource,
} from "../scheduling/plan.js";
import { ReadinessPolicy, type Readiness } from "../scheduling/readiness.js";
import type { SiteCollectedListener } from "../scheduling/runs.js";
import { Scheduler } from "../scheduling/scheduler.js";
import type { ActiveStatus } from "../server/status.js";
import { ComponentGroup } from "../util/components.js";
import type { WebhookReceiver } from "../webhooks/receiver.js";

/** What every exporter has, active or standing by. */
export interface Core {
  registry: Registry;
  api: ApiClient;
  store: MetricStore;
  /** With webhooks.enabled: its route is served from the start, events are taken once active. */
  webhooks?: WebhookReceiver;
  /** The OTLP endpoint's health, shared by the log streams and the webhook queue (not for `once`). */
  exportHealth?: ExportHealth;
}

export interface ActiveExporter {
  readiness(): Readiness;
  /** What the status page says of the active parts. */
  status(): ActiveStatus;
  stop(): Promise<void>;
}

/** A site that served requests in the last minute has new web-server log lines: read them soon. */
function trafficHint(logs: LogPipeline): SiteCollectedListener {
  return (collector, site, samples) => {
    if (
      collector === "traffic" &&
      samples.some((s) => s.name === "sitehost_site_requests_per_second" && s.value > 0)
    ) {
      logs.hintActive(site.id);
    }
  };
}

export async function activate(config: Config, logger: Logger, core: Core): Promise<ActiveExporter> {
  const { registry, api, store, webhooks, exportHealth } = core;
  const logs = config.logs.enabled
    ? new LogPipeline({ config, api, registry, logger, store, exportHealth })
    : undefined;
  const { discovery, runner } = createCollection(
    { sites: config.sites, collectors: config.collectors, maxConcurrency: config.api.maxConcurrency },
    { api, store, registry, logger, onSiteCollected: logs && trafficHint(logs) },
  );
  if (logs) discovery.onSites((sites) => logs.updateSites(sites));
  const readiness = new ReadinessPolicy({
    discoveredAt: () => discovery.discoveredAt,
    withoutFirstRun: () => runner.withoutFirstRun(),
    discoveryError: () => runner.status().find((s) => s.name === discovery.name)?.lastError?.message,
    readyTimeout: config.web.readyTimeout,
    logger,
  });
  const planner = new BudgetPlanner(
    {
      budgetRequestsPerSecond: config.api.maxRequestsPerSecond,
      shardCount: config.sites.shard.count,
      logsMaxPollInterval: config.logs.maxPollInterval,
    },
    registry,
    logger,
    api.budget,
    {
      sources: (): PlannedSource[] => [
        ...collectorSources(runner.costs().filter((c) => c.enabled)),
        ...(logs ? [{ source: "logs", requestsPerSecond: logs.plannedRequestsPerSecond() } as const] : []),
        ...(webhooks
          ? [{ source: "webhooks", requestsPerSecond: webhooks.requestsPerSecond() } as const]
          : []),
      ],
      // The streams' first reads (one request each, mostly) within 20 s, so they go first; first runs
      // within 90 s (hourly and slower collectors: a twelfth of their period).
      startupWork: (): StartupWork[] => [
        ...runner.firstRunsPending().map((c) => ({
          source: c.name,
          requests: c.requestsPerRun,
          withinSeconds: firstRunWithinSeconds(c.schedule),
        })),
        ...(logs && logs.unreadStreams() > 0
          ? [{ source: "logs", requests: logs.unreadStreams(), withinSeconds: 20 } as const]
          : []),
      ],
    },
  );
  discovery.onSites(() => planner.update());
  const scheduler = new Scheduler(runner, config.collectors, logger);

  const parts = new ComponentGroup();
  await parts.start([
    logs && {
      name: "shard layout",
      start: () => reconcileShardLayout(config.logs.checkpointDir, config.sites.shard, logger),
    },
    // Weights follow the start-up work as it gets done (and the sites once discovered), then settle on the plan.
    {
      name: "request plan",
      start: () => planner.start(() => !discovery.discovered),
      stop: () => planner.stop(),
    },
    logs && { name: "log pipeline", start: () => logs.start(), stop: () => logs.stop() },
    // After the log pipeline's start, which clears temporary files the queue's compaction also uses.
    webhooks && {
      name: "webhook receiver",
      start: () =>
        webhooks.activate({
          siteName: (id) => discovery.site(id)?.name,
          refreshTarget: {
            refreshSite: (id, signal) => discovery.refreshSite(id, signal, "webhooks"),
            rediscover: async () => {
              const outcome = await runner.runUnlessRunning(discovery.name);
              return outcome !== undefined && outcome.result !== "skipped";
            },
            isKnown: (id) => discovery.has(id),
            discoveryCost: () => runner.requestsPerRun(discovery.name),
          },
          // What the refreshes cost shows in the request plan as it changes, not only after a discovery.
          onRefreshRateChange: () => planner.update(),
        }),
      stop: () => webhooks.stop(),
    },
    { name: "collector schedules", start: () => scheduler.start(), stop: () => scheduler.stop() },
    { name: "shard info", start: () => publishShardInfo(registry, config.sites.shard) },
  ]);
  return {
    readiness: () => readiness.check(),
    status: () => {
      const plan = planner.current();
      const advice =
        plan && !plan.fits
          ? adviceFor(plan, {
              shardCount: config.sites.shard.count,
              maxPollInterval: config.logs.maxPollInterval,
            })
          : undefined;
      return {
        sitesDiscovered: discovery.sites.length,
        collectors: runner.status(),
        ...(plan ? { plan } : {}),
        ...(advice ? { budgetAdvice: advice } : {}),
      };
    },
    stop: () => parts.stop(),
  };
}
