/**
 * The log pipeline: one tailer per (site, stream) and one for the account's activity log, read by the
 * scheduler's workers with adaptive polling, shipped over OTLP with durable checkpoints, and the
 * log-derived counters. What each kind of stream is lives in streams.ts, keeping the running streams in
 * step with the sites in streamSet.ts, one stream's parts in tailedStream.ts, how streams report in
 * reporting.ts, the counters in counts.ts, the choice of sink in otlp/createSink.ts; this file builds
 * the shared parts, and starts and stops the whole.
 */
import { join } from "node:path";
import type { LogRecordExporter } from "@opentelemetry/sdk-logs";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { ErrorGroupBook } from "./errorGroups.js";
import type { ActivityEntry } from "../api/logSchemas.js";
import type { LogStream, Site } from "../api/schemas.js";
import type { SitehostApi } from "../api/types.js";
import { durationMs } from "../config/duration.js";
import type { Config } from "../config/schema.js";
import { CheckpointWriteError, type CheckpointVolume } from "../ha/volume.js";
import type { MetricStore } from "../metrics/store.js";
import { ThrottledWarnings } from "../util/throttledLog.js";
import { offsetClock, settlesWithin, systemClock, type Clock } from "../util/time.js";
import { ActivityClaims } from "./activityClaims.js";
import { LogCounts } from "./counts.js";
import type { CheckpointMemory } from "./checkpointMemory.js";
import { CheckpointFencedError, CheckpointStore } from "./journal.js";
import { countersFromZero, logMetrics } from "./metrics.js";
import { countingSink, createLogSink } from "./otlp/createSink.js";
import { exportHealthFor, type ExportHealth } from "./otlp/exportHealth.js";
import type { LogSink } from "./otlp/sink.js";
import {
  PAGING_PROBLEMS,
  type ReportedStream,
  ReportedStreams,
  type Reporting,
  StreamReports,
} from "./reporting.js";
import { arrivalIntervalMs } from "./pace.js";
import { isActivityEntry } from "./pending.js";
import { SCROLL_PAGE_SIZE } from "./read/decide.js";
import { type ResourceIdentity, streamResource } from "./resource.js";
import { LogScheduler, type LogPolling } from "./scheduler.js";
import { CollectorHealth, type ShipperOptions, StreamShipper } from "./shipper.js";
import { BufferBudget, clearSpool } from "./spool.js";
import { ACCOUNT, fingerprintOf, resolveStartFrom, streamKey, wantedStreams } from "./streams.js";
import type { TailerOptions } from "./tailer.js";
import { StreamSet } from "./streamSet.js";
import { TailedStream, type StreamContext } from "./tailedStream.js";
import { histogramLayout } from "./histogramLayout.js";
import { type StallSummary, summarizeStalls } from "./stall.js";

export interface LogPipelineDeps {
  /** Its slice: the logs section, the SLOs counted from the logs, the histogram's cache switch, the shard. */
  config: Pick<Config, "logs" | "slos" | "metrics" | "sites" | "webhooks">;
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
  /**
   * The platform's clock minus `clock`, ms, as the API client measures it (0 until measured). Log
   * entries are stamped by the platform: a read's bounds, where a stream without a checkpoint starts
   * and the lag are worked out in the platform's time, `clock` corrected by this. Default 0.
   */
  platformOffsetMs?: () => number;
  /**
   * Each entry of a site's activity log that a read meets and may not have shipped yet (it may meet
   * one again), with its time by this process's clock: what the site's states are learnt from.
   */
  onSiteActivity?: (siteId: number, entry: ActivityEntry, atMs: number) => void;
  /** Where PHP error records are grouped (their records then carry the group). */
  errorGroups?: ErrorGroupBook;
  /** Whether logs.checkpointDir takes writes (failed writes go there; while it does not, nothing is read). */
  volume?: CheckpointVolume;
  /** Why this process may not write checkpoints now (it does not hold the lock), or undefined. */
  fence?: () => string | undefined;
  /** What streams closed while fenced knew, for a next pipeline that finds their files missing. */
  checkpointMemory?: CheckpointMemory;
  /** The OTLP endpoint's health, shared with the webhook queue; one of its own otherwise. */
  exportHealth?: ExportHealth;
  /**
   * false: web-server records count their status alone, no duration, bytes or exemplars (the
   * benchmark's baseline for what the histogram costs per record). Default true.
   */
  requestDurations?: boolean;
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

/** Before start, after start, after stop: the states `updateSites` is told apart in. */
type Phase =
  | { kind: "created"; queued: readonly Site[] | undefined }
  | { kind: "running"; streams: StreamSet<TailedStream>; scheduler: LogScheduler }
  | { kind: "stopped" };

export class LogPipeline {
  private readonly log: Logger;
  private readonly checkpoints: CheckpointStore;
  /** This machine's clock: timers, waits, backoff. */
  private readonly clock: Clock;
  /** The platform's time (see LogPipelineDeps.platformOffsetMs): what entry times are compared with. */
  private readonly platform: Clock;
  private readonly health = new CollectorHealth();
  private readonly budget = new BufferBudget(BUFFERED_BYTES_BUDGET);
  private readonly activityClaims = new ActivityClaims();
  private readonly counts: LogCounts;
  private readonly reporting: Reporting;
  private readonly pollMs: number;
  private readonly maxPollMs: number;
  /** Cancels an export still retrying after the shutdown deadline. */
  private readonly exportStop = new AbortController();
  /** Streams whose last read found entries (for the request plan). */
  private readonly active = new Set<string>();
  private phase: Phase = { kind: "created", queued: undefined };
  /** The per-stream lag and last-read series, named by the running streams. */
  private readonly reported: ReportedStreams;
  private readonly reports: StreamReports;
  private sink: LogSink | undefined;

  constructor(private readonly deps: LogPipelineDeps) {
    this.log = deps.logger.child({ component: "logs" });
    this.clock = deps.clock ?? systemClock;
    this.platform = offsetClock(this.clock, this.platformOffsetMs);
    this.counts = new LogCounts(deps.store, {
      histogram: histogramLayout(deps.config),
      exemplars: deps.config.metrics.exemplars,
    });
    const metrics = logMetrics(deps.registry);
    countersFromZero(metrics, deps.config.logs.streams, Object.keys(PAGING_PROBLEMS));
    if (deps.config.logs.streams.includes("server") && deps.config.logs.requestTimeUnit === "auto")
      for (const unit of ["seconds", "milliseconds"]) metrics.requestTimeUnits.inc({ unit }, 0);
    const streams = new ReportedStreams(() => this.reporters(), deps.config.logs.streams);
    metrics.lag.add(streams.lag);
    metrics.lastRead.add(streams.lastRead);
    metrics.stalled.add(streams.stalled);
    this.reported = streams;
    this.reporting = {
      metrics,
      log: this.log,
      warnings: new ThrottledWarnings(this.log, 60_000, this.clock),
      // The streams' times (last read to the end, the lag) are the platform's.
      clock: this.platform,
      exportHealth:
        deps.exportHealth ?? exportHealthFor(deps.config, deps.env ?? process.env, deps.logger, this.clock),
    };
    this.reports = new StreamReports(this.reporting);
    this.checkpoints = new CheckpointStore(deps.config.logs.checkpointDir, {
      failures: deps.volume,
      fence: deps.fence,
      now: () => this.platform.now(),
      floorRepaired: (file, wasMs, nowMs) =>
        this.reporting.warnings.warn(
          "floor in the future",
          { file, floor: new Date(wasMs).toISOString(), now: new Date(nowMs).toISOString() },
          "a log checkpoint started in the future (logs.startFrom was ahead of the clock); it starts now instead, so its stream ships again",
        ),
      memory: deps.checkpointMemory,
      resumedFromMemory: (file) =>
        this.reporting.warnings.warn(
          "checkpoint resumed from memory",
          { file },
          "a log checkpoint file was missing (the checkpoint directory was emptied or recreated while this exporter ran); its stream resumes where this exporter last had it, and the file is written again",
        ),
    });
    this.pollMs = durationMs(deps.config.logs.pollInterval);
    this.maxPollMs = Math.max(this.pollMs, durationMs(deps.config.logs.maxPollInterval));
  }

  private get spoolDir(): string {
    return join(this.deps.config.logs.checkpointDir, ".spool");
  }

  /** Open the checkpoints and the sink, then run the streams of the sites given so far. */
  async start(): Promise<void> {
    if (this.phase.kind !== "created") throw new Error("the log pipeline was already started");
    const { logs } = this.deps.config;
    await this.checkpoints.init();
    await clearSpool(this.spoolDir);
    if ((this.deps.checkpointMemory?.size ?? 0) === 0 && (await this.checkpoints.isEmpty())) {
      this.log.warn(
        { checkpointDir: logs.checkpointDir, startFrom: logs.startFrom },
        "no log checkpoints yet: every stream starts at logs.startFrom. If this directory is not kept " +
          "across restarts (an emptyDir, a container's own filesystem), logs written while the exporter " +
          "is not running are never shipped",
      );
    }
    // "now" is when the process started, not when a stream is first read: every line written while
    // the exporter ran is shipped. In the platform's time: a stream is first read after discovery,
    // by when the API's answers have measured the offset.
    const startFromMs = () => resolveStartFrom(logs.startFrom, this.platformTimeOrigin);
    if (logs.ship) {
      const { sink, exporter, env = process.env } = this.deps;
      this.sink = await createLogSink({ sink, exporter, env });
    }
    const scheduler = new LogScheduler({
      workers: logs.maxConcurrentTailers,
      pollMs: this.pollMs,
      maxPollMs: this.maxPollMs,
      clock: this.clock,
      // The collector is down, or checkpoints cannot be written: nothing would be shipped.
      paused: () => this.health.down || (this.deps.volume?.paused ?? false),
      onOutcome: (key, outcome) => {
        if (outcome.kind === "found" || outcome.kind === "more") this.active.add(key);
        else if (outcome.kind === "empty") this.active.delete(key);
      },
      onError: (key, err) => this.readFailed(key, err),
    });
    const context = this.streamContext(scheduler, startFromMs);
    const streams = new StreamSet((spec) => {
      const stream = new TailedStream(spec, context);
      // Spread the first reads of many streams over a few seconds.
      const first = this.clock.now() + Math.random() * Math.min(this.pollMs, 5_000);
      scheduler.add(stream, first);
      return stream;
    });
    const queued = this.phase.queued;
    this.phase = { kind: "running", streams, scheduler };
    this.log.info(
      { ship: logs.ship, streams: logs.streams, checkpointDir: logs.checkpointDir },
      "log pipeline started",
    );
    if (queued) this.updateSites(queued);
  }

  private readonly platformOffsetMs = (): number => this.deps.platformOffsetMs?.() ?? 0;

  /** When the process started, by the platform's clock (as measured now). */
  private get platformTimeOrigin(): number {
    return performance.timeOrigin + this.platformOffsetMs();
  }

  private streamContext(scheduler: LogScheduler, startFromMs: () => number): StreamContext {
    const sink = this.sink ?? countingSink;
    const { logs } = this.deps.config;
    const resources = { perSite: logs.resourcePerSite, namespace: logs.serviceNamespace };
    const env = this.deps.env ?? process.env;
    const sinks = new WeakMap<ResourceIdentity, LogSink>();
    // One for every stream's shipper.
    const shipping: ShipperOptions = {
      maxRecords: EXPORT_MAX_RECORDS,
      maxBytes: EXPORT_MAX_BYTES,
      depth: EXPORT_DEPTH,
      backoff: { baseMs: 500, capMs: durationMs(this.deps.config.logs.maxExportBackoff) },
      clock: this.clock,
    };
    const tailerSettings = {
      overlapMs: durationMs(this.deps.config.logs.overlap),
      startFromMs,
      maxPagesPerRead: MAX_PAGES_PER_READ,
      spoolDir: this.spoolDir,
      bufferBudget: this.budget,
      clock: this.platform,
      collectorDown: () => this.health.down,
    };
    const tailing = (stream: LogStream): TailerOptions => ({
      ...tailerSettings,
      fingerprint: fingerprintOf(stream),
    });
    return {
      api: this.deps.api,
      checkpoints: this.checkpoints,
      sink,
      counts: this.counts,
      requestTimeUnit: this.deps.config.logs.requestTimeUnit,
      unitDecided: (unit, site) => {
        this.reporting.metrics.requestTimeUnits.inc({ unit });
        if (unit === "milliseconds")
          this.reporting.warnings.warn(
            "request time in milliseconds",
            { site: site.name, siteId: site.id },
            "web-server request_time values are read as milliseconds: the stream's first values were whole numbers too large for seconds. Set logs.requestTimeUnit to seconds if they are seconds",
          );
      },
      requestDurations: this.deps.requestDurations ?? true,
      ...(this.deps.errorGroups ? { errorGroups: this.deps.errorGroups } : {}),
      clock: this.platform,
      // With webhooks, an activity log is read on its site's events, and otherwise this often.
      maxPollMs: this.deps.config.webhooks.enabled
        ? { activity: Math.max(this.pollMs, durationMs(logs.activityPollInterval)) }
        : {},
      tailing: { php: tailing("php"), server: tailing("server"), activity: tailing("activity") },
      claim: (fp, key, siteId, entry, timeMs) => {
        if (siteId !== ACCOUNT.id && isActivityEntry(entry))
          this.deps.onSiteActivity?.(siteId, entry, timeMs - this.platformOffsetMs());
        return this.activityClaims.claim(fp, key, this.clock.now());
      },
      reports: this.reports,
      sinkFor: (who) => {
        // The streams of one site share their spec's resource, and so one sink (its encoded frame).
        let forWho = sinks.get(who);
        if (!forWho) {
          forWho = sink.forResource?.(streamResource(who, resources, env)) ?? sink;
          sinks.set(who, forWho);
        }
        return forWho;
      },
      shipper: (stored, streamSink, hooks) =>
        new StreamShipper(streamSink, stored, this.health, hooks, shipping, this.exportStop.signal),
      unschedule: async (stream) => {
        this.active.delete(stream.key);
        await scheduler.remove(stream);
      },
    };
  }

  /** New records taken from the pages read since the pipeline started: the work the log path does. */
  get recordsTaken(): number {
    return this.reports.recordsTaken;
  }

  /** The running streams (their lag and last-read series are named at each scrape). */
  private reporters(): Iterable<ReportedStream> {
    return this.phase.kind === "running" ? this.phase.streams.values() : [];
  }

  /** The streams that cannot advance: counted by reason, the longest stalled named (the status page). */
  stalls(): StallSummary {
    return summarizeStalls(this.reporters());
  }

  /** Streams not yet read to their end once (each needs at least one request at start-up). */
  unreadStreams(): number {
    if (this.phase.kind !== "running") return 0;
    let unread = 0;
    for (const stream of this.phase.streams.values()) if (!stream.readOnce) unread += 1;
    return unread;
  }

  /** Requests per second the streams need: each at least once per maxPollInterval, active ones per pollInterval. */
  plannedRequestsPerSecond(): number {
    const streams = this.phase.kind === "running" ? this.phase.streams.size : 0;
    const idle = streams / (this.maxPollMs / 1000);
    const extra = this.active.size * (1000 / this.pollMs - 1000 / this.maxPollMs);
    return idle + extra;
  }

  /**
   * Run the streams of these sites: start those of new sites, rename those of renamed ones, stop
   * those of sites that are gone (and drop their series). Before `start` the latest list waits for
   * it; after `stop` there is nothing left to run.
   */
  updateSites(sites: readonly Site[]): void {
    const phase = this.phase;
    if (phase.kind === "created") {
      this.phase = { kind: "created", queued: sites };
      return;
    }
    if (phase.kind === "stopped") return;
    const { logs, sites: scope } = this.deps.config;
    phase.streams.reconcile(wantedStreams(sites, logs.streams, scope.shard.index));
  }

  /** How the streams are polled now (for the request plan); undefined before start and after stop. */
  polling(): LogPolling | undefined {
    return this.phase.kind === "running" ? this.phase.scheduler.polling() : undefined;
  }

  /**
   * The site served this many requests a second from its origin lately (not from the edge cache):
   * its web-server log gets about as many lines. A hint only: see LogScheduler.nudge.
   */
  hintUncachedTraffic(siteId: number, perSecond: number): void {
    if (this.phase.kind !== "running" || !(perSecond > 0)) return;
    const stream = this.phase.streams.get(streamKey({ id: siteId }, "server"));
    const expectedMs = arrivalIntervalMs(perSecond, SCROLL_PAGE_SIZE, this.pollMs, this.maxPollMs);
    if (stream) this.phase.scheduler.nudge(stream, expectedMs);
  }

  /**
   * A webhook event about the site (or the account, `siteId` undefined): its activity log, and the
   * account's, have a new entry: read them now and once more shortly after.
   */
  siteEvent(siteId: number | undefined): void {
    if (this.phase.kind !== "running") return;
    const { streams, scheduler } = this.phase;
    for (const id of siteId === undefined ? [ACCOUNT.id] : [siteId, ACCOUNT.id]) {
      const stream = streams.get(streamKey({ id }, "activity"));
      if (stream) scheduler.wake(stream);
    }
  }

  private readFailed(key: string, err: unknown): void {
    if (this.phase.kind !== "running") return;
    // Logged once per cause where they happen: the checkpoint directory's volume, the lock.
    if (err instanceof CheckpointWriteError || err instanceof CheckpointFencedError) return;
    this.phase.streams.get(key)?.readFailed(err);
  }

  /**
   * Stop reading, let exports in flight finish within logs.shutdownTimeout (each acknowledged export
   * has put its checkpoint in force; one still unanswered is abandoned and its records are read again
   * at the next start), then shut the exporter down and remove spool files.
   */
  async stop(): Promise<void> {
    const phase = this.phase;
    this.phase = { kind: "stopped" };
    const deadline = durationMs(this.deps.config.logs.shutdownTimeout);
    if (phase.kind === "running" && !(await settlesWithin(phase.scheduler.stop(), deadline))) {
      this.log.warn({ deadlineMs: deadline }, "log shutdown deadline passed; abandoning exports in flight");
    }
    // Its streams' series go with it: a pipeline started after a lost lock publishes its own.
    const { metrics } = this.reporting;
    metrics.lag.delete(this.reported.lag);
    metrics.lastRead.delete(this.reported.lastRead);
    metrics.stalled.delete(this.reported.stalled);
    this.exportStop.abort(new Error("shutting down"));
    if (this.sink) await settlesWithin(this.sink.shutdown(), 2000);
    // The lock was lost: what the streams had acknowledged stays in memory, for a directory that
    // was emptied or recreated and is taken again (the files are written no more either way).
    if (phase.kind === "running" && this.deps.fence?.() !== undefined && this.deps.checkpointMemory) {
      await Promise.allSettled([...phase.streams.values()].map((s) => s.releaseCheckpoint()));
    }
    // A process that lost the lock leaves the directory to its new holder.
    if (this.deps.fence?.() === undefined) await clearSpool(this.spoolDir);
    this.log.info("log pipeline stopped");
  }
}
