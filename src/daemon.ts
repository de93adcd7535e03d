/** Wiring: config → api client → discovery/scheduler → collectors → store → exposition → HTTP; the log pipeline and the webhook receiver. */
import type { Logger } from "pino";
import { collectDefaultMetrics, Registry } from "prom-client";
import { createApiClient, type ApiClient } from "./api/client.js";
import { apiClientOptionsFromConfig } from "./api/options.js";
import { ApiAuthError, ApiNetworkError } from "./api/errors.js";
import { durationMs } from "./config/duration.js";
import type { Config } from "./config/schema.js";
import { CheckpointLock } from "./ha/lock.js";
import { publishShardInfo, reconcileShardLayout, withdrawShardInfo } from "./ha/shardLayout.js";
import { CheckpointVolume, CheckpointWriteError } from "./ha/volume.js";
import { LogPipeline } from "./logs/pipeline.js";
import { Exposition } from "./metrics/exposition.js";
import { METRIC_FAMILIES } from "./metrics/families.js";
import { gauge } from "./metrics/selfMetric.js";
import { MetricStore } from "./metrics/store.js";
import { CollectorRunner } from "./scheduling/runner.js";
import { Scheduler } from "./scheduling/scheduler.js";
import { BudgetPlanner } from "./scheduling/budgetPlanner.js";
import { collectorSources, firstRunWithinSeconds } from "./scheduling/plan.js";
import { startHttpServer } from "./server/http.js";
import { REVISION, VERSION } from "./version.js";
import { COLLECTOR_NAMES, type CollectorName } from "./config/schema.js";
import { WebhookReceiver } from "./webhooks/receiver.js";

export interface DaemonHandle {
  url: string;
  stop(): Promise<void>;
}

export interface DaemonOptions {
  config: Config;
  logger: Logger;
  /** Ends the process when it cannot start after taking the checkpoint lock; tests replace it. */
  exit?: (code: number) => void;
}

function createRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // Gauges that prom-client names with a _total suffix fail `promtool check metrics`; the same
  // information is in nodejs_active_handles, nodejs_active_requests and nodejs_active_resources.
  for (const name of [
    "nodejs_active_handles_total",
    "nodejs_active_requests_total",
    "nodejs_active_resources_total",
  ]) {
    registry.removeSingleMetric(name);
  }
  gauge(registry, {
    name: "sitehost_exporter_build_info",
    help: "Build information; always 1.",
    labelNames: ["version", "revision", "nodejs"],
  }).set({ version: VERSION, revision: REVISION, nodejs: process.version }, 1);
  return registry;
}

interface Core {
  registry: Registry;
  api: ApiClient;
  store: MetricStore;
  /** With webhooks.enabled: its route is served from the start, events are taken once active. */
  webhooks?: WebhookReceiver;
  /** With logs enabled: whether logs.checkpointDir takes writes (shipping pauses while it does not). */
  volume?: CheckpointVolume;
  /** Why this process may not write under logs.checkpointDir now (it does not hold the lock). */
  fence?: () => string | undefined;
}

function createCore(config: Config, logger: Logger): Core {
  const registry = createRegistry();
  const api = createApiClient(apiClientOptionsFromConfig(config, registry, logger));
  const store = new MetricStore(METRIC_FAMILIES, { exclude: config.metrics.exclude });
  const volume = config.logs.enabled
    ? new CheckpointVolume({ dir: config.logs.checkpointDir, logger, registry })
    : undefined;
  return { registry, api, store, volume };
}

/** What only the exporter holding the checkpoint lock runs: collectors, log tailers, the request plan. */
interface Active {
  runner: CollectorRunner;
  planner: BudgetPlanner;
  stop(): Promise<void>;
}

async function activate(config: Config, logger: Logger, core: Core): Promise<Active> {
  const { registry, api, store } = core;
  if (config.logs.enabled) {
    // Not recorded now (a full or read-only volume): done at the next start; moved sites are not tailed here.
    await reconcileShardLayout(config.logs.checkpointDir, config.sites.shard, logger).catch(
      (err: unknown) => {
        if (!(err instanceof CheckpointWriteError)) throw err;
        core.volume?.report(err);
      },
    );
  }
  let logs: LogPipeline | undefined;
  // Set below, once the runner exists; discovery (which runs later) updates it.
  const planning: { planner?: BudgetPlanner } = {};
  const runner = new CollectorRunner({
    config,
    api,
    store,
    registry,
    logger,
    onSites: (sites) => {
      logs?.updateSites(sites);
      planning.planner?.update();
    },
    // A site that served requests in the last minute has new web-server log lines: read them soon.
    onSiteCollected: (collector, site, samples) => {
      if (
        collector === "traffic" &&
        samples.some((s) => s.name === "sitehost_site_requests_per_second" && s.value > 0)
      ) {
        logs?.hintActive(site.id);
      }
    },
  });
  if (config.logs.enabled) {
    logs = new LogPipeline({ config, api, registry, logger, store, volume: core.volume, fence: core.fence });
  }
  const webhooks = core.webhooks;
  const plan = new BudgetPlanner(config, registry, logger, api.budget, {
    sources: () => [
      ...collectorSources(runner.costs().filter((c) => c.enabled)),
      ...(logs ? [{ source: "logs", requestsPerSecond: logs.plannedRequestsPerSecond() }] : []),
      ...(webhooks ? [{ source: "webhooks", requestsPerSecond: webhooks.requestsPerSecond() }] : []),
    ],
    // The streams' first reads (one request each, mostly) within 20 s, so they go first; first runs
    // within 90 s (hourly and slower collectors: a twelfth of their period).
    startupWork: () => {
      const unread = logs?.unreadStreams() ?? 0;
      return [
        ...Object.entries(runner.firstRunsPending()).map(([source, requests]) => ({
          source,
          requests,
          withinSeconds: firstRunWithinSeconds(config.collectors[source as CollectorName].schedule),
        })),
        ...(unread > 0 ? [{ source: "logs", requests: unread, withinSeconds: 20 }] : []),
      ];
    },
  });
  planning.planner = plan;
  plan.update();
  // Weights follow the start-up work as it gets done, then settle on the plan.
  const startupWeights = setInterval(() => {
    const pending = plan.refreshWeights();
    if (!pending && runner.discovered) clearInterval(startupWeights);
  }, 5_000);
  startupWeights.unref();
  await logs?.start();
  // After the log pipeline's start, which clears temporary files the queue's compaction also uses.
  await webhooks?.activate({
    siteName: (id) => runner.discovery.site(id)?.name,
    refreshTarget: {
      refreshSite: (id, signal) => runner.discovery.refreshSite(id, signal, "webhooks"),
      rediscover: async () => {
        if (runner.status().some((s) => s.name === runner.discoveryName && s.running)) return false;
        return (await runner.run(runner.discoveryName)).result !== "skipped";
      },
    },
  });
  const scheduler = new Scheduler(runner, config, logger);
  scheduler.start();
  publishShardInfo(registry, config.sites.shard);
  return {
    runner,
    planner: plan,
    stop: async () => {
      clearInterval(startupWeights);
      await webhooks?.stop();
      await scheduler.stop();
      await logs?.stop();
      withdrawShardInfo(registry);
    },
  };
}

export async function runDaemon({
  config,
  logger,
  exit = process.exit,
}: DaemonOptions): Promise<DaemonHandle> {
  const core = createCore(config, logger);
  if (config.webhooks.enabled) {
    core.webhooks = new WebhookReceiver({
      config,
      store: core.store,
      registry: core.registry,
      logger,
      volume: core.volume,
    });
  }
  let active: Active | undefined;
  let stopping: Promise<void> | undefined;
  // One writer per checkpoint directory: another exporter on it stands by (src/ha/lock.ts). A lost
  // lock stops everything it allowed at once (every checkpoint write checks it first), then the
  // process stands by for it again.
  const lock = config.logs.enabled
    ? new CheckpointLock({
        dir: config.logs.checkpointDir,
        timeoutMs: durationMs(config.logs.lockTimeout),
        logger,
        registry: core.registry,
        failures: core.volume,
        onLost: () => standDown(),
      })
    : undefined;
  if (lock) core.fence = () => lock.verify();
  const server = await startHttpServer({
    listenAddress: config.web.listenAddress,
    telemetryPath: config.web.telemetryPath,
    webConfigFile: config.web.configFile,
    exposition: new Exposition(core.store, core.registry),
    readiness: () =>
      active?.runner.readiness() ?? { ready: false, reason: lock?.standbyReason() ?? "starting" },
    landing: () => ({
      version: VERSION,
      sitesDiscovered: active?.runner.sites.length ?? 0,
      telemetryPath: config.web.telemetryPath,
      collectors: active?.runner.status() ?? [],
      plan: active?.planner.current(),
    }),
    logger,
    webhook: core.webhooks,
  });
  // A directory that cannot take writes now (full, read-only) does not fail the start: the exporter
  // serves its metrics and says why it stands by until it can take the lock.
  const standby = new AbortController();
  let activating: Promise<void> = Promise.resolve();
  const held = lock ? await lock.tryAcquire().catch(notWritable) : true;
  if (held) active = await activate(config, logger, core);
  else standBy();
  logger.info({ version: VERSION, url: server.url, standby: !active }, "sitehost-exporter started");

  return { url: server.url, stop };

  // Hoisted: the lock's onLost calls these (only ever after the server started).
  function stopAndExit(): void {
    void stop().finally(() => exit(1));
  }
  function notWritable(err: unknown): undefined {
    if (!(err instanceof CheckpointWriteError)) throw err;
    return undefined;
  }
  function standBy(): void {
    if (!lock || stopping) return;
    activating = lock.acquire(standby.signal).then(async (acquired) => {
      if (acquired && !stopping) active = await activate(config, logger, core);
    });
    activating.catch((err: unknown) => {
      logger.error({ err }, "could not start after taking over the checkpoint lock");
      stopAndExit();
    });
  }
  /** The lock was lost: stop collecting and shipping, drop what was collected, stand by again. */
  function standDown(): void {
    if (stopping) return;
    const previous = activating;
    activating = (async () => {
      await previous.catch(() => undefined);
      const was = active;
      active = undefined;
      await was?.stop();
      core.store.clear();
    })();
    void activating.then(standBy, (err: unknown) => {
      logger.error({ err }, "could not stop after losing the checkpoint lock");
      stopAndExit();
    });
  }
  function stop(): Promise<void> {
    return (stopping ??= (async () => {
      logger.info("shutting down");
      standby.abort();
      await activating.catch(() => undefined);
      await active?.stop();
      await lock?.release();
      core.volume?.close();
      await server.close();
      await core.api.close();
      logger.info("stopped");
    })());
  }
}

/** Discovery plus one run of each enabled (or named) collector; returns the exposition text. */
export async function runOnce({
  config,
  logger,
  collectors,
}: DaemonOptions & { collectors?: string[] }): Promise<string> {
  for (const name of collectors ?? []) {
    if (!(COLLECTOR_NAMES as readonly string[]).includes(name)) {
      throw new Error(
        `--collectors: unknown collector ${JSON.stringify(name)} (known: ${COLLECTOR_NAMES.join(", ")})`,
      );
    }
  }
  const { registry, api, store } = createCore(config, logger);
  const runner = new CollectorRunner({ config, api, store, registry, logger });
  try {
    const { result, error } = await runner.run(runner.discoveryName);
    if (!runner.discovered) {
      if (error instanceof ApiAuthError) throw new Error(`authentication failed: ${error.message}`);
      if (error instanceof ApiNetworkError)
        throw new Error(`the platform API is unreachable: ${error.message}`);
      throw new Error(
        `site discovery failed (${result})${error instanceof Error ? `: ${error.message}` : ""}`,
      );
    }
    const wanted = (collectors && collectors.length > 0 ? collectors : COLLECTOR_NAMES) as CollectorName[];
    await Promise.all(
      wanted.filter((n) => n !== runner.discoveryName && runner.isEnabled(n)).map((n) => runner.run(n)),
    );
    return store.render() + (await registry.metrics());
  } finally {
    await api.close();
  }
}
