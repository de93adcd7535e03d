/**
 * One running stream: its tailer, the encoder and reporter that name its site, the sink view that
 * sends its batches under its site's resource, and where its checkpoint's counts go. Its site's name
 * changes only through `rename`, which hands the new identity to each part that carries it (the
 * tailer and the shipper know the site by id alone); the resource changes from the next batch on.
 */
import type { LogStream } from "../api/schemas.js";
import type { SitehostApi } from "../api/types.js";
import type { Clock } from "../util/time.js";
import type { Checkpoint } from "./checkpoint.js";
import type { LogCounts } from "./counts.js";
import type { CheckpointStore, StreamCheckpoint } from "./journal.js";
import type { Batch } from "./otlp/batch.js";
import type { OutgoingRecord } from "./otlp/encode.js";
import type { ExportOutcome } from "./otlp/outcome.js";
import type { ProtoWriter } from "./otlp/protoWriter.js";
import type { LogSink } from "./otlp/sink.js";
import type { ResourceIdentity } from "./resource.js";
import type { PendingRecord } from "./pending.js";
import type { PreparedPage, RecordCounter, RecordEncoder } from "./prepared.js";
import type { StreamReporter } from "./reporting.js";
import type { RequestTimeSetting } from "./requestCounts.js";
import type { StreamShipper } from "./shipper.js";
import { encoderFor, sourceFor, type StreamEncoder, type StreamSpec } from "./streams.js";
import type { ScheduledStream } from "./scheduler.js";
import type { ManagedStream } from "./streamSet.js";
import {
  type ReadOutcome,
  type SiteIdentity,
  type TailedParts,
  Tailer,
  type TailerOptions,
} from "./tailer.js";

/** What every stream shares (the pipeline's parts). */
export interface StreamContext {
  api: SitehostApi;
  checkpoints: CheckpointStore;
  sink: LogSink;
  counts: LogCounts;
  requestTimeUnit: RequestTimeSetting;
  /** false: web-server records count their status alone (see LogPipelineDeps). */
  requestDurations: boolean;
  clock: Clock;
  /** The tailers' settings by kind of stream (one object for every stream of a kind). */
  tailing: Readonly<Record<LogStream, TailerOptions>>;
  /** For claimed kinds: may this stream ship the entry (see StreamKind.claimed)? */
  claim: (fingerprint: string, key: string) => boolean;
  reporter: (site: SiteIdentity, spec: StreamSpec) => StreamReporter;
  /** The sink under the resource of these records. */
  sinkFor: (resource: ResourceIdentity) => LogSink;
  shipper: (
    cp: StreamCheckpoint,
    sink: LogSink,
    reporter: StreamReporter,
    delivered: (cp: Checkpoint, pages: readonly PreparedPage[]) => void,
  ) => StreamShipper;
  /** The stream is no longer wanted: stop scheduling it, then `closed`. */
  unschedule: (key: string) => Promise<void>;
}

/**
 * What the stream's shipper sends to: records are encoded alike for every resource; each batch goes
 * out under the resource the stream has when it is sent (a batch never holds two sites' records: a
 * shipper serves one stream).
 */
class StreamSink implements LogSink {
  constructor(
    private readonly base: LogSink,
    public current: LogSink,
  ) {}
  encode(w: ProtoWriter, record: OutgoingRecord): void {
    this.base.encode(w, record);
  }
  send(batch: Batch, signal: AbortSignal): Promise<ExportOutcome> {
    return this.current.send(batch, signal);
  }
  /** The pipeline shuts the shared sink down. */
  async shutdown(): Promise<void> {}
}

/**
 * The stream is also its records' encoder (RecordEncoder), which it makes when the first record is
 * encoded (an idle stream holds none), and the parts its tailer asks for (TailedParts).
 */
export class TailedStream implements ManagedStream, ScheduledStream, RecordEncoder, TailedParts {
  readonly tailer: Tailer;
  readonly reporter: StreamReporter;
  private made: StreamEncoder | undefined;
  private readonly sink: StreamSink;
  private current: StreamSpec;

  constructor(
    spec: StreamSpec,
    private readonly ctx: StreamContext,
  ) {
    const { site, kind } = spec;
    this.current = spec;
    this.sink = new StreamSink(ctx.sink, ctx.sinkFor(spec.resource));
    this.reporter = ctx.reporter(site, spec);
    this.tailer = new Tailer(
      site,
      kind.stream,
      sourceFor(ctx.api, site, kind.stream),
      ctx.checkpoints,
      this,
      this.reporter,
      ctx.tailing[kind.stream],
    );
  }

  /** For a claimed kind, what a read asks of each entry (made per read: no closure per stream). */
  get claim(): ((fingerprint: string) => boolean) | undefined {
    const { kind, key } = this.current;
    const { ctx } = this;
    return kind.claimed ? (fp: string) => ctx.claim(fp, key) : undefined;
  }

  get encoder(): RecordEncoder {
    return this;
  }

  get key(): string {
    return this.current.key;
  }

  get spec(): StreamSpec {
    return this.current;
  }

  /** The site was renamed (or moved, or changed kind): records, series and batches say so from now on. */
  rename(spec: StreamSpec): void {
    this.current = spec;
    this.made?.rename(spec.site);
    this.reporter.rename(spec.site);
    this.sink.current = this.ctx.sinkFor(spec.resource);
    if (spec.kind.counted) this.ctx.counts.rename(spec.site);
  }

  shipperFor(stored: StreamCheckpoint): StreamShipper {
    return this.ctx.shipper(stored, this.sink, this.reporter, (cp, pages) => this.countsMoved(cp, pages));
  }

  encode(w: ProtoWriter, r: PendingRecord): void {
    this.recordEncoder().encode(w, r);
  }

  get counter(): RecordCounter | undefined {
    return this.recordEncoder().counter;
  }

  private recordEncoder(): StreamEncoder {
    const { ctx } = this;
    this.made ??= encoderFor(ctx.sink, this.current.site, this.current.kind.stream, () => ctx.clock.now(), {
      requestTime: ctx.requestTimeUnit,
      durations: ctx.requestDurations,
    });
    return this.made;
  }

  async read(signal: AbortSignal): Promise<ReadOutcome> {
    const outcome = await this.tailer.read(signal);
    const cp = this.tailer.checkpoint;
    if (cp) {
      this.countsMoved(cp);
      this.reporter.checkpointMoved(cp);
    }
    return outcome;
  }

  private countsMoved(cp: Checkpoint, shipped?: readonly PreparedPage[]): void {
    const { kind, site } = this.current;
    if (kind.counted) this.ctx.counts.update(site, kind.stream, cp.counts, shipped);
  }

  close(): void {
    this.reporter.remove();
    this.ctx.counts.remove(this.current.site.id);
    void this.ctx.unschedule(this.key).then(() => this.tailer.close());
  }
}
