/**
 * Ships the webhook queue to the OTLP collector: the oldest waiting records in one export at a time,
 * retried with capped backoff while the collector is down or refuses every export, and acknowledged
 * in the queue once the collector took them. A batch the collector refuses for good is split until
 * the refused record is isolated and only that one is dropped (and counted): the log streams' own
 * export loop (deliverBatch), so one bad record never blocks the queue.
 */
import { ProtoWriter } from "../logs/otlp/protoWriter.js";
import { Batch } from "../logs/otlp/batch.js";
import { deliverBatch, type DeliverHooks } from "../logs/otlp/deliverBatch.js";
import type { LogSink } from "../logs/otlp/sink.js";
import type { PreparedPage } from "../logs/prepared.js";
import { pause, type BackoffOptions, type Clock } from "../util/time.js";
import type { QueuedRecord, WebhookQueue } from "./queue.js";

export interface DeliveryHooks extends DeliverHooks {
  /** Records the collector acknowledged. */
  shipped(count: number): void;
  /** The queue could not record an acknowledgement (those records ship again after a restart). */
  queueError(err: unknown): void;
}

export interface DeliveryOptions {
  maxRecords: number;
  maxBytes: number;
  backoff: BackoffOptions;
  clock: Clock;
}

/** The records encoded for the sink, as one page of a batch. */
export function pageOf(
  records: readonly QueuedRecord[],
  sink: LogSink,
  writer = new ProtoWriter(16 * 1024),
): PreparedPage {
  const n = records.length;
  const ends = new Uint32Array(n);
  const times = new Float64Array(n);
  const fingerprints: string[] = [];
  writer.reset();
  records.forEach((q, i) => {
    sink.encode(writer, q.record);
    ends[i] = writer.pos;
    times[i] = q.record.timeMs;
    fingerprints.push(String(q.record.attributes["log.record.uid"] ?? q.seq));
  });
  return {
    count: n,
    bytes: Buffer.from(writer.view()),
    ends,
    fingerprints,
    occurrences: new Uint32Array(n),
    times,
  };
}

export class WebhookDelivery {
  private readonly abort = new AbortController();
  private readonly writer = new ProtoWriter(16 * 1024);
  private wake: (() => void) | undefined;
  private stopping = false;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly queue: WebhookQueue,
    private readonly sink: LogSink,
    private readonly hooks: DeliveryHooks,
    private readonly opts: DeliveryOptions,
  ) {}

  start(): void {
    this.queue.onAvailable(() => this.wake?.());
    this.loop = this.run();
  }

  /**
   * Let the export in flight finish for up to `deadlineMs`, then abandon it (its records stay queued
   * for the next start) and shut the sink down.
   */
  async stop(deadlineMs: number): Promise<void> {
    this.stopping = true;
    this.wake?.();
    if (this.loop) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.loop, new Promise((r) => (timer = setTimeout(r, deadlineMs)))]);
      clearTimeout(timer);
    }
    this.abort.abort(new Error("shutting down"));
    await this.loop;
    await Promise.race([this.sink.shutdown().catch(() => undefined), pause(2000)]);
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      const records = this.queue.oldest(this.opts.maxRecords, this.opts.maxBytes);
      if (records.length === 0) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        continue;
      }
      const batch = new Batch();
      batch.add(pageOf(records, this.sink, this.writer));
      let rejected: number;
      try {
        rejected = await deliverBatch(this.sink, batch, this.abort.signal, this.opts, this.hooks);
      } catch {
        return; // abandoned at shutdown: the records stay queued
      }
      this.hooks.shipped(batch.count - rejected);
      await this.queue
        .acknowledge(records.map((r) => r.seq))
        .catch((err: unknown) => this.hooks.queueError(err));
    }
  }
}
