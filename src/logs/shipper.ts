/**
 * Ships one stream's new records: batches of up to `maxRecords` records or `maxBytes` encoded bytes
 * (several pages per export), up to `depth` exports in flight, the next batch encoded while one is
 * out, and the checkpoint committed strictly in order, each commit when its export and every earlier
 * one are acknowledged. A process killed with exports in flight ships those exports again at the next
 * start (their records carry the same log.record.uid): that is the replay window.
 *
 * What the collector answers decides the rest (see otlp/outcome.ts): a retryable failure is retried
 * with capped backoff for as long as it takes, and while any export is retrying the collector counts
 * as down for every stream (nothing more is fetched); a refused batch is split in halves until what is
 * refused is isolated, and only that is dropped and counted; a partial success counts what the
 * collector rejected. Either way the checkpoint moves on, so one bad record never stops a stream.
 */
import type { BackoffOptions, Clock } from "../util/time.js";
import { type Checkpoint, deltaFor, type DeliveredRecord } from "./checkpoint.js";
import type { PreparedDelta, StreamCheckpoint } from "./journal.js";
import { Batch } from "./otlp/batch.js";
import { deliverBatch, type DeliverHooks } from "./otlp/deliverBatch.js";
import type { BatchSender } from "./otlp/sink.js";
import { addCounts, slicePage, type PreparedPage } from "./prepared.js";

/** Exports currently retrying, for all streams: while any is, the collector is down for everyone. */
export class CollectorHealth {
  private failing = 0;
  get down(): boolean {
    return this.failing > 0;
  }
  enter(): void {
    this.failing += 1;
  }
  leave(): void {
    this.failing = Math.max(0, this.failing - 1);
  }
}

export interface ShipperHooks extends DeliverHooks {
  /**
   * After a commit: how many records the collector took (those it rejected are reported apart), the
   * checkpoint as it now stands, and the pages of the export.
   */
  delivered(count: number, checkpoint: Checkpoint, pages: readonly PreparedPage[]): void;
}

export interface ShipperOptions {
  maxRecords: number;
  maxBytes: number;
  depth: number;
  backoff: BackoffOptions;
  clock: Clock;
}

interface InFlight {
  /** The export's delta, durable before it was sent; the batch it sends is its payload. */
  prepared: PreparedDelta<Batch>;
  count: number;
  /** Of those, refused or rejected by the collector (known once settled). */
  rejected: number;
  settled: boolean;
  failed: unknown;
  committed: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class StreamShipper {
  private batch = new Batch();
  private readonly queue: InFlight[] = [];
  private highWaterLimitMs = Infinity;

  constructor(
    private readonly sink: BatchSender,
    private readonly checkpoint: StreamCheckpoint,
    private readonly health: CollectorHealth,
    private readonly hooks: ShipperHooks,
    private readonly opts: ShipperOptions,
    private readonly signal: AbortSignal,
  ) {}

  /** Nothing batched, nothing in flight: a new shipper would do the same from here. */
  get idle(): boolean {
    return this.batch.count === 0 && this.queue.length === 0;
  }

  /** A read begins at `nowMs`: no record of it moves the high-water mark past that. */
  begin(nowMs: number): void {
    this.highWaterLimitMs = nowMs;
  }

  /** Add a page of records (oldest first); returns once batched (and any full batch is on its way). */
  async add(page: PreparedPage): Promise<void> {
    let from = 0;
    while (from < page.count) {
      const room = this.opts.maxRecords - this.batch.count;
      // Records until the batch is full by count; by bytes it is checked per page part.
      const to = Math.min(page.count, from + room);
      this.batch.add(from === 0 && to === page.count ? page : slicePage(page, from, to));
      from = to;
      if (this.batch.count >= this.opts.maxRecords || this.batch.bytes >= this.opts.maxBytes)
        await this.dispatch();
    }
  }

  /** Send what is batched and wait until every export is acknowledged and committed. */
  async flush(): Promise<void> {
    if (this.batch.count > 0) await this.dispatch();
    while (this.queue.length > 0) await (this.queue[this.queue.length - 1] as InFlight).committed;
  }

  private async dispatch(): Promise<void> {
    const batch = this.batch;
    this.batch = new Batch();
    const limit = this.highWaterLimitMs;
    // At most `depth` exports in flight: wait for the oldest to be committed.
    while (this.queue.length >= this.opts.depth) await (this.queue[0] as InFlight).committed;
    const delivered: DeliveredRecord[] = [];
    for (const page of batch.pages) {
      for (let i = 0; i < page.count; i++) {
        delivered.push({
          fingerprint: page.fingerprints[i] as string,
          occurrence: page.occurrences[i] as number,
          timeMs: page.times[i] as number,
        });
      }
    }
    // Durable before it is sent: the batch goes out as the prepared delta's payload.
    const prepared = await this.checkpoint.prepare(
      (seq) => deltaFor(this.checkpoint.state, seq, delivered, limit, addCounts(batch.pages)),
      batch,
    );
    let resolve!: () => void;
    let reject!: (err: unknown) => void;
    const committed = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    committed.catch(() => undefined);
    const entry: InFlight = {
      prepared,
      count: batch.count,
      rejected: 0,
      settled: false,
      failed: undefined,
      committed,
      resolve,
      reject,
    };
    this.queue.push(entry);
    // Settled and committed in the same synchronous callback as the acknowledgement.
    this.deliver(prepared).then(
      (rejected) => {
        entry.rejected = rejected;
        entry.settled = true;
        this.commitReady();
      },
      (err: unknown) => {
        entry.settled = true;
        entry.failed = err ?? new Error("export failed");
        this.commitReady();
      },
    );
  }

  /** Commit, in order, every export at the head of the queue that is settled. */
  private commitReady(): void {
    while (this.queue.length > 0 && (this.queue[0] as InFlight).settled) {
      const entry = this.queue.shift() as InFlight;
      if (entry.failed !== undefined) {
        // Abandoned (shutdown): neither it nor anything after it is committed.
        entry.prepared.abandon();
        entry.reject(entry.failed);
        for (const rest of this.queue.splice(0)) {
          rest.prepared.abandon();
          rest.reject(entry.failed);
        }
        return;
      }
      const checkpoint = entry.prepared.commit();
      this.hooks.delivered(entry.count - entry.rejected, checkpoint, entry.prepared.payload.pages);
      entry.resolve();
    }
  }

  /** Export a prepared batch until the collector has taken it; resolves to how many records it refused. */
  private deliver(prepared: PreparedDelta<Batch>): Promise<number> {
    return deliverBatch(
      this.sink,
      prepared.payload,
      this.signal,
      { backoff: this.opts.backoff, clock: this.opts.clock, failing: this.health },
      this.hooks,
    );
  }
}
