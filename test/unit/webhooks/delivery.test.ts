import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { OutgoingRecord } from "../../../src/logs/otlp/encode.js";
import type { ExportOutcome } from "../../../src/logs/otlp/outcome.js";
import { MemorySink } from "../logs/fakes.js";
import { WebhookDelivery, type DeliveryHooks } from "../../../src/webhooks/delivery.js";
import { QUEUE_FILE, WebhookQueue } from "../../../src/webhooks/queue.js";
import { waitFor } from "../../helpers/wait.js";

/** The log tests' memory sink, answering scripted outcomes, else accepted; refuses any batch holding a record with body "bad". */
class FakeSink extends MemorySink {
  answers: ExportOutcome[] = [];
  /** Every export fails (a collector that is down) while set. */
  down = false;
  shutDown = false;
  override answer = (records: readonly OutgoingRecord[]): ExportOutcome => {
    if (this.down) return { kind: "retry", reason: "connection refused" };
    const scripted = this.answers.shift();
    if (scripted && scripted.kind !== "accepted") return scripted;
    if (records.some((r) => r.body === "bad")) return { kind: "refused", reason: "HTTP 400: bad record" };
    return { kind: "accepted", rejected: 0 };
  };
  override async shutdown(): Promise<void> {
    this.shutDown = true;
  }
}

/** Backoff waits end on the next turn of the event loop. */
const instantClock = {
  now: () => Date.now(),
  sleep: (_ms: number, signal?: AbortSignal) =>
    new Promise<void>((resolve, reject) =>
      setImmediate(() => (signal?.aborted ? reject(signal.reason as Error) : resolve())),
    ),
};

function record(body: string): OutgoingRecord {
  return {
    timeMs: 1_769_860_800_000,
    observedMs: 1_769_860_800_000,
    severityNumber: 9,
    severityText: "INFO",
    body,
    attributes: { "log.record.uid": `uid-${body}` },
  };
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "webhook-delivery-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function setup(opts: { maxRecords?: number } = {}) {
  const queue = new WebhookQueue(join(dir, QUEUE_FILE));
  await queue.open();
  const sink = new FakeSink();
  const seen = { shipped: 0, rejected: 0, retries: 0, errors: 0 };
  const hooks: DeliveryHooks = {
    shipped: (n) => (seen.shipped += n),
    rejected: (n) => (seen.rejected += n),
    retrying: () => (seen.retries += 1),
    queueError: () => (seen.errors += 1),
  };
  const delivery = new WebhookDelivery(queue, sink, hooks, {
    maxRecords: opts.maxRecords ?? 100,
    maxBytes: 1 << 20,
    backoff: { baseMs: 1, capMs: 2 },
    clock: instantClock,
  });
  return { queue, sink, seen, delivery };
}

/** Waits for `cond` (5 s at most). */
const until = (cond: () => boolean, what: string) => waitFor(what, cond, { timeoutMs: 5000, intervalMs: 5 });

describe("shipping the webhook queue", () => {
  it("ships what waits, oldest first, and acknowledges it in the queue", async () => {
    const { queue, sink, seen, delivery } = await setup({ maxRecords: 2 });
    for (const b of ["a", "b", "c"]) await queue.enqueue(record(b));
    delivery.start();
    await until(() => queue.depth === 0, "the queue to drain");
    expect(sink.accepted.map((r) => r.body)).toEqual(["a", "b", "c"]);
    expect(sink.sent.map((batch) => batch.length)).toEqual([2, 1]);
    expect(seen.shipped).toBe(3);
    // Records enqueued later are picked up without polling.
    await queue.enqueue(record("d"));
    await until(() => queue.depth === 0, "the new record");
    expect(sink.accepted.map((r) => r.body)).toEqual(["a", "b", "c", "d"]);
    await delivery.stop(1000);
    expect(sink.shutDown).toBe(true);
    // Nothing waits after a restart.
    const again = new WebhookQueue(queue.file);
    expect((await again.open()).replayed).toBe(0);
    await again.close();
    await queue.close();
  });

  it("keeps records queued and retries while the collector is down", async () => {
    const { queue, sink, seen, delivery } = await setup();
    sink.answers = [
      { kind: "retry", reason: "HTTP 503" },
      { kind: "misconfigured", reason: "HTTP 401" },
    ];
    await queue.enqueue(record("a"));
    delivery.start();
    await until(() => queue.depth === 0, "delivery after retries");
    expect(seen.retries).toBe(2);
    expect(sink.accepted.map((r) => r.body)).toEqual(["a"]);
    await delivery.stop(1000);
    await queue.close();
  });

  it("drops only the record the collector refuses for good, and moves on", async () => {
    const { queue, sink, seen, delivery } = await setup();
    for (const b of ["a", "bad", "c", "d"]) await queue.enqueue(record(b));
    delivery.start();
    await until(() => queue.depth === 0, "the queue to drain");
    expect(sink.accepted.map((r) => r.body)).toEqual(["a", "c", "d"]);
    expect(seen.rejected).toBe(1);
    await delivery.stop(1000);
    await queue.close();
  });

  it("an export abandoned at shutdown leaves its records queued for the next start", async () => {
    const { queue, sink, delivery } = await setup();
    sink.down = true;
    await queue.enqueue(record("a"));
    delivery.start();
    await until(() => sink.sent.length > 3, "a few failed attempts");
    await delivery.stop(10);
    await queue.close();
    const again = new WebhookQueue(queue.file);
    expect((await again.open()).replayed).toBe(1);
    await again.close();
  });
});
