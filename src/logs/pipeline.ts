/**
 * The log pipeline: one tailer per (site, stream) and one for the account's activity log, read by the
 * scheduler's workers with adaptive polling, shipped over OTLP with durable checkpoints, and the
 * log-derived counters. What each kind of stream is lives in streams.ts, how streams report in
 * reporting.ts, the choice of sink in otlp/createSink.ts; this file keeps the set of streams in step
 * with the sites, and starts and stops the whole.
 */
import { join } from "node:path";
import type { LogRecordExporter } from "@opentelemetry/sdk-logs";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { LogStream, Site } from "../api/schemas.js";
import type { SitehostApi } from "../api/types.js";
import { durationMs } from "../config/duration.js";
import type { Config } from "../config/schema.js";
import type { MetricStore } from "../metrics/store.js";
import { ThrottledWarnings } from "../util/throttledLog.js";
import { settlesWithin, systemClock, type Clock } from "../util/time.js";
import type { Checkpoint } from "./checkpoint.js";
import { ActivityClaims } from "./activityClaims.js";
import { publishCounts } from "./counts.js";
import { CheckpointStore, type StreamCheckpoint } from "./journal.js";
import { logMetrics, type LogMetrics } from "./metrics.js";
import { countingSink, createLogSink } from "./otlp/createSink.js";
import type { LogSink } from "./otlp/sink.js";
import { shipperHooks, tailerEvents, type Reporting } from "./reporting.js";
import { LogScheduler } from "./scheduler.js";
import { CollectorHealth, StreamShipper } from "./shipper.js";
import { BufferBudget, clearSpool } from "./spool.js";
import {
  ACCOUNT,
  encoderFor,
  fingerprintOf,
  resolveStartFrom,
  retentionMs,
  sourceFor,
  streamKey,
  streamLabels,
} from "./streams.js";
import { Tailer, type SiteIdentity } from "./tailer.js";

export interface LogPipelineDeps {
  config: Config;
  api: SitehostApi;
  registry: Registry;
  logger: Logger;
  /** Receives the log-derived counters (collector "logs"). */
  store?: MetricStore;
  /** Tests may inject a sink (or an SDK exporter); otherwise the OTEL_* variables decide. */
  sink?: LogSink;
  exporter?: LogRecordExporter;
  env?: NodeJS.ProcessEnv;
  clock?: Clock;
}

/** Bytes of new, encoded records held in memory by all reads together; beyond it pages spill to disk. */
const BUFFERED_BYTES_BUDGET = 16 * 1024 * 1024;
/** One export carries at most this many records ... */
const EXPORT_MAX_RECORDS = 2_000;
/** ... or about this many encoded bytes. */
const EXPORT_MAX_BYTES = 1024 * 1024;
/** Exports in flight per stream. */
const EXPORT_DEPTH = 2;
const MAX_PAGES_PER_READ = 5_000;

export class LogPipeline {
  private readonly metrics: LogMetrics;
  private readonly log: Logger;
  private readonly checkpoints: CheckpointStore;
  private readonly clock: Clock;
  private readonly health = new CollectorHealth();
  private readonly budget = new BufferBudget(BUFFERED_BYTES_BUDGET);
  private readonly tailers = new Map<string, Tailer>();
  private readonly activityClaims = new ActivityClaims();
  /** When each stream was last read to its end, ms (to move the gauge when a site is renamed). */
  private readonly lastReadAt = new Map<string, number>();
  private readonly warnings: ThrottledWarnings;
  private readonly reporting: Reporting;
  private readonly pollMs: number;
  private readonly maxPollMs: number;
  /** Cancels an export still retrying after the shutdown deadline. */
  private readonly exportStop = new AbortController();
  private scheduler: LogScheduler | undefined;
  private sink: LogSink | undefined;
  /** Streams whose last read found entries (for the request plan). */
  private readonly active = new Set<string>();
  private readonly counts = new Map<
    number,
    { site: SiteIdentity; php: Record<string, number>; server: Record<string, number> }
  >();
  private startFromMs = 0;
  private started = false;
  private stopping = false;

  constructor(private readonly deps: LogPipelineDeps) {
    this.metrics = logMetrics(deps.registry);
    this.log = deps.logger.child({ component: "logs" });
    this.clock = deps.clock ?? systemClock;
    this.checkpoints = new CheckpointStore(deps.config.logs.checkpointDir);
    this.warnings = new ThrottledWarnings(this.log, 60_000, this.clock);
    this.reporting = { metrics: this.metrics, log: this.log, warnings: this.warnings };
    this.pollMs = durationMs(deps.config.logs.pollInterval);
    this.maxPollMs = Math.max(this.pollMs, durationMs(deps.config.logs.maxPollInterval));
  }

  private get spoolDir(): string {
    return join(this.deps.config.logs.checkpointDir, ".spool");
  }

  async start(): Promise<void> {
    await this.checkpoints.init();
    await clearSpool(this.spoolDir);
    if (await this.checkpoints.isEmpty()) {
      this.log.warn(
        { checkpointDir: this.deps.config.logs.checkpointDir, startFrom: this.deps.config.logs.startFrom },
        "no log checkpoints yet: every stream starts at logs.startFrom. If this directory is not kept " +
          "across restarts (an emptyDir, a container's own filesystem), logs written while the exporter " +
          "is not running are never shipped",
      );
    }
    // "now" is when the process started, not when a stream is first read: every line written while
    // the exporter ran is shipped.
    this.startFromMs = resolveStartFrom(this.deps.config.logs.startFrom, performance.timeOrigin);
    if (this.deps.config.logs.ship) {
      const { sink, exporter, env = process.env } = this.deps;
      this.sink = await createLogSink({ sink, exporter, env });
    }
    this.scheduler = new LogScheduler({
      workers: this.deps.config.logs.maxConcurrentTailers,
      pollMs: this.pollMs,
      maxPollMs: this.maxPollMs,
      clock: this.clock,
      paused: () => this.health.down,
      onOutcome: (key, outcome) => {
        if (outcome.kind === "found" || outcome.kind === "more") this.active.add(key);
        else if (outcome.kind === "empty") this.active.delete(key);
      },
      onError: (key, err) => this.readFailed(key, err),
    });
    this.started = true;
    this.log.info(
      {
        ship: this.deps.config.logs.ship,
        streams: this.deps.config.logs.streams,
        checkpointDir: this.deps.config.logs.checkpointDir,
      },
      "log pipeline started",
    );
  }

  /** Requests per second the streams need: each at least once per maxPollInterval, active ones per pollInterval. */
  /** Streams not yet read to their end once (each needs at least one request at start-up). */
  unreadStreams(): number {
    return Math.max(0, this.tailers.size - this.lastReadAt.size);
  }

  plannedRequestsPerSecond(): number {
    const idle = this.tailers.size / (this.maxPollMs / 1000);
    const extra = this.active.size * (1000 / this.pollMs - 1000 / this.maxPollMs);
    return idle + extra;
  }

  /** Start tailers for new sites, stop those of sites that are gone (and drop their series). */
  updateSites(sites: readonly Site[]): void {
    if (!this.started || this.stopping) return;
    const wanted = new Set<string>();
    const streams = this.deps.config.logs.streams;
    for (const site of sites) {
      for (const stream of streams) {
        const key = streamKey(site, stream);
        wanted.add(key);
        const running = this.tailers.get(key);
        if (!running) this.spawn({ id: site.id, name: site.name }, stream);
        else if (running.site.name !== site.name) this.rename(key, running, site.name);
      }
    }
    // The account's activity log is one for all shards: the first shard ships it, alone.
    if (streams.includes("activity") && this.deps.config.sites.shard.index === 0) {
      const account = streamKey(ACCOUNT, "activity");
      wanted.add(account);
      if (!this.tailers.has(account)) this.spawn(ACCOUNT, "activity");
    }
    for (const [key, tailer] of this.tailers) {
      if (wanted.has(key)) continue;
      this.tailers.delete(key);
      this.lastReadAt.delete(key);
      this.active.delete(key);
      void this.scheduler?.remove(key).then(() => tailer.close());
      const { site, stream } = tailer;
      this.metrics.lag.remove(streamLabels(site, stream));
      this.metrics.lastRead.remove(streamLabels(site, stream));
      if (stream !== "activity") this.counts.delete(site.id);
      this.deps.store?.replaceSite("logs", String(site.id), []);
    }
  }

  /**
   * A site was renamed: its records, series and warnings carry the new name from now on. The tailer,
   * its encoder and its shipper share one identity object, so changing it there changes it for all.
   */
  private rename(key: string, tailer: Tailer, name: string): void {
    const { site, stream } = tailer;
    this.metrics.lag.remove(streamLabels(site, stream));
    this.metrics.lastRead.remove(streamLabels(site, stream));
    site.name = name;
    const at = this.lastReadAt.get(key);
    if (at !== undefined) this.metrics.lastRead.set(streamLabels(site, stream), at / 1000);
    const cp = tailer.checkpoint;
    if (cp && stream !== "activity") this.publish(site, stream, cp);
    if (cp) this.updateLag(site, stream, cp);
  }

  /** The site served requests lately: read its web-server log soon. */
  hintActive(siteId: number): void {
    this.scheduler?.nudge(streamKey({ id: siteId }, "server"));
  }

  private spawn(site: SiteIdentity, stream: LogStream): void {
    const key = streamKey(site, stream);
    const source = sourceFor(this.deps.api, site, stream);
    const tailer = new Tailer(
      site,
      stream,
      source,
      this.checkpoints,
      (stored) => this.shipperFor(site, stream, stored),
      {
        ...tailerEvents(this.reporting, site, stream),
        readToEnd: (atMs) => {
          this.lastReadAt.set(key, atMs);
          this.metrics.lastRead.set(streamLabels(site, stream), atMs / 1000);
        },
      },
      {
        overlapMs: durationMs(this.deps.config.logs.overlap),
        startFromMs: () => this.startFromMs,
        maxPagesPerRead: MAX_PAGES_PER_READ,
        ...(stream === "activity"
          ? { claim: (fp: string) => this.activityClaims.claim(fp, key, this.clock.now()) }
          : {}),
        retentionMs: retentionMs(site, stream),
        spoolDir: this.spoolDir,
        bufferBudget: this.budget,
        fingerprint: fingerprintOf(stream),
        encoder: encoderFor(this.sink ?? countingSink, site, stream, () => this.clock.now()),
        clock: this.clock,
        collectorDown: () => this.health.down,
      },
    );
    this.tailers.set(key, tailer);
    // Spread the first reads of many streams over a few seconds.
    const first = this.clock.now() + Math.random() * Math.min(this.pollMs, 5_000);
    this.scheduler?.add({ key, read: (signal) => this.read(tailer, signal) }, first);
  }

  private async read(tailer: Tailer, signal: AbortSignal) {
    const outcome = await tailer.read(signal);
    const cp = tailer.checkpoint;
    if (cp && tailer.stream !== "activity") this.publish(tailer.site, tailer.stream, cp);
    if (cp) this.updateLag(tailer.site, tailer.stream, cp);
    return outcome;
  }

  private shipperFor(site: SiteIdentity, stream: LogStream, stored: StreamCheckpoint): StreamShipper {
    return new StreamShipper(
      this.sink ?? countingSink,
      stored,
      this.health,
      shipperHooks(this.reporting, site, stream, (cp) => {
        if (stream !== "activity") this.publish(site, stream, cp);
        this.updateLag(site, stream, cp);
      }),
      {
        maxRecords: EXPORT_MAX_RECORDS,
        maxBytes: EXPORT_MAX_BYTES,
        depth: EXPORT_DEPTH,
        backoff: { baseMs: 500, capMs: durationMs(this.deps.config.logs.maxExportBackoff) },
        clock: this.clock,
      },
      this.exportStop.signal,
    );
  }

  private updateLag(site: SiteIdentity, stream: LogStream, cp: Checkpoint): void {
    if (cp.highWaterMs > cp.floorMs || cp.recent.size > 0) {
      this.metrics.lag.set(
        streamLabels(site, stream),
        Math.max(0, (this.clock.now() - cp.highWaterMs) / 1000),
      );
    }
  }

  private publish(site: SiteIdentity, stream: "php" | "server", cp: Checkpoint): void {
    if (!this.deps.store) return;
    let entry = this.counts.get(site.id);
    if (!entry) this.counts.set(site.id, (entry = { site, php: {}, server: {} }));
    entry.site = site;
    entry[stream] = { ...cp.counts };
    publishCounts(this.deps.store, entry);
  }

  private readFailed(key: string, err: unknown): void {
    const tailer = this.tailers.get(key);
    if (!tailer || this.stopping) return;
    this.metrics.cycleFailures.inc({ stream: tailer.stream });
    this.warnings.warn(
      `read ${key}`,
      { site: tailer.site.name, siteId: tailer.site.id, stream: tailer.stream, err },
      "log read failed; starting again from the checkpoint",
    );
  }

  /**
   * Stop reading, let exports in flight finish within logs.shutdownTimeout (each acknowledged export
   * has put its checkpoint in force; one still unanswered is abandoned and its records are read again
   * at the next start), then shut the exporter down and remove spool files.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    const deadline = durationMs(this.deps.config.logs.shutdownTimeout);
    const scheduler = this.scheduler;
    if (scheduler && !(await settlesWithin(scheduler.stop(), deadline))) {
      this.log.warn({ deadlineMs: deadline }, "log shutdown deadline passed; abandoning exports in flight");
    }
    this.exportStop.abort(new Error("shutting down"));
    if (this.sink) await settlesWithin(this.sink.shutdown(), 2000);
    await clearSpool(this.spoolDir);
    this.log.info("log pipeline stopped");
  }
}
