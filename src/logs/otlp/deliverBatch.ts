/**
 * Exporting one batch until the collector has taken it, as OTLP's rules ask, except that nothing is
 * dropped on an endpoint's word alone:
 * - a retryable failure (or a collector that cannot be reached), an endpoint that refuses every
 *   export (credentials, path, protocol) and a 2xx that is not an OTLP answer are retried with capped
 *   backoff, at least as long as a Retry-After;
 * - a batch refused for good (or whose every record a partial success rejected) is split in halves to
 *   find out whether the collector takes any of its records. When it takes some, the refusal is about
 *   the records: the refused ones are isolated and only they are dropped (and counted). When it takes
 *   none of them, the endpoint refuses everything (a wrong path or protocol answered 400, a backend
 *   limit every record hits): the export failed, and it is retried whole with backoff, nothing
 *   dropped. While nothing has been taken the search stops at sixteenths of the batch, so an endpoint
 *   that refuses everything costs at most 31 requests an attempt;
 * - a partial success that kept some records is counted (the rejected ones are dropped: retrying
 *   records a backend refuses for their content cannot succeed).
 * Shared by the log streams' shippers and the webhook queue.
 */
import { backoffMs, type BackoffOptions, type Clock } from "../../util/time.js";
import type { Batch } from "./batch.js";
import type { ExportFailure, ExportOutcome } from "./outcome.js";
import type { BatchSender } from "./sink.js";

export interface DeliverHooks {
  /** Records the collector refused for good (dropped) or rejected in a partial success. */
  rejected(count: number, reason: string): void;
  /** An export attempt failed and will be retried after `waitMs`. */
  retrying(outcome: ExportFailure, attempt: number, waitMs: number): void;
}

export interface DeliverOptions {
  backoff: BackoffOptions;
  clock: Clock;
  /** Told while an export of this batch (or of one of its halves) keeps failing. */
  failing?: { enter(): void; leave(): void };
}

/** Halvings tried while the collector has taken none of the batch: down to sixteenths. */
const BLIND_LEVELS = 4;

/** A batch's answer once it is not a failure to retry: taken (perhaps in part), or refused whole. */
type Settled =
  { taken: true; rejected: number; message?: string } | { taken: false; reason: string; partial: boolean };

function settledOf(
  outcome: Extract<ExportOutcome, { kind: "accepted" | "refused" }>,
  count: number,
): Settled {
  if (outcome.kind === "refused") return { taken: false, reason: outcome.reason, partial: false };
  if (count === 0 || outcome.rejected < count) {
    return { taken: true, rejected: outcome.rejected, message: outcome.message };
  }
  const said = outcome.message ? `: ${outcome.message}` : "";
  return {
    taken: false,
    reason: `a partial success rejected ${count === 1 ? "the record" : `all ${count} records`}${said}`,
    partial: true,
  };
}

class Delivery {
  private attempt = 0;
  private failing = false;
  /** Records the collector refused, isolated: dropped once it is known to take others. */
  private readonly refused: Array<{ count: number; reason: string }> = [];
  /** Some record of the batch was taken: the collector takes records, refusals are about content. */
  private anyTaken = false;
  /** Parts refused while nothing was taken, not split further (sent again once something is). */
  private deferred: Batch[] = [];
  /** Records rejected in partial successes of the parts taken during a split. */
  private rejectedInParts = 0;

  constructor(
    private readonly sink: BatchSender,
    private readonly signal: AbortSignal,
    private readonly opts: DeliverOptions,
    private readonly hooks: DeliverHooks,
  ) {}

  /** Resolves to how many records were dropped (refused or rejected). */
  async run(batch: Batch): Promise<number> {
    try {
      for (;;) {
        const first = await this.settle(batch);
        if (first.taken) return this.partial(first, batch.count);
        this.refused.length = 0;
        this.anyTaken = false;
        this.deferred = [];
        this.rejectedInParts = 0;
        await this.split(batch, first.reason, 0);
        // Parts refused while nothing was taken are sent again: the endpoint may have been fixed
        // meanwhile (it is, sooner or later, in the middle of one of these searches).
        while (this.anyTaken && this.deferred.length > 0) {
          const part = this.deferred.shift() as Batch;
          const again = await this.settle(part);
          if (again.taken) this.rejectedInParts += this.partial(again, part.count);
          else if (part.count <= 1) this.refused.push({ count: part.count, reason: again.reason });
          else await this.split(part, again.reason, 0);
        }
        if (this.anyTaken) {
          let dropped = 0;
          for (const r of this.refused) {
            this.hooks.rejected(r.count, r.reason);
            dropped += r.count;
          }
          return dropped + this.rejectedInParts;
        }
        // The collector took none of the records: the endpoint refuses the export, not its records.
        await this.wait({
          kind: "refused",
          reason: first.reason,
          ...(first.partial ? { partial: true } : {}),
        });
      }
    } finally {
      if (this.failing) this.opts.failing?.leave();
    }
  }

  private partial(s: Extract<Settled, { taken: true }>, count: number): number {
    const rejected = Math.min(s.rejected, count);
    if (rejected > 0) this.hooks.rejected(rejected, s.message ?? "partial success");
    return rejected;
  }

  /**
   * Send the halves of a refused part, depth first, isolating what is refused. Once something was
   * taken, a record refused is dropped: should the endpoint break in the middle of such a search, the
   * records it refuses meanwhile are lost (a search starts only when it refused a batch and takes some
   * of its records: a moment's coincidence).
   */
  private async split(part: Batch, reason: string, depth: number): Promise<void> {
    if (!this.anyTaken && (part.count <= 1 || depth >= BLIND_LEVELS)) {
      this.deferred.push(part);
      return;
    }
    if (part.count <= 1) {
      this.refused.push({ count: part.count, reason });
      return;
    }
    for (const half of part.halves()) {
      const s = await this.settle(half);
      if (s.taken) {
        this.anyTaken = true;
        this.rejectedInParts += this.partial(s, half.count);
      } else await this.split(half, s.reason, depth + 1);
    }
  }

  /** Send `part` until the collector takes or refuses it; failures are retried with backoff. */
  private async settle(part: Batch): Promise<Settled> {
    for (;;) {
      if (this.signal.aborted) throw this.signal.reason ?? new Error("export abandoned");
      const outcome = await this.sink.send(part, this.signal);
      if (outcome.kind === "accepted" || outcome.kind === "refused") return settledOf(outcome, part.count);
      await this.wait(outcome);
    }
  }

  private async wait(failure: ExportFailure): Promise<void> {
    if (!this.failing) {
      this.failing = true;
      this.opts.failing?.enter();
    }
    const { backoff } = this.opts;
    const wait = Math.max(
      backoffMs(this.attempt, backoff),
      failure.kind === "retry" ? (failure.retryAfterMs ?? 0) : 0,
    );
    this.hooks.retrying(failure, this.attempt, wait);
    this.attempt += 1;
    await this.opts.clock.sleep(Math.min(wait, backoff.capMs), this.signal);
  }
}

/**
 * Resolves to how many of the batch's records were refused or rejected (dropped); rejects when
 * `signal` aborts (the batch is then abandoned, not delivered).
 */
export function deliverBatch(
  sink: BatchSender,
  batch: Batch,
  signal: AbortSignal,
  opts: DeliverOptions,
  hooks: DeliverHooks,
): Promise<number> {
  return new Delivery(sink, signal, opts, hooks).run(batch);
}
