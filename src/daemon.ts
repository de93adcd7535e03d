/** Wiring: config → api client → discovery/scheduler → collectors → store → exposition → HTTP; and the log pipeline. */
import type { Logger } from "pino";
import { collectDefaultMetrics, Gauge, Registry } from "prom-client";
import { apiClientOptionsFromConfig, createApiClient, type ApiClient } from "./api/client.js";
import { ApiAuthError, ApiNetworkError } from "./api/errors.js";
import type { Config } from "./config/schema.js";
import { LogPipeline } from "./logs/pipeline.js";
import { Exposition } from "./metrics/exposition.js";
import { METRIC_FAMILIES } from "./metrics/families.js";
import { MetricStore } from "./metrics/store.js";
import { BudgetPlanner } from "./scheduling/budgetPlanner.js";
import { collectorSources } from "./scheduling/plan.js";
import { CollectorRunner, type RunnerDeps } from "./scheduling/runner.js";
import { Scheduler } from "./scheduling/scheduler.js";
import { startHttpServer } from "./server/http.js";
import { REVISION, VERSION } from "./version.js";
import { COLLECTOR_NAMES, type CollectorName } from "./config/schema.js";

export interface DaemonHandle {
  url: string;
  stop(): Promise<void>;
}

export interface DaemonOptions {
  config: Config;
  logger: Logger;
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
  new Gauge({
    name: "sitehost_exporter_build_info",
    help: "Build information; always 1.",
    labelNames: ["version", "revision", "nodejs"] as const,
    registers: [registry],
  }).set({ version: VERSION, revision: REVISION, nodejs: process.version }, 1);
  return registry;
}

interface Core {
  registry: Registry;
  api: ApiClient;
  store: MetricStore;
  runner: CollectorRunner;
}

type RunnerHooks = Pick<RunnerDeps, "onSites" | "onSiteCollected">;

function createCore(config: Config, logger: Logger, hooks: RunnerHooks = {}): Core {
  const registry = createRegistry();
  const api = createApiClient(apiClientOptionsFromConfig(config, registry, logger));
  const store = new MetricStore(METRIC_FAMILIES, { exclude: config.metrics.exclude });
  const runner = new CollectorRunner({ config, api, store, registry, logger, ...hooks });
  return { registry, api, store, runner };
}

export async function runDaemon({ config, logger }: DaemonOptions): Promise<DaemonHandle> {
  let logs: LogPipeline | undefined;
  // Created once the API client exists; discovery (which needs the client) updates it.
  const planning: { planner?: BudgetPlanner } = {};
  const core = createCore(config, logger, {
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
  const { registry, api, store, runner } = core;
  if (config.logs.enabled) logs = new LogPipeline({ config, api, registry, logger, store });
  const planner = new BudgetPlanner(config, registry, logger, api.budget, {
    sources: () => [
      ...collectorSources(runner.costs().filter((c) => c.enabled)),
      ...(logs ? [{ source: "logs", requestsPerSecond: logs.plannedRequestsPerSecond() }] : []),
    ],
  });
  planning.planner = planner;
  planner.update();
  const exposition = new Exposition(store, registry);
  const server = await startHttpServer({
    listenAddress: config.web.listenAddress,
    telemetryPath: config.web.telemetryPath,
    webConfigFile: config.web.configFile,
    exposition,
    readiness: () => runner.readiness(),
    landing: () => ({
      version: VERSION,
      sitesDiscovered: runner.sites.length,
      telemetryPath: config.web.telemetryPath,
      collectors: runner.status(),
      plan: planner.current(),
    }),
    logger,
  });
  await logs?.start();
  const scheduler = new Scheduler(runner, config, logger);
  scheduler.start();
  logger.info({ version: VERSION, url: server.url }, "sitehost-exporter started");

  let stopping: Promise<void> | undefined;
  return {
    url: server.url,
    stop: () =>
      (stopping ??= (async () => {
        logger.info("shutting down");
        await scheduler.stop();
        await logs?.stop();
        await server.close();
        await api.close();
        logger.info("stopped");
      })()),
  };
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
  const { registry, api, store, runner } = createCore(config, logger);
  try {
    const result = await runner.run(runner.discoveryName);
    if (!runner.discovered) {
      // Re-run the discovery call once more to surface its error as one line.
      const err = await api.allSites().then(
        () => undefined,
        (e: unknown) => e,
      );
      if (err instanceof ApiAuthError) throw new Error(`authentication failed: ${err.message}`);
      if (err instanceof ApiNetworkError) throw new Error(`the platform API is unreachable: ${err.message}`);
      throw new Error(`site discovery failed (${result})${err ? `: ${(err as Error).message}` : ""}`);
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
