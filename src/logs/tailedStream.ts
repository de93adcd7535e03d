/**
 * One running stream: its reads (it is its own tailer), the encoder and reports that name its site,
 * the sink view that sends its batches under its site's resource, and where its checkpoint's counts
 * go. Its site's name changes only through `rename`, which hands the new identity to each part that
 * carries it (the shipper knows the site by id alone); the resource changes from the next batch on.
 */
import type { LogStream } from "../api/schemas.js";
import type { SitehostApi } from "../api/types.js";
import type { Clock } from "../util/time.js";
import type { Checkpoint, CorruptCheckpointError } from "./checkpoint.js";
import type { LogCounts } from "./counts.js";
import type { CheckpointStore, StreamCheckpoint } from "./journal.js";
import type { Batch } from "./otlp/batch.js";
import type { ExportOutcome } from "./otlp/outcome.js";
import type { ProtoWriter } from "./otlp/protoWriter.js";
import type { BatchSender, LogSink } from "./otlp/sink.js";
import type { ResourceIdentity } from "./resource.js";
import type { PendingRecord, StreamEntry } from "./pending.js";
import type { PreparedPage, RecordCounter, RecordEncoder } from "./prepared.js";
import { lagOf, type ReportedStream, type StreamReports } from "./reporting.js";
import type { RequestTimeSetting } from "./requestCounts.js";
import type { ShipperHooks, StreamShipper } from "./shipper.js";
import {
  encoderFor,
  type ServerCounting,
  sourceFor,
  type StreamEncoder,
  type StreamKind,
  type StreamSpec,
} from "./streams.js";
import type { ScheduledStream } from "./scheduler.js";
import type { ErrorGroupBook } from "./errorGroups.js";
import type { ManagedStream } from "./streamSet.js";
import type { ClaimEntry, PageSource, PagingProblem } from "./read/types.js";
import {
  type ReadOutcome,
  type SiteIdentity,
  Tailer,
  type TailerEvents,
  type TailerOptions,
} from "./tailer.js";

/** What every stream shares (the pipeline's parts). */
export interface StreamContext {
  api: SitehostApi;
  checkpoints: CheckpointStore;
  sink: LogSink;
  counts: LogCounts;
  requestTimeUnit: RequestTimeSetting;
  /** With `auto`: a web-server stream's unit was decided (counted, and said when unusual). */
  unitDecided?: ServerCounting["unitDecided"];
  /** false: web-server records count their status alone (see LogPipelineDeps). */
  requestDurations: boolean;
  /** The sites' PHP error groups (PHP records are grouped and marked). */
  errorGroups?: ErrorGroupBook;
  /** The platform's time (lag, observed times): entries are stamped by the platform. */
  clock: Clock;
  /** Longest read intervals by kind of stream, where not logs.maxPollInterval (ScheduledStream). */
  maxPollMs: Readonly<Partial<Record<LogStream, number>>>;
  /** The tailers' settings by kind of stream (one object for every stream of a kind). */
  tailing: Readonly<Record<LogStream, TailerOptions>>;
  /**
   * For claimed kinds: may this stream ship the entry (see StreamKind.claimed)? Sees every entry of
   * a read that may be new, the site's (its id; the account's is 0) and its time by the platform.
   */
  claim: (fingerprint: string, key: string, siteId: number, entry: StreamEntry, timeMs: number) => boolean;
  reports: StreamReports;
  /** The sink under the resource of these records. */
  sinkFor: (resource: ResourceIdentity) => LogSink;
  shipper: (cp: StreamCheckpoint, sink: BatchSender, hooks: ShipperHooks) => StreamShipper;
  /** The stream is no longer wanted: stop scheduling it, then `closed`. */
  unschedule: (stream: TailedStream) => Promise<void>;
}

/**
 * One object per stream: it is its own tailer (Tailer, which it gives its site, source and
 * settings), its records' encoder (RecordEncoder, made when the first record is encoded: an idle
 * stream holds none), and what its shipper sends through (BatchSender): each batch goes out under
 * the resource the stream has when it is sent (a batch never holds two sites' records: a shipper
 * serves one stream).
 */
export class TailedStream
  extends Tailer
  implements ManagedStream, ScheduledStream, RecordEncoder, BatchSender, ReportedStream, TailerEvents
{
  protected readonly source: PageSource;
  private made: StreamEncoder | undefined;
  // The spec's parts, not the spec (one object fewer per stream); `spec` puts them back together.
  readonly key: string;
  private named: SiteIdentity;
  private kind: StreamKind;
  private resource: ResourceIdentity;
  /** Its slot in the scheduler (ScheduledStream). */
  scheduleSlot = -1;
  /** What its series show (ReportedStream). */
  readToEndAtMs: number | undefined;

  constructor(
    spec: StreamSpec,
    private readonly ctx: StreamContext,
  ) {
    super();
    this.key = spec.key;
    this.named = spec.site;
    this.kind = spec.kind;
    this.resource = spec.resource;
    this.source = sourceFor(ctx.api, spec.site, spec.kind.stream);
  }

  get site(): SiteIdentity {
    return this.named;
  }

  get stream(): LogStream {
    return this.kind.stream;
  }

  get maxPollMs(): number | undefined {
    return this.ctx.maxPollMs[this.kind.stream];
  }

  get opts(): TailerOptions {
    return this.ctx.tailing[this.kind.stream];
  }

  get events(): TailerEvents {
    return this;
  }

  protected get checkpoints(): CheckpointStore {
    return this.ctx.checkpoints;
  }

  /** For a claimed kind, what a read asks of each entry (made per read: no closure per stream). */
  get claim(): ClaimEntry | undefined {
    const { kind, key, ctx } = this;
    const siteId = this.named.id;
    return kind.claimed
      ? (fp: string, entry: StreamEntry, timeMs: number) => ctx.claim(fp, key, siteId, entry, timeMs)
      : undefined;
  }

  get encoder(): RecordEncoder {
    return this;
  }

  get spec(): StreamSpec {
    return { key: this.key, site: this.named, kind: this.kind, resource: this.resource };
  }

  /** The site was renamed (or moved, or changed kind): records, series and batches say so from now on. */
  rename(spec: StreamSpec): void {
    this.named = spec.site;
    this.kind = spec.kind;
    this.resource = spec.resource;
    this.made?.rename(spec.site);
    if (spec.kind.counted) this.ctx.counts.rename(spec.site);
  }

  /** Whether the stream has been read to its end at least once. */
  get readOnce(): boolean {
    return this.readToEndAtMs !== undefined;
  }

  /** Its lag follows the checkpoint, read when asked (see lagSeconds). */
  checkpointMoved(): void {}

  /** Now minus its checkpoint's high-water mark (its start point until something was shipped). */
  get lagSeconds(): number | undefined {
    const cp = this.checkpoint;
    return cp && lagOf(cp, this.ctx.clock.now());
  }

  // Its tailer's events (TailerEvents), reported as this stream's.
  recordsTaken(n: number): void {
    this.ctx.reports.recordsTaken += n;
  }
  deduplicated(n: number): void {
    this.ctx.reports.deduplicated(this, n);
  }
  malformed(n: number): void {
    this.ctx.reports.malformed(this, n);
  }
  future(n: number): void {
    this.ctx.reports.future(this, n);
  }
  late(n: number): void {
    this.ctx.reports.late(this, n);
  }
  gap(fromMs: number, toMs: number, skipped?: "too_large"): void {
    this.ctx.reports.gap(this, fromMs, toMs, skipped);
  }
  checkpointError(err: CorruptCheckpointError): void {
    this.ctx.reports.checkpointError(this, err);
  }
  readToEnd(atMs: number): void {
    this.readToEndAtMs = atMs;
  }
  startedFresh(fromMs: number): void {
    this.ctx.reports.startedFresh(this, fromMs);
  }
  pagingProblem(problem: PagingProblem): void {
    this.ctx.reports.pagingProblem(this, problem);
  }
  /** A read of the stream failed: it starts again from the checkpoint. */
  readFailed(err: unknown): void {
    this.ctx.reports.readFailed(this, this.key, err);
  }

  send(batch: Batch, signal: AbortSignal): Promise<ExportOutcome> {
    return this.ctx.sinkFor(this.resource).send(batch, signal);
  }

  shipperFor(stored: StreamCheckpoint): StreamShipper {
    const hooks = this.ctx.reports.shipperHooks(this, (cp, pages) => this.countsMoved(cp, pages));
    return this.ctx.shipper(stored, this, hooks);
  }

  encode(w: ProtoWriter, r: PendingRecord): void {
    this.recordEncoder().encode(w, r);
  }

  get counter(): RecordCounter | undefined {
    return this.recordEncoder().counter;
  }

  private recordEncoder(): StreamEncoder {
    const { ctx } = this;
    this.made ??= encoderFor(
      ctx.sink,
      this.named,
      this.kind.stream,
      () => ctx.clock.now(),
      {
        requestTime: ctx.requestTimeUnit,
        durations: ctx.requestDurations,
        ...(ctx.unitDecided ? { unitDecided: ctx.unitDecided } : {}),
      },
      ctx.errorGroups,
    );
    return this.made;
  }

  override async read(signal: AbortSignal): Promise<ReadOutcome> {
    const outcome = await super.read(signal);
    const cp = this.checkpoint;
    if (cp) this.countsMoved(cp);
    return outcome;
  }

  private countsMoved(cp: Checkpoint, shipped?: readonly PreparedPage[]): void {
    const { kind, named: site } = this;
    if (kind.counted) this.ctx.counts.update(site, kind.stream, cp.counts, shipped);
  }

  close(): void {
    this.ctx.counts.remove(this.named.id);
    void this.ctx.unschedule(this).then(() => this.releaseCheckpoint());
  }
}
