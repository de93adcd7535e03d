/**
 * The log pipeline: one tailer per (site, stream), a global limit on tailers
 * polling at once, OTLP shipping with unlimited capped backoff while the
 * collector is down (and no fetching meanwhile), log-derived counters and the
 * log self-metrics.
 */
import { join } from "node:path";
import type { Logger } from "pino";
import { Counter, Gauge, type Registry } from "prom-client";
import type { ScrollStream, PhpLogEntry, ServerLogEntry, Site } from "../api/schemas.js";
import type { SitehostApi } from "../api/types.js";
import { durationMs, parseDuration } from "../config/duration.js";
import type { Config } from "../config/schema.js";
import type { Sample } from "../metrics/sample.js";
import { getOrCreate } from "../metrics/registry.js";
import type { MetricStore } from "../metrics/store.js";
import { CheckpointStore, type Checkpoint } from "./checkpoint.js";
import { createOtlpExporter, createResource, exportRecords, toReadable } from "./exporter.js";
import { counterKey, mapPhpEntry, mapServerEntry } from "./mapper.js";
import { Tailer, type PendingRecord, type SiteIdentity, type TailerHooks } from "./tailer.js";
import type { LogRecordExporter } from "@opentelemetry/sdk-logs";
import type { Resource } from "@opentelemetry/resources";

export interface LogPipelineDeps {
  config: Config;
  api: SitehostApi;
  registry: Registry;
  logger: Logger;
  /** Receives the log-derived counters (collector "logs"). */
  store?: MetricStore;
  /** Tests may inject an exporter; otherwise OTEL_* variables decide. */
  exporter?: LogRecordExporter;
  env?: NodeJS.ProcessEnv;
}

/** New log entries held in memory at once by all tailers together; beyond it pages spill to disk. */
const BUFFERED_ENTRIES_BUDGET = 20_000;

/** logs.startFrom → epoch ms. */
export function resolveStartFrom(startFrom: string, now: number): number {
  // Entry times have one-second precision (web-server logs carry epoch seconds): start at a whole
  // second so an entry written in the same second as "now" is not mistaken for history.
  const second = (ms: number) => Math.floor(ms / 1000) * 1000;
  if (startFrom === "now") return second(now);
  if (startFrom.startsWith("-")) return second(now - (parseDuration(startFrom.slice(1)) ?? 0));
  return Date.parse(startFrom);
}

function logMetrics(registry: Registry) {
  const registers = [registry];
  const counter = (name: string, help: string, labelNames: string[] = ["stream"]) =>
    getOrCreate(registry, name, () => new Counter({ name, help, labelNames, registers }));
  return {
    shipped: counter(
      "sitehost_exporter_log_records_shipped_total",
      "Log records acknowledged by the OTLP collector (or counted, with logs.ship false), by stream.",
    ),
    deduplicated: counter(
      "sitehost_exporter_log_records_deduplicated_total",
      "Log entries read again (overlap window, replays) and dropped as already delivered, by stream.",
    ),
    exportFailures: counter(
      "sitehost_exporter_log_export_failures_total",
      "OTLP export attempts that failed or were refused (retried with backoff), by stream.",
    ),
    gaps: counter(
      "sitehost_exporter_log_gaps_total",
      "Times the 7-day retention had already removed entries after a checkpoint (logs lost upstream), by stream.",
    ),
    malformed: counter(
      "sitehost_exporter_log_records_malformed_total",
      "Log entries that did not fit the schema and were skipped, by stream.",
    ),
    checkpointErrors: counter(
      "sitehost_exporter_log_checkpoint_errors_total",
      "Checkpoints that could not be trusted; the stream is stopped until reset, by stream.",
    ),
    cycleFailures: counter(
      "sitehost_exporter_log_cycle_failures_total",
      "Poll cycles abandoned after a failed page request (restarted from the checkpoint), by stream.",
    ),
    lag: getOrCreate(
      registry,
      "sitehost_exporter_log_lag_seconds",
      () =>
        new Gauge({
          name: "sitehost_exporter_log_lag_seconds",
          help: "Now minus the time of the newest shipped log record, by site and stream.",
          labelNames: ["site_id", "site", "stream"],
          registers,
        }),
    ),
  };
}

/** A FIFO counting semaphore (the limit on tailers polling at once). */
class Semaphore {
  private active = 0;
  private readonly waiters: Array<() => void> = [];
  constructor(private readonly limit: number) {}
  async acquire(): Promise<() => void> {
    if (this.active >= this.limit) await new Promise<void>((r) => this.waiters.push(r));
    this.active += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active -= 1;
      this.waiters.shift()?.();
    };
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

interface TailerSlot {
  tailer: Tailer;
  stop: AbortController;
  loop: Promise<void>;
}

export class LogPipeline {
  private readonly metrics: ReturnType<typeof logMetrics>;
  private readonly log: Logger;
  private readonly checkpoints: CheckpointStore;
  private readonly tailers = new Map<string, TailerSlot>();
  private readonly semaphore: Semaphore;
  private readonly pollMs: number;
  private readonly maxBackoffMs: number;
  /** Cancels fetching at shutdown. */
  private readonly fetchStop = new AbortController();
  /** Cancels an export still retrying after the shutdown deadline. */
  private readonly exportStop = new AbortController();
  private exporter: LogRecordExporter | undefined;
  private resource: Resource | undefined;
  /**
   * Shared circuit: exports currently failing and retrying. While any is, the
   * collector is down for everyone: no tailer fetches; the retrying export is the probe.
   */
  private failingExports = 0;
  private readonly counts = new Map<
    number,
    { site: SiteIdentity; php: Record<string, number>; server: Record<string, number> }
  >();
  private started = false;
  /** logs.startFrom resolved once, for every stream that has no checkpoint yet. */
  private startFromMs = 0;

  constructor(private readonly deps: LogPipelineDeps) {
    this.metrics = logMetrics(deps.registry);
    this.log = deps.logger.child({ component: "logs" });
    this.checkpoints = new CheckpointStore(deps.config.logs.checkpointDir);
    this.semaphore = new Semaphore(deps.config.logs.maxConcurrentTailers);
    this.pollMs = durationMs(deps.config.logs.pollInterval);
    this.maxBackoffMs = durationMs(deps.config.logs.maxExportBackoff);
  }

  async start(): Promise<void> {
    await this.checkpoints.init();
    // "now" is when the process started, not when a tailer first polls (after discovery and a
    // random delay): every line written while the exporter ran is shipped.
    this.startFromMs = resolveStartFrom(this.deps.config.logs.startFrom, performance.timeOrigin);
    if (this.deps.config.logs.ship) {
      this.exporter = this.deps.exporter ?? (await createOtlpExporter(this.deps.env));
      this.resource = createResource(this.deps.env);
    }
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

  /** Start tailers for new sites, stop those of sites that are gone (and drop their series). */
  updateSites(sites: readonly Site[]): void {
    if (!this.started || this.fetchStop.signal.aborted) return;
    const wanted = new Set<string>();
    for (const site of sites) {
      for (const stream of this.deps.config.logs.streams) {
        if (stream === "activity") continue;
        const key = `${site.id}/${stream}`;
        wanted.add(key);
        if (!this.tailers.has(key)) this.spawn({ id: site.id, name: site.name }, stream);
      }
    }
    for (const [key, slot] of this.tailers) {
      if (wanted.has(key)) continue;
      slot.stop.abort();
      this.tailers.delete(key);
      const { site, stream } = slot.tailer;
      this.metrics.lag.remove({ site_id: String(site.id), site: site.name, stream });
      this.checkpoints.release(site.id, stream);
      this.counts.delete(site.id);
    }
  }

  private spawn(site: SiteIdentity, stream: ScrollStream): void {
    const tailer = new Tailer(
      site,
      stream,
      this.deps.api,
      this.checkpoints,
      this.hooks,
      {
        overlapMs: durationMs(this.deps.config.logs.overlap),
        startFromMs: () => this.startFromMs,
        maxPagesPerCycle: 5000,
        // One budget for the whole pipeline: the tailers polling at once share it.
        maxBufferedEntries: Math.max(
          500,
          Math.floor(BUFFERED_ENTRIES_BUDGET / this.deps.config.logs.maxConcurrentTailers),
        ),
        spoolDir: join(this.deps.config.logs.checkpointDir, ".spool"),
        countKey: (entry) => counterKey(stream, entry),
      },
      this.log,
    );
    const stop = new AbortController();
    const signal = AbortSignal.any([stop.signal, this.fetchStop.signal]);
    const loop = this.run(tailer, signal);
    this.tailers.set(`${site.id}/${stream}`, { tailer, stop, loop });
  }

  private async run(tailer: Tailer, signal: AbortSignal): Promise<void> {
    // Fix the start point on disk before the first poll's delay: a kill meanwhile must not move it.
    // A failure here is reported by the first cycle, which prepares again.
    await tailer.prepare().catch(() => undefined);
    // Spread the first polls of many tailers over the interval.
    await sleep(Math.random() * Math.min(this.pollMs, 5000), signal);
    let published = false;
    while (!signal.aborted) {
      if (!published && tailer.checkpoint) {
        // Counters resume from the checkpoint, so they stay monotonic across restarts.
        this.publishCounts(tailer.site, tailer.stream, tailer.checkpoint.counts);
        published = true;
      }
      if (this.failingExports > 0) {
        await sleep(250, signal);
        continue;
      }
      const release = await this.semaphore.acquire();
      let more = false;
      let failed = false;
      try {
        if (signal.aborted) break;
        more = await tailer.cycle(signal);
        if (tailer.failed) return; // corrupt checkpoint: this stream stays stopped
      } catch (err) {
        failed = true;
        if (!signal.aborted) this.hooks.cycleFailed(tailer.site, tailer.stream, err);
      } finally {
        release();
      }
      if (!signal.aborted && tailer.checkpoint) this.updateLag(tailer.site, tailer.stream, tailer.checkpoint);
      const jitter = 0.8 + Math.random() * 0.4;
      await sleep(more ? 0 : failed ? Math.min(this.pollMs, 5000) * jitter : this.pollMs * jitter, signal);
    }
  }

  private updateLag(site: SiteIdentity, stream: ScrollStream, cp: Checkpoint): void {
    if (cp.highWaterMs > cp.floorMs || cp.recent.size > 0) {
      this.metrics.lag.set(
        { site_id: String(site.id), site: site.name, stream },
        Math.max(0, (Date.now() - cp.highWaterMs) / 1000),
      );
    }
  }

  private readonly hooks: TailerHooks = {
    ship: async (site, stream, records, signal) => {
      if (!this.exporter || !this.resource) return;
      const observed = Date.now();
      const readable = records.map((r) =>
        toReadable(this.map(site, stream, r), this.resource as Resource, observed),
      );
      const abort = AbortSignal.any([signal, this.exportStop.signal]);
      let failing = false;
      try {
        for (let attempt = 0; ; attempt++) {
          if (abort.aborted) throw new Error("export abandoned at shutdown");
          try {
            await exportRecords(this.exporter, readable);
            return;
          } catch (err) {
            this.metrics.exportFailures.inc({ stream });
            if (!failing) {
              failing = true;
              this.failingExports += 1;
            }
            const backoff =
              Math.min(this.maxBackoffMs, 500 * 2 ** Math.min(attempt, 10)) * (0.75 + Math.random() * 0.5);
            if (attempt === 0 || attempt % 10 === 0) {
              this.log.warn(
                { err: (err as Error).message, stream, retryInMs: Math.round(backoff) },
                "OTLP export failed; retrying (not fetching meanwhile)",
              );
            }
            await sleep(backoff, abort);
          }
        }
      } finally {
        if (failing) this.failingExports -= 1;
      }
    },
    delivered: (site, stream, records, cp) => {
      this.metrics.shipped.inc({ stream }, records.length);
      this.publishCounts(site, stream, cp.counts);
      this.updateLag(site, stream, cp);
    },
    deduplicated: (stream, n) => this.metrics.deduplicated.inc({ stream }, n),
    malformed: (stream, n) => this.metrics.malformed.inc({ stream }, n),
    gap: (site, stream, fromMs, toMs) => {
      this.metrics.gaps.inc({ stream });
      this.log.warn(
        {
          site: site.name,
          siteId: site.id,
          stream,
          from: new Date(fromMs).toISOString(),
          to: new Date(toMs).toISOString(),
        },
        "log gap: the platform's 7-day retention removed entries after the checkpoint",
      );
    },
    checkpointError: (site, stream, err) => {
      this.metrics.checkpointErrors.inc({ stream });
      this.log.error({ site: site.name, siteId: site.id, stream, file: err.file }, err.message);
    },
    collectorDown: () => this.failingExports > 0,
    cycleFailed: (site, stream, err) => {
      this.metrics.cycleFailures.inc({ stream });
      this.log.warn(
        { site: site.name, siteId: site.id, stream, err: (err as Error).message },
        "log poll cycle failed; restarting from the checkpoint",
      );
    },
  };

  private map(site: SiteIdentity, stream: ScrollStream, r: PendingRecord) {
    const mapped =
      stream === "server"
        ? mapServerEntry(r.entry as ServerLogEntry, r.timeMs)
        : mapPhpEntry(r.entry as PhpLogEntry, r.timeMs);
    mapped.attributes["sitehost.site.id"] = String(site.id);
    mapped.attributes["sitehost.site.name"] = site.name;
    mapped.attributes["sitehost.log.stream"] = stream;
    mapped.attributes["log.record.uid"] = `${r.fingerprint}-${r.occurrence}`;
    return mapped;
  }

  private publishCounts(site: SiteIdentity, stream: ScrollStream, counts: Record<string, number>): void {
    const store = this.deps.store;
    if (!store) return;
    let entry = this.counts.get(site.id);
    if (!entry) this.counts.set(site.id, (entry = { site, php: {}, server: {} }));
    entry[stream] = { ...counts };
    const labels = { site_id: String(site.id), site: site.name };
    const samples: Sample[] = [];
    for (const [key, value] of Object.entries(entry.server)) {
      const [status_class, cached] = key.split("|") as [string, string];
      samples.push({
        name: "sitehost_site_http_responses_total",
        labels: { ...labels, status_class, cached },
        value,
      });
    }
    for (const [severity, value] of Object.entries(entry.php)) {
      samples.push({ name: "sitehost_site_php_log_entries_total", labels: { ...labels, severity }, value });
    }
    store.replaceSite("logs", String(site.id), samples);
  }

  /** Stop fetching, let in-flight exports finish within logs.shutdownTimeout, flush checkpoints, shut the exporter down. */
  async stop(): Promise<void> {
    this.fetchStop.abort();
    const deadline = durationMs(this.deps.config.logs.shutdownTimeout);
    const loops = Promise.allSettled([...this.tailers.values()].map((s) => s.loop));
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<"expired">((resolve) => {
      timer = setTimeout(() => resolve("expired"), deadline);
    });
    // Each acknowledged export has already put its checkpoint in force; an export still unanswered at
    // the deadline is abandoned (its records are read again at the next start).
    if ((await Promise.race([loops, expired])) === "expired") {
      this.exportStop.abort();
      this.log.warn({ deadlineMs: deadline }, "log shutdown deadline passed; abandoning exports in flight");
    }
    clearTimeout(timer);
    this.exportStop.abort();
    await Promise.race([
      this.exporter?.shutdown().catch(() => undefined),
      new Promise((r) => setTimeout(r, 2000).unref()),
    ]);
    this.log.info("log pipeline stopped");
  }
}
