/**
 * Ships the webhook queue to the OTLP collector: the oldest waiting records in one export at a time,
 * retried with capped backoff while the collector is down or refuses every export, and acknowledged
 * in the queue once the collector took them. A batch the collector refuses for good is split in
 * halves until the refused record is isolated; only that one is dropped (and counted), as the log
 * streams do, so one bad record never blocks the queue.
 */
import { ProtoWriter } from "../logs/otlp/protoWriter.js";
import { Batch } from "../logs/otlp/batch.js";
import type { ExportOutcome } from "../logs/otlp/outcome.js";
import type { LogSink } from "../logs/otlp/sink.js";
import type { PreparedPage } from "../logs/prepared.js";
import { backoffMs, pause, type BackoffOptions, type Clock } from "../util/time.js";
import type { QueuedRecord, WebhookQueue } from "./queue.js";

export interface DeliveryHooks {
  /** Records the collector acknowledged. */
  shipped(count: number): void;
  /** Records the collector refused for good (dropped). */
  rejected(count: number, reason: string): void;
  /** An export failed and is retried after `waitMs`. */
  retrying(
    outcome: Extract<ExportOutcome, { kind: "retry" | "misconfigured" }>,
    attempt: number,
    waitMs: number,
  ): void;
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
      try {
        await this.deliver(batch);
      } catch {
        return; // abandoned at shutdown: the records stay queued
      }
      await this.queue
        .acknowledge(records.map((r) => r.seq))
        .catch((err: unknown) => this.hooks.queueError(err));
    }
  }

  /** Export until the collector took the batch or refused parts of it for good. */
  private async deliver(batch: Batch): Promise<void> {
    const signal = this.abort.signal;
    for (let attempt = 0; ; attempt++) {
      if (signal.aborted) throw signal.reason ?? new Error("export abandoned");
      const outcome = await this.sink.send(batch, signal);
      if (outcome.kind === "accepted") {
        if (outcome.rejected > 0) this.hooks.rejected(outcome.rejected, outcome.message ?? "partial success");
        this.hooks.shipped(batch.count - outcome.rejected);
        return;
      }
      if (outcome.kind === "refused") {
        if (batch.count <= 1) return this.hooks.rejected(batch.count, outcome.reason);
        const [first, second] = batch.halves();
        await this.deliver(first);
        await this.deliver(second);
        return;
      }
      const wait = Math.max(
        backoffMs(attempt, this.opts.backoff),
        outcome.kind === "retry" ? (outcome.retryAfterMs ?? 0) : 0,
      );
      this.hooks.retrying(outcome, attempt, wait);
      await this.opts.clock.sleep(Math.min(wait, this.opts.backoff.capMs), signal);
    }
  }
}
