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
import type { Checkpoint } from "./checkpoint.js";
import type { LogMetrics } from "./metrics.js";
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

export interface Reporting {
  metrics: LogMetrics;
  log: Logger;
  warnings: ThrottledWarnings;
  clock: Clock;
  /** The OTLP endpoint's health: says what is wrong with it, once per cause and while it lasts. */
  exportHealth: ExportHealth;
}

export class StreamReporter {
  private named: SiteIdentity;
  /** When the stream was last read to its end, ms (undefined before the first time). */
  private lastReadAtMs: number | undefined;
  /** Newest delivered entry, ms, once anything was delivered. */
  private highWaterMs: number | undefined;

  constructor(
    private readonly r: Reporting,
    site: SiteIdentity,
    readonly stream: LogStream,
  ) {
    this.named = site;
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
    this.removeSeries();
    this.named = site;
    this.setLastRead();
    this.setLag();
  }

  /** The stream is gone: drop its series. */
  remove(): void {
    this.removeSeries();
  }

  /** The checkpoint moved (a read ended, an export was committed): the lag follows it. */
  checkpointMoved(cp: Checkpoint): void {
    if (cp.highWaterMs > cp.floorMs || cp.recent.size > 0) this.highWaterMs = cp.highWaterMs;
    this.setLag();
  }

  private labels() {
    return streamLabels(this.named, this.stream);
  }

  private removeSeries(): void {
    this.r.metrics.lag.remove(this.labels());
    this.r.metrics.lastRead.remove(this.labels());
  }

  private setLastRead(): void {
    if (this.lastReadAtMs !== undefined) this.r.metrics.lastRead.set(this.labels(), this.lastReadAtMs / 1000);
  }

  private setLag(): void {
    if (this.highWaterMs === undefined) return;
    this.r.metrics.lag.set(this.labels(), Math.max(0, (this.r.clock.now() - this.highWaterMs) / 1000));
  }

  tailerEvents(): TailerEvents {
    const { metrics: m, warnings, log } = this.r;
    const stream = this.stream;
    return {
      deduplicated: (n) => m.deduplicated.inc({ stream }, n),
      malformed: (n) => m.malformed.inc({ stream }, n),
      future: (n) => {
        m.future.inc({ stream }, n);
        warnings.warn(
          `future ${stream}`,
          { stream, siteId: this.named.id, site: this.named.name, entries: n },
          "log entries stamped more than a minute in the future (clock skew?): shipped, without moving the checkpoint past now",
        );
      },
      late: (n) => m.late.inc({ stream }, n),
      gap: (fromMs, toMs) => {
        m.gaps.inc({ stream });
        log.warn(
          {
            site: this.named.name,
            siteId: this.named.id,
            stream,
            from: new Date(fromMs).toISOString(),
            to: new Date(toMs).toISOString(),
          },
          "log gap: entries after the checkpoint are gone (the platform's retention) or could not be read (its paging broke off)",
        );
      },
      pagingProblem: (problem) => {
        m.pagingProblems.inc({ stream, problem });
        warnings.warn(
          `paging ${stream} ${problem}`,
          { stream, siteId: this.named.id, site: this.named.name, problem },
          PAGING_PROBLEMS[problem],
        );
      },
      checkpointError: (err) => {
        m.checkpointErrors.inc({ stream });
        log.error({ site: this.named.name, siteId: this.named.id, stream, file: err.file, err }, err.message);
      },
      readToEnd: (atMs) => {
        this.lastReadAtMs = atMs;
        this.setLastRead();
      },
      startedFresh: (fromMs) => {
        m.startedFresh.inc({ stream });
        warnings.warn(
          `fresh ${stream}`,
          { stream, siteId: this.named.id, site: this.named.name, from: new Date(fromMs).toISOString() },
          "log streams without a checkpoint start at logs.startFrom: entries written before it are not shipped (a new site, a site new to this shard, or a checkpoint directory that was not kept)",
        );
      },
    };
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
  shipperHooks(delivered: (checkpoint: Checkpoint) => void): ShipperHooks {
    const { metrics: m, warnings } = this.r;
    const stream = this.stream;
    return {
      delivered: (count, cp) => {
        this.r.exportHealth.succeeded(stream);
        m.shipped.inc({ stream }, count);
        delivered(cp);
        this.checkpointMoved(cp);
      },
      rejected: (count, reason) => {
        m.rejected.inc({ stream }, count);
        warnings.warn(
          `rejected ${stream} ${reason}`,
          { stream, siteId: this.named.id, site: this.named.name, records: count, reason },
          "the OTLP collector refused log records for good; they were dropped (sitehost_exporter_log_records_rejected_total)",
        );
      },
      retrying: (outcome) => {
        m.exportFailures.inc({ stream });
        // One warning per cause for every stream together, naming the endpoint; again while it lasts.
        this.r.exportHealth.failed(outcome, stream);
      },
    };
  }
}
