/**
 * The webhook receiver as the daemon runs it. The HTTP route exists from the start (answering 503
 * until the exporter is active, so the platform retries); `activate` opens the durable queue under
 * logs.checkpointDir (only the exporter holding the checkpoint lock writes there) and starts shipping
 * it, when logs are enabled and shipped; `stop` stops taking events, then lets the queue drain within
 * logs.shutdownTimeout. Without log shipping, events are counted and answered at once.
 */
import { join } from "node:path";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { durationMs } from "../config/duration.js";
import type { Config } from "../config/schema.js";
import { shardOf } from "../discovery/shard.js";
import { countExportFailure, logMetrics } from "../logs/metrics.js";
import { REFUSAL_REASONS } from "../logs/otlp/outcome.js";
import { createLogSink } from "../logs/otlp/createSink.js";
import { exportHealthFor, type ExportHealth } from "../logs/otlp/exportHealth.js";
import type { LogSink } from "../logs/otlp/sink.js";
import type { WriteFailures } from "../ha/volume.js";
import type { MetricStore } from "../metrics/store.js";
import { ThrottledWarnings } from "../util/throttledLog.js";
import { systemClock } from "../util/time.js";
import { WebhookAuth } from "./auth.js";
import { WebhookDelivery } from "./delivery.js";
import { createWebhookHandler, type WebhookHandler, type WebhookTarget } from "./handler.js";
import { EventCounts, webhookSelfMetrics, type WebhookSelfMetrics } from "./metrics.js";
import type { WebhookPayload } from "./payload.js";
import { QUEUE_FILE, WebhookQueue } from "./queue.js";
import { SiteRefresher, type RefresherOptions, type RefreshTarget } from "./refresh.js";

export interface WebhookReceiverDeps {
  config: Config;
  store: MetricStore;
  registry: Registry;
  logger: Logger;
  /** Where writes of the queue that the volume refused are reported. */
  volume?: WriteFailures;
  /** The OTLP endpoint's health, shared with the log streams; one of its own otherwise. */
  exportHealth?: ExportHealth;
}

export interface ActivationInputs {
  refreshTarget: RefreshTarget;
  siteName(id: number): string | undefined;
  /** Replaces the sink the OTEL_* variables choose (tests). */
  sink?: LogSink;
  env?: NodeJS.ProcessEnv;
  refresher?: Partial<RefresherOptions>;
  /** The refreshes' request rate changed: re-plan the budget. */
  onRefreshRateChange?: () => void;
  /** An event was accepted, about this site when it names one (the log pipeline reads activity logs). */
  onEvent?: (siteId: number | undefined, payload: WebhookPayload) => void;
}

/** Records per export, and about this many bytes of queue lines. */
const EXPORT_MAX_RECORDS = 500;
const EXPORT_MAX_BYTES = 1024 * 1024;

export class WebhookReceiver {
  readonly path: string;
  readonly handle: WebhookHandler;
  private readonly metrics: WebhookSelfMetrics;
  private readonly log: Logger;
  private target: WebhookTarget | undefined;
  private refresher: SiteRefresher | undefined;
  private delivery: WebhookDelivery | undefined;
  private queue: WebhookQueue | undefined;

  constructor(private readonly deps: WebhookReceiverDeps) {
    const { config } = deps;
    if (!config.webhooks.token) throw new Error("webhooks.token is required when webhooks are enabled");
    this.path = config.webhooks.path;
    this.log = deps.logger.child({ component: "webhooks" });
    this.metrics = webhookSelfMetrics(deps.registry);
    this.handle = createWebhookHandler({
      auth: new WebhookAuth(config.webhooks.token),
      counts: new EventCounts(deps.store),
      metrics: this.metrics,
      logger: deps.logger,
      target: () => this.target,
    });
  }

  /** Start taking events. */
  async activate(inputs: ActivationInputs): Promise<void> {
    const { config } = this.deps;
    // Single reads after events take at most a tenth of the budget; past it they join a discovery run.
    const refresher = new SiteRefresher(inputs.refreshTarget, this.deps.logger, {
      maxReadsPerSecond: Math.max(0.5, config.api.maxRequestsPerSecond / 10),
      onRateChange: inputs.onRefreshRateChange,
      ...inputs.refresher,
    });
    this.refresher = refresher;
    const { index, count } = config.sites.shard;
    const target: WebhookTarget = {
      siteName: inputs.siteName,
      // Another shard's site is that replica's to read.
      refresh: (id) => {
        if (count <= 1 || shardOf(id, count) === index) refresher.request(id);
      },
      ...(inputs.onEvent ? { happened: inputs.onEvent } : {}),
    };
    if (config.logs.enabled && config.logs.ship) {
      const queue = new WebhookQueue(
        join(config.logs.checkpointDir, QUEUE_FILE),
        undefined,
        (depth) => this.metrics.queued.set(depth),
        this.deps.volume,
      );
      const { replayed, skippedLines } = await queue.open();
      if (replayed > 0 || skippedLines > 0) {
        this.log.info(
          { replayed, skippedLines, file: queue.file },
          "webhook events left queued by the previous run are shipped now",
        );
      }
      const sink = inputs.sink ?? (await createLogSink({ env: inputs.env ?? process.env }));
      this.delivery = this.startDelivery(queue, sink, inputs.env ?? process.env);
      this.queue = queue;
      target.queue = queue;
    }
    this.target = target;
    this.log.info(
      { path: this.path, shipped: Boolean(this.queue) },
      this.queue
        ? "accepting webhook events (each is on disk before it is answered)"
        : "accepting webhook events (counted only: logs are not shipped)",
    );
  }

  /** What the status page says of the receiver. */
  status(): { path: string; accepting: boolean; queued: number | undefined } {
    return { path: this.path, accepting: this.target !== undefined, queued: this.queue?.depth };
  }

  /** API requests per second the site refreshes made lately (for the request plan). */
  requestsPerSecond(): number {
    return this.refresher?.requestsPerSecond() ?? 0;
  }

  /** Stop taking events (503 from now on), then let the queue drain within logs.shutdownTimeout. */
  async stop(): Promise<void> {
    this.target = undefined;
    await this.refresher?.stop();
    await this.delivery?.stop(durationMs(this.deps.config.logs.shutdownTimeout));
    await this.queue?.close();
  }

  private startDelivery(queue: WebhookQueue, sink: LogSink, env: NodeJS.ProcessEnv): WebhookDelivery {
    const m = logMetrics(this.deps.registry);
    const stream = "webhook";
    const errors = new ThrottledWarnings(this.log, 60_000, systemClock);
    // What the webhook queue's shipping counts, at 0 from the start.
    for (const c of [m.shipped, m.rejected, m.exportFailures]) c.inc({ stream }, 0);
    for (const reason of REFUSAL_REASONS) m.exportsRefused.inc({ stream, reason }, 0);
    const health = this.deps.exportHealth ?? exportHealthFor(this.deps.config, env, this.deps.logger);
    const delivery = new WebhookDelivery(
      queue,
      sink,
      {
        shipped: (n) => {
          health.succeeded(stream);
          m.shipped.inc({ stream }, n);
        },
        rejected: (n, reason) => {
          m.rejected.inc({ stream }, n);
          health.rejected(n, reason);
          this.log.warn(
            { records: n, reason },
            "the OTLP collector refused webhook records for good while it took the others of their export; dropped",
          );
        },
        retrying: (outcome) => {
          countExportFailure(m, stream, outcome);
          // Named once per cause with the endpoint (shared with the log streams); the events stay
          // queued on disk and are retried.
          health.failed(outcome, stream);
        },
        queueError: (err) =>
          errors.error(
            "ack",
            { err },
            "could not mark webhook events as shipped (they ship again after a restart)",
          ),
      },
      {
        maxRecords: EXPORT_MAX_RECORDS,
        maxBytes: EXPORT_MAX_BYTES,
        backoff: { baseMs: 500, capMs: durationMs(this.deps.config.logs.maxExportBackoff) },
        clock: systemClock,
      },
    );
    delivery.start();
    return delivery;
  }
}
