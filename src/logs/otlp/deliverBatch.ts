/**
 * Exporting one batch until the collector has taken it, as OTLP's rules ask: a retryable failure (or a
 * collector that cannot be reached) is retried with capped backoff, at least as long as its
 * Retry-After; a batch refused for good is split in halves until the refused records are isolated,
 * and only those are dropped; a partial success is counted. Shared by the log streams' shippers and
 * the webhook queue.
 */
import { backoffMs, type BackoffOptions, type Clock } from "../../util/time.js";
import type { Batch } from "./batch.js";
import type { ExportOutcome } from "./outcome.js";
import type { BatchSender } from "./sink.js";

export interface DeliverHooks {
  /** Records the collector refused for good (dropped) or rejected in a partial success. */
  rejected(count: number, reason: string): void;
  /** An export attempt failed and will be retried after `waitMs`. */
  retrying(
    outcome: Extract<ExportOutcome, { kind: "retry" | "misconfigured" }>,
    attempt: number,
    waitMs: number,
  ): void;
}

export interface DeliverOptions {
  backoff: BackoffOptions;
  clock: Clock;
  /** Told while an export of this batch (or of one of its halves) keeps failing. */
  failing?: { enter(): void; leave(): void };
}

/**
 * Resolves to how many of the batch's records were refused or rejected; rejects when `signal` aborts
 * (the batch is then abandoned, not delivered).
 */
export async function deliverBatch(
  sink: BatchSender,
  batch: Batch,
  signal: AbortSignal,
  opts: DeliverOptions,
  hooks: DeliverHooks,
): Promise<number> {
  let failing = false;
  try {
    for (let attempt = 0; ; attempt++) {
      if (signal.aborted) throw signal.reason ?? new Error("export abandoned");
      const outcome = await sink.send(batch, signal);
      if (outcome.kind === "accepted") {
        const rejected = Math.min(outcome.rejected, batch.count);
        if (rejected > 0) hooks.rejected(rejected, outcome.message ?? "partial success");
        return rejected;
      }
      if (outcome.kind === "refused") {
        if (batch.count <= 1) {
          hooks.rejected(batch.count, outcome.reason);
          return batch.count;
        }
        const [first, second] = batch.halves();
        return (
          (await deliverBatch(sink, first, signal, opts, hooks)) +
          (await deliverBatch(sink, second, signal, opts, hooks))
        );
      }
      if (!failing) {
        failing = true;
        opts.failing?.enter();
      }
      const wait = Math.max(
        backoffMs(attempt, opts.backoff),
        outcome.kind === "retry" ? (outcome.retryAfterMs ?? 0) : 0,
      );
      hooks.retrying(outcome, attempt, wait);
      await opts.clock.sleep(Math.min(wait, opts.backoff.capMs), signal);
    }
  } finally {
    if (failing) opts.failing?.leave();
  }
}
