/**
 * One running stream: its tailer, the encoder and reporter that name its site, and where its
 * checkpoint's counts go. Its site's name changes only through `rename`, which hands the new identity
 * to each part that carries it (the tailer and the shipper know the site by id alone).
 */
import type { SitehostApi } from "../api/types.js";
import type { Clock } from "../util/time.js";
import type { Checkpoint } from "./checkpoint.js";
import type { LogCounts } from "./counts.js";
import type { CheckpointStore, StreamCheckpoint } from "./journal.js";
import type { LogSink } from "./otlp/sink.js";
import type { StreamReporter } from "./reporting.js";
import type { StreamShipper } from "./shipper.js";
import type { BufferBudget } from "./spool.js";
import { encoderFor, fingerprintOf, sourceFor, type StreamEncoder, type StreamSpec } from "./streams.js";
import type { ManagedStream } from "./streamSet.js";
import { Tailer, type ReadOutcome, type SiteIdentity } from "./tailer.js";

/** What every stream shares (the pipeline's parts). */
export interface StreamContext {
  api: SitehostApi;
  checkpoints: CheckpointStore;
  sink: LogSink;
  counts: LogCounts;
  clock: Clock;
  overlapMs: number;
  startFromMs: () => number;
  maxPagesPerRead: number;
  spoolDir: string;
  bufferBudget: BufferBudget;
  collectorDown: () => boolean;
  /** For claimed kinds: may this stream ship the entry (see StreamKind.claimed)? */
  claim: (fingerprint: string, key: string) => boolean;
  reporter: (site: SiteIdentity, spec: StreamSpec) => StreamReporter;
  shipper: (
    cp: StreamCheckpoint,
    reporter: StreamReporter,
    delivered: (cp: Checkpoint) => void,
  ) => StreamShipper;
  /** The stream is no longer wanted: stop scheduling it, then `closed`. */
  unschedule: (key: string) => Promise<void>;
}

export class TailedStream implements ManagedStream {
  readonly tailer: Tailer;
  readonly reporter: StreamReporter;
  private readonly encoder: StreamEncoder;
  private named: SiteIdentity;

  constructor(
    readonly spec: StreamSpec,
    private readonly ctx: StreamContext,
  ) {
    const { site, kind, key } = spec;
    this.named = site;
    this.reporter = ctx.reporter(site, spec);
    this.encoder = encoderFor(ctx.sink, site, kind.stream, () => ctx.clock.now());
    this.tailer = new Tailer(
      site,
      kind.stream,
      sourceFor(ctx.api, site, kind.stream),
      ctx.checkpoints,
      (stored) => ctx.shipper(stored, this.reporter, (cp) => this.countsMoved(cp)),
      this.reporter.tailerEvents(),
      {
        overlapMs: ctx.overlapMs,
        startFromMs: ctx.startFromMs,
        maxPagesPerRead: ctx.maxPagesPerRead,
        ...(kind.claimed ? { claim: (fp: string) => ctx.claim(fp, key) } : {}),
        spoolDir: ctx.spoolDir,
        bufferBudget: ctx.bufferBudget,
        fingerprint: fingerprintOf(kind.stream),
        encoder: this.encoder,
        clock: ctx.clock,
        collectorDown: ctx.collectorDown,
      },
    );
  }

  get key(): string {
    return this.spec.key;
  }

  get site(): SiteIdentity {
    return this.named;
  }

  rename(site: SiteIdentity): void {
    this.named = site;
    this.encoder.rename(site);
    this.reporter.rename(site);
    if (this.spec.kind.counted) this.ctx.counts.rename(site);
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

  private countsMoved(cp: Checkpoint): void {
    const { kind } = this.spec;
    if (kind.counted) this.ctx.counts.update(this.named, kind.stream, cp.counts);
  }

  close(): void {
    this.reporter.remove();
    this.ctx.counts.remove(this.named.id);
    void this.ctx.unschedule(this.key).then(() => this.tailer.close());
  }
}
