/**
 * How the log pipeline reports what each stream's tailer and shipper do: the per-stream self-metrics
 * (lag, last read to the end), and log lines for what needs a person (a gap, a corrupt checkpoint, a
 * collector that refuses records or is down), repeats summarised. One reporter per stream; it names
 * the site it was last given (`rename`), and its per-site series move with the name.
 */
import type { Logger } from "pino";
import type { LogStream } from "../api/schemas.js";
import type { ThrottledWarnings } from "../util/throttledLog.js";
import type { Clock } from "../util/time.js";
import type { Checkpoint, CorruptCheckpointError } from "./checkpoint.js";
import type { SeriesSink, SeriesSource } from "../metrics/readGauge.js";
import type { LogMetrics, StreamLabel } from "./metrics.js";
import type { PreparedPage } from "./prepared.js";
import type { ExportHealth } from "./otlp/exportHealth.js";
import type { ShipperHooks } from "./shipper.js";
import { streamLabels } from "./streams.js";
import type { PagingProblem } from "./read/types.js";
import type { SiteIdentity, TailerEvents } from "./read/types.js";

/** What each paging problem means for the stream, for the warning. */
export const PAGING_PROBLEMS: Record<PagingProblem, string> = {
  no_continuation:
    "a full log page came without a scroll_id: the read is retried from the checkpoint (nothing skipped)",
  repeated_page: "a log scroll returned a page it had returned before (it loops): the read stopped there",
  page_limit: "a log read reached the most pages one read may fetch: it stopped there",
  byte_limit: "a log read held the most bytes one read may hold: it stopped there",
  unusable_pages: "a log read met page after page without one usable entry: it stopped there",
};

/**
 * The streams' reporters, which name their lag and last-read series at each scrape (ReadGauge): the
 * series are not kept apart from the numbers the reporters hold anyway.
 */
export class ReportedStreams {
  readonly live = new Set<StreamReporter>();
  readonly lag: SeriesSource<StreamLabel> = {
    series: (emit) => {
      for (const r of this.live) r.lagSeries(emit);
    },
  };
  readonly lastRead: SeriesSource<StreamLabel> = {
    series: (emit) => {
      for (const r of this.live) r.lastReadSeries(emit);
    },
  };
}

export interface Reporting {
  metrics: LogMetrics;
  /** Where each reporter puts itself while its stream runs. */
  streams: ReportedStreams;
  log: Logger;
  warnings: ThrottledWarnings;
  clock: Clock;
  /** The OTLP endpoint's health: says what is wrong with it, once per cause and while it lasts. */
  exportHealth: ExportHealth;
}

export class StreamReporter implements TailerEvents {
  private named: SiteIdentity;
  /** When the stream was last read to its end, ms (undefined before the first time). */
  private lastReadAtMs: number | undefined;
  /** Newest delivered entry, ms, once anything was delivered. */
  private highWaterMs: number | undefined;
  /** Now minus highWaterMs when the checkpoint last moved, seconds. */
  private lagSeconds: number | undefined;

  constructor(
    private readonly r: Reporting,
    site: SiteIdentity,
    readonly stream: LogStream,
  ) {
    this.named = site;
    r.streams.live.add(this);
  }

  get site(): SiteIdentity {
    return this.named;
  }

  /** Whether the stream has been read to its end at least once. */
  get readOnce(): boolean {
    return this.lastReadAtMs !== undefined;
  }

  /** The site's name changed: its series and log lines carry the new one from now on. */
  rename(site: SiteIdentity): void {
    this.named = site;
    this.setLag();
  }

  /** The stream is gone: drop its series. */
  remove(): void {
    this.r.streams.live.delete(this);
  }

  /** The checkpoint moved (a read ended, an export was committed): the lag follows it. */
  checkpointMoved(cp: Checkpoint): void {
    if (cp.highWaterMs > cp.floorMs || cp.recent.size > 0) this.highWaterMs = cp.highWaterMs;
    this.setLag();
  }

  lagSeries(emit: SeriesSink<StreamLabel>): void {
    if (this.lagSeconds !== undefined) emit(streamLabels(this.named, this.stream), this.lagSeconds);
  }

  lastReadSeries(emit: SeriesSink<StreamLabel>): void {
    if (this.lastReadAtMs !== undefined)
      emit(streamLabels(this.named, this.stream), this.lastReadAtMs / 1000);
  }

  private setLag(): void {
    if (this.highWaterMs === undefined) return;
    this.lagSeconds = Math.max(0, (this.r.clock.now() - this.highWaterMs) / 1000);
  }

  // The tailer's events, as methods: one reporter per stream serves them without a closure each.
  deduplicated(n: number): void {
    this.r.metrics.deduplicated.inc({ stream: this.stream }, n);
  }

  malformed(n: number): void {
    this.r.metrics.malformed.inc({ stream: this.stream }, n);
  }

  future(n: number): void {
    const stream = this.stream;
    this.r.metrics.future.inc({ stream }, n);
    this.r.warnings.warn(
      `future ${stream}`,
      { stream, siteId: this.named.id, site: this.named.name, entries: n },
      "log entries stamped more than a minute in the future (clock skew?): shipped, without moving the checkpoint past now",
    );
  }

  late(n: number): void {
    this.r.metrics.late.inc({ stream: this.stream }, n);
  }

  gap(fromMs: number, toMs: number): void {
    const stream = this.stream;
    this.r.metrics.gaps.inc({ stream });
    this.r.log.warn(
      {
        site: this.named.name,
        siteId: this.named.id,
        stream,
        from: new Date(fromMs).toISOString(),
        to: new Date(toMs).toISOString(),
      },
      "log gap: entries after the checkpoint are gone (the platform's retention) or could not be read (its paging broke off)",
    );
  }

  pagingProblem(problem: PagingProblem): void {
    const stream = this.stream;
    this.r.metrics.pagingProblems.inc({ stream, problem });
    this.r.warnings.warn(
      `paging ${stream} ${problem}`,
      { stream, siteId: this.named.id, site: this.named.name, problem },
      PAGING_PROBLEMS[problem],
    );
  }

  checkpointError(err: CorruptCheckpointError): void {
    const stream = this.stream;
    this.r.metrics.checkpointErrors.inc({ stream });
    this.r.log.error(
      { site: this.named.name, siteId: this.named.id, stream, file: err.file, err },
      err.message,
    );
  }

  readToEnd(atMs: number): void {
    this.lastReadAtMs = atMs;
  }

  startedFresh(fromMs: number): void {
    const stream = this.stream;
    this.r.metrics.startedFresh.inc({ stream });
    this.r.warnings.warn(
      `fresh ${stream}`,
      { stream, siteId: this.named.id, site: this.named.name, from: new Date(fromMs).toISOString() },
      "log streams without a checkpoint start at logs.startFrom: entries written before it are not shipped (a new site, a site new to this shard, or a checkpoint directory that was not kept)",
    );
  }

  /** A read of this stream failed: it starts again from the checkpoint. */
  readFailed(key: string, err: unknown): void {
    this.r.metrics.cycleFailures.inc({ stream: this.stream });
    this.r.warnings.warn(
      `read ${key}`,
      { site: this.named.name, siteId: this.named.id, stream: this.stream, err },
      "log read failed; starting again from the checkpoint",
    );
  }

  /** `delivered`: what else to do after a commit (the log-derived counters). */
  shipperHooks(delivered: (checkpoint: Checkpoint, pages: readonly PreparedPage[]) => void): ShipperHooks {
    return new ShipperReport(this, this.r, delivered);
  }
}

/** What a stream's shipper reports, as methods (one object per stream, no closure each). */
class ShipperReport implements ShipperHooks {
  constructor(
    private readonly reporter: StreamReporter,
    private readonly r: Reporting,
    private readonly onDelivered: (checkpoint: Checkpoint, pages: readonly PreparedPage[]) => void,
  ) {}

  delivered(count: number, cp: Checkpoint, pages: readonly PreparedPage[]): void {
    this.r.exportHealth.succeeded(this.reporter.stream);
    this.r.metrics.shipped.inc({ stream: this.reporter.stream }, count);
    this.onDelivered(cp, pages);
    this.reporter.checkpointMoved(cp);
  }

  rejected(count: number, reason: string): void {
    const { stream, site } = this.reporter;
    this.r.metrics.rejected.inc({ stream }, count);
    this.r.warnings.warn(
      `rejected ${stream} ${reason}`,
      { stream, siteId: site.id, site: site.name, records: count, reason },
      "the OTLP collector refused log records for good; they were dropped (sitehost_exporter_log_records_rejected_total)",
    );
  }

  retrying(outcome: Parameters<ShipperHooks["retrying"]>[0]): void {
    this.r.metrics.exportFailures.inc({ stream: this.reporter.stream });
    // One warning per cause for every stream together, naming the endpoint; again while it lasts.
    this.r.exportHealth.failed(outcome, this.reporter.stream);
  }
}
