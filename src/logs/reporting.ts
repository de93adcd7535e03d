/**
 * How the log pipeline reports what each stream's tailer and shipper do: the per-stream self-metrics
 * (lag, last read to the end), and log lines for what needs a person (a gap, a corrupt checkpoint, a
 * collector that refuses records or is down), repeats summarised. The streams hold what their
 * series show and name their site as it now is, so their series move with a new name.
 */
import type { Logger } from "pino";
import type { LogStream } from "../api/schemas.js";
import type { ThrottledWarnings } from "../util/throttledLog.js";
import type { Clock } from "../util/time.js";
import type { Checkpoint, CorruptCheckpointError } from "./checkpoint.js";
import type { SeriesSource } from "../metrics/readGauge.js";
import { countExportFailure, type LogMetrics, type StreamLabel } from "./metrics.js";
import type { PreparedPage } from "./prepared.js";
import type { ExportHealth } from "./otlp/exportHealth.js";
import type { ShipperHooks } from "./shipper.js";
import { streamLabels } from "./streams.js";
import type { PagingProblem } from "./read/types.js";
import type { SiteIdentity } from "./read/types.js";
import {
  type Stall,
  STALL_REASONS,
  type StallReason,
  TOO_LARGE_SKIP_AFTER_MS,
  TOO_LARGE_SKIP_AFTER_READS,
} from "./stall.js";

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
 * A stream as its reports see it: its site and kind, and the numbers its series show, which it
 * keeps itself (one object per stream, thousands of streams: no reporter object each).
 */
export interface ReportedStream {
  readonly site: SiteIdentity;
  readonly stream: LogStream;
  /** When the stream was last read to its end, ms (undefined before the first time). */
  readonly readToEndAtMs: number | undefined;
  /**
   * Now minus the newest delivered entry, or minus the stream's start point while nothing was
   * delivered, seconds (undefined before its checkpoint was opened, or when it is corrupt).
   */
  readonly lagSeconds: number | undefined;
  /** What keeps the stream from advancing, once it has lasted (undefined while it advances). */
  readonly stall?: Stall | undefined;
  /** The checkpoint moved (an export was committed): the lag follows it. */
  checkpointMoved(cp: Checkpoint): void;
}

/**
 * The lag a checkpoint shows now: from its high-water mark, which is the stream's start point until
 * something was delivered (a stream that never ships, stalled or not, shows a lag that grows).
 */
export function lagOf(cp: Checkpoint, nowMs: number): number {
  return Math.max(0, (nowMs - cp.highWaterMs) / 1000);
}

/**
 * The running streams' lag and last-read series, named at each scrape (ReadGauge) from the numbers
 * the streams hold anyway, found through `streams` (no set of their own: one entry per stream).
 */
export class ReportedStreams {
  constructor(
    private readonly streams: () => Iterable<ReportedStream>,
    /** The kinds of stream tailed: each has its stalled series from the start, 0 while none is. */
    private readonly kinds: readonly LogStream[] = [],
  ) {}

  readonly lag: SeriesSource<StreamLabel> = {
    series: (emit) => {
      for (const s of this.streams())
        if (s.lagSeconds !== undefined) emit(streamLabels(s.site, s.stream), s.lagSeconds);
    },
  };
  /** Stalled streams by kind and reason (see stall.ts), counted at each scrape. */
  readonly stalled: SeriesSource<"stream" | "reason"> = {
    series: (emit) => {
      const zero = () => Object.fromEntries(STALL_REASONS.map((r) => [r, 0])) as Record<StallReason, number>;
      const counts = new Map<LogStream, Record<StallReason, number>>(this.kinds.map((k) => [k, zero()]));
      for (const s of this.streams()) {
        const reason = s.stall?.reason;
        if (!reason) continue;
        let byReason = counts.get(s.stream);
        if (!byReason) counts.set(s.stream, (byReason = zero()));
        byReason[reason] += 1;
      }
      for (const [stream, byReason] of counts)
        for (const reason of STALL_REASONS) emit({ stream, reason }, byReason[reason]);
    },
  };
  readonly lastRead: SeriesSource<StreamLabel> = {
    series: (emit) => {
      for (const s of this.streams())
        if (s.readToEndAtMs !== undefined) emit(streamLabels(s.site, s.stream), s.readToEndAtMs / 1000);
    },
  };
}

export interface Reporting {
  metrics: LogMetrics;
  log: Logger;
  warnings: ThrottledWarnings;
  clock: Clock;
  /** The OTLP endpoint's health: says what is wrong with it, once per cause and while it lasts. */
  exportHealth: ExportHealth;
}

/**
 * What the streams' tailers and shippers report, for every stream of the pipeline: each call names
 * its stream. A stream's own TailerEvents hand their calls here.
 */
export class StreamReports {
  /** New records taken from the pages read, every stream together, since the pipeline started. */
  recordsTaken = 0;

  constructor(private readonly r: Reporting) {}

  deduplicated(s: ReportedStream, n: number): void {
    this.r.metrics.deduplicated.inc({ stream: s.stream }, n);
  }

  malformed(s: ReportedStream, n: number): void {
    this.r.metrics.malformed.inc({ stream: s.stream }, n);
  }

  future(s: ReportedStream, n: number): void {
    const stream = s.stream;
    this.r.metrics.future.inc({ stream }, n);
    this.r.warnings.warn(
      `future ${stream}`,
      { stream, siteId: s.site.id, site: s.site.name, entries: n },
      "log entries stamped more than a minute in the future (clock skew?): shipped, without moving the checkpoint past now",
    );
  }

  late(s: ReportedStream, n: number): void {
    this.r.metrics.late.inc({ stream: s.stream }, n);
  }

  gap(s: ReportedStream, fromMs: number, toMs: number, skipped?: "too_large"): void {
    const stream = s.stream;
    this.r.metrics.gaps.inc({ stream });
    const range = { from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString() };
    const where = { site: s.site.name, siteId: s.site.id, stream, ...range };
    if (skipped === "too_large") {
      this.r.log.warn(
        { ...where, skippedAfterMinutes: TOO_LARGE_SKIP_AFTER_MS / 60_000 },
        `log gap: a log page larger than api.maxResponseSize was skipped, ${TOO_LARGE_SKIP_AFTER_MS / 60_000} minutes (and at least ${TOO_LARGE_SKIP_AFTER_READS} reads) after the stream first met it; the entries newer than it were shipped, those from 'from' to 'to' and on the page were not (raise api.maxResponseSize to read such pages)`,
      );
      return;
    }
    this.r.log.warn(
      where,
      "log gap: entries after the checkpoint are gone (the platform's retention) or could not be read (its paging broke off)",
    );
  }

  pagingProblem(s: ReportedStream, problem: PagingProblem): void {
    const stream = s.stream;
    this.r.metrics.pagingProblems.inc({ stream, problem });
    this.r.warnings.warn(
      `paging ${stream} ${problem}`,
      { stream, siteId: s.site.id, site: s.site.name, problem },
      PAGING_PROBLEMS[problem],
    );
  }

  checkpointError(s: ReportedStream, err: CorruptCheckpointError): void {
    const stream = s.stream;
    this.r.metrics.checkpointErrors.inc({ stream });
    this.r.log.error({ site: s.site.name, siteId: s.site.id, stream, file: err.file, err }, err.message);
  }

  startedFresh(s: ReportedStream, fromMs: number): void {
    const stream = s.stream;
    this.r.metrics.startedFresh.inc({ stream });
    this.r.warnings.warn(
      `fresh ${stream}`,
      { stream, siteId: s.site.id, site: s.site.name, from: new Date(fromMs).toISOString() },
      "log streams without a checkpoint start at logs.startFrom: entries written before it are not shipped (a new site, a site new to this shard, or a checkpoint directory that was not kept)",
    );
  }

  /** A read of the stream failed: it starts again from the checkpoint. */
  readFailed(s: ReportedStream, key: string, err: unknown): void {
    this.r.metrics.cycleFailures.inc({ stream: s.stream });
    this.r.warnings.warn(
      `read ${key}`,
      { site: s.site.name, siteId: s.site.id, stream: s.stream, err },
      "log read failed; starting again from the checkpoint",
    );
  }

  /** What the stream's shipper reports; `delivered`: what else to do after a commit (the log-derived counters). */
  shipperHooks(
    s: ReportedStream,
    delivered: (checkpoint: Checkpoint, pages: readonly PreparedPage[]) => void,
  ): ShipperHooks {
    return new ShipperReport(s, this.r, delivered);
  }
}

/** What a stream's shipper reports, as methods (one object per stream, no closure each). */
class ShipperReport implements ShipperHooks {
  constructor(
    private readonly reporter: ReportedStream,
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
    this.r.exportHealth.rejected(count, reason);
    this.r.warnings.warn(
      `rejected ${stream} ${reason}`,
      { stream, siteId: site.id, site: site.name, records: count, reason },
      "the OTLP collector refused log records for good while it took the others of their export; they were dropped (sitehost_exporter_log_records_rejected_total)",
    );
  }

  retrying(outcome: Parameters<ShipperHooks["retrying"]>[0]): void {
    countExportFailure(this.r.metrics, this.reporter.stream, outcome);
    // One warning per cause for every stream together, naming the endpoint; again while it lasts.
    this.r.exportHealth.failed(outcome, this.reporter.stream);
  }
}
