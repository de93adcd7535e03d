/**
 * Wiring: config → api client → discovery/scheduler → collectors → store → exposition → HTTP; the log
 * pipeline and the webhook receiver. The daemon is a list of components started in order and stopped
 * in reverse: the API client, the HTTP server, the checkpoint lock, and the activation (standing by, or
 * the active exporter's own list: src/daemon/active.ts).
 */
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { collectDefaultMetrics } from "prom-client";
import { createApiClient } from "./api/client.js";
import { ApiAuthError, ApiNetworkError } from "./api/errors.js";
import { apiClientOptionsFromConfig } from "./api/options.js";
import { durationMs } from "./config/duration.js";
import { COLLECTOR_NAMES, type CollectorName, type Config } from "./config/schema.js";
import { activate, type Core } from "./daemon/active.js";
import { Activation } from "./daemon/activation.js";
import { CheckpointLock } from "./ha/lock.js";
import { CheckpointVolume } from "./ha/volume.js";
import { Exposition } from "./metrics/exposition.js";
import { METRIC_FAMILIES } from "./metrics/families.js";
import { SelfRegistry } from "./metrics/readGauge.js";
import { gauge } from "./metrics/selfMetric.js";
import { MetricStore } from "./metrics/store.js";
import { createCollection } from "./scheduling/collection.js";
import { startHttpServer, type HttpServerOptions, type RunningHttpServer } from "./server/http.js";
import { readinessWith, readinessWithExports } from "./scheduling/readiness.js";
import { buildStatus } from "./server/status.js";
import { ComponentGroup, type Component } from "./util/components.js";
import { REVISION, VERSION } from "./version.js";
import { exportHealthFor, type ExportHealth } from "./logs/otlp/exportHealth.js";
import { CheckpointMemory } from "./logs/checkpointMemory.js";
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
  /**
   * Called when everything has stopped, just before the daemon says so: from here a further
   * signal needs no graceful handling (the entry point gives signals their default action back).
   */
  onStopped?: () => void;
  /**
   * With logs on: switch V8's memory saver mode by the log load (logs/memorySaver.ts). The entry
   * point says so when the process runs with the heap flags it chose itself.
   */
  memorySaver?: boolean;
}

function createRegistry(): Registry {
  const registry = new SelfRegistry();
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

function createCore(config: Config, logger: Logger, exportHealth?: ExportHealth): Core {
  const registry = createRegistry();
  const api = createApiClient(apiClientOptionsFromConfig(config.api, registry, logger));
  const store = new MetricStore(METRIC_FAMILIES, { exclude: config.metrics.exclude });
  const volume = config.logs.enabled
    ? new CheckpointVolume({ dir: config.logs.checkpointDir, logger, registry })
    : undefined;
  const webhooks = config.webhooks.enabled
    ? new WebhookReceiver({ config, store, registry, logger, exportHealth, volume })
    : undefined;
  return { registry, api, store, webhooks, exportHealth, volume };
}

/** The HTTP server as a component: it starts first, so /-/healthy answers at once and /-/ready says why it is not ready yet. */
class HttpServerComponent implements Component {
  readonly name = "HTTP server";
  private server: RunningHttpServer | undefined;

  constructor(private readonly options: HttpServerOptions) {}

  get url(): string {
    return this.server?.url ?? "";
  }

  async start(): Promise<void> {
    this.server = await startHttpServer(this.options);
  }

  async stop(): Promise<void> {
    await this.server?.close();
  }
}

export async function runDaemon({
  config,
  logger,
  exit = process.exit,
  onStopped,
  memorySaver = false,
}: DaemonOptions): Promise<DaemonHandle> {
  // One view of the OTLP endpoint for the log streams and the webhook queue alike.
  const core = createCore(config, logger, exportHealthFor(config, process.env, logger));
  core.memorySaver = memorySaver;
  const parts = new ComponentGroup();
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      logger.info("shutting down");
      await parts.stop();
      onStopped?.();
      logger.info("stopped");
    })());
  const stopAndExit = (): void => void stop().finally(() => exit(1));
  // A lost lock stops what it allowed at once (every checkpoint write checks it first), then the
  // exporter stands by for it again. With logs off, the directory holds only the traffic counters.
  const lock =
    config.logs.enabled || config.collectors.traffic.enabled
      ? new CheckpointLock({
          dir: config.logs.checkpointDir,
          timeoutMs: durationMs(config.logs.lockTimeout),
          logger,
          registry: core.registry,
          failures: core.volume,
          onLost: () => activation.lost(),
        })
      : undefined;
  if (lock && config.logs.enabled) {
    core.fence = () => lock.verify();
    core.checkpointMemory = new CheckpointMemory();
  }
  const activation = new Activation({
    lock,
    standBy: config.logs.enabled,
    activate: (holdsLock) => activate(config, logger, core, holdsLock),
    // What was collected goes with the collectors: a standby publishes no site series.
    stoodDown: () => core.store.clear(),
    onFailed: stopAndExit,
    logger,
  });
  const ready = () =>
    readinessWithExports(
      readinessWith(activation.readiness(), core.volume?.status()),
      core.exportHealth?.notReadyReason(),
    );
  const server = new HttpServerComponent({
    listenAddress: config.web.listenAddress,
    telemetryPath: config.web.telemetryPath,
    webConfigFile: config.web.configFile,
    exposition: new Exposition(core.store, core.registry),
    readiness: ready,
    status: () =>
      buildStatus({
        version: VERSION,
        telemetryPath: config.web.telemetryPath,
        apiUrl: config.api.url,
        ready: ready(),
        auth: core.api.authStatus(),
        clock: core.api.clockOffset(),
        deprecations: core.api.deprecations(),
        active: activation.status(),
        logs: { enabled: config.logs.enabled, shipping: config.logs.ship, streams: config.logs.streams },
        export: core.exportHealth?.status(),
        lock: lock && { held: lock.held, reason: lock.standbyReason(), dir: config.logs.checkpointDir },
        volume: core.volume?.status(),
        shard: config.sites.shard,
        webhooks: core.webhooks?.status(),
        now: Date.now(),
      }),
    logger,
    webhook: core.webhooks,
    probeTargets: config.probes.enabled ? () => activation.probeTargets() : undefined,
  });
  await parts.start([
    { name: "API client", stop: () => core.api.close() },
    core.volume && { name: "checkpoint volume", stop: () => core.volume?.close() },
    server,
    lock && { name: "checkpoint lock", stop: () => lock.release() },
    activation,
  ]);
  logger.info(
    { version: VERSION, url: server.url, standby: activation.standingBy },
    "sitehost-exporter started",
  );
  return { url: server.url, stop };
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
  const { runner } = createCollection(
    { sites: config.sites, collectors: config.collectors, maxConcurrency: config.api.maxConcurrency },
    { api, store, registry, logger },
  );
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
