/**
 * Exporting one batch when the collector refuses: records are dropped only when the collector takes
 * others of the same export (their content is refused); an endpoint that takes none of them is a
 * failure, retried whole with backoff at a bounded number of requests per attempt, and nothing is
 * dropped — also when it is fixed in the middle of a search.
 */
import { describe, expect, it } from "vitest";
import { Batch } from "../../../../src/logs/otlp/batch.js";
import { deliverBatch } from "../../../../src/logs/otlp/deliverBatch.js";
import type { OutgoingRecord } from "../../../../src/logs/otlp/encode.js";
import type { ExportFailure, ExportOutcome } from "../../../../src/logs/otlp/outcome.js";
import { preparePage } from "../../../../src/logs/prepared.js";
import { MemorySink } from "../fakes.js";

const instantClock = {
  now: () => Date.now(),
  sleep: (_ms: number, signal?: AbortSignal) =>
    new Promise<void>((resolve, reject) =>
      setImmediate(() => (signal?.aborted ? reject(signal.reason as Error) : resolve())),
    ),
};

/** n records with bodies "r0".."r<n-1>" ("bad<i>" where `bad` says). */
function batchOf(sink: MemorySink, n: number, bad: (i: number) => boolean = () => false): Batch {
  const batch = new Batch();
  batch.add(
    preparePage(
      Array.from({ length: n }, (_, i) => ({
        entry: { timestamp: 1, status: 200 },
        timeMs: 1_700_000_000_000 + i,
        fingerprint: `f${i}`,
        occurrence: 0,
      })),
      {
        encode: (w, r) => {
          const i = r.timeMs - 1_700_000_000_000;
          sink.encode(w, {
            timeMs: r.timeMs,
            observedMs: r.timeMs,
            severityNumber: 9,
            severityText: "INFO",
            body: bad(i) ? `bad${i}` : `r${i}`,
            attributes: {},
          });
        },
      },
    ),
  );
  return batch;
}

const hasBad = (records: readonly OutgoingRecord[]) => records.some((r) => String(r.body).startsWith("bad"));
const REFUSED: ExportOutcome = { kind: "refused", reason: "HTTP 400: invalid record" };
const TAKEN: ExportOutcome = { kind: "accepted", rejected: 0 };

async function deliver(sink: MemorySink, batch: Batch) {
  const seen = {
    rejected: [] as Array<{ count: number; reason: string }>,
    failures: [] as ExportFailure[],
    /** Requests sent before each failed attempt was counted. */
    sentAtFailure: [] as number[],
  };
  const dropped = await deliverBatch(
    sink,
    batch,
    new AbortController().signal,
    { backoff: { baseMs: 1, capMs: 2 }, clock: instantClock },
    {
      rejected: (count, reason) => void seen.rejected.push({ count, reason }),
      retrying: (failure) => {
        seen.failures.push(failure);
        seen.sentAtFailure.push(sink.attempts);
      },
    },
  );
  return { dropped, ...seen };
}

describe("refusals the collector makes", () => {
  it("an endpoint that takes none of the records: failed attempts of at most 31 requests, nothing dropped", async () => {
    const sink = new MemorySink();
    let fixed = false;
    sink.answer = () => (fixed ? TAKEN : REFUSED);
    const batch = batchOf(sink, 2000);
    const delivering = deliver(sink, batch);
    const until = Date.now() + 5000;
    while (sink.attempts < 100 && Date.now() < until) await new Promise((r) => setImmediate(r));
    fixed = true;
    const r = await delivering;
    expect(r.dropped).toBe(0);
    expect(r.rejected).toEqual([]);
    expect(r.failures.length).toBeGreaterThanOrEqual(3);
    expect(r.failures[0]).toEqual({ kind: "refused", reason: "HTTP 400: invalid record" });
    // The whole batch, then halves down to sixteenths: 1 + 2 + 4 + 8 + 16 requests an attempt.
    const perAttempt = r.sentAtFailure.map((n, i) => n - (r.sentAtFailure[i - 1] ?? 0));
    expect(perAttempt.slice(0, 3)).toEqual([31, 31, 31]);
    expect(sink.accepted).toHaveLength(2000);
  });

  it("a lone record refused is kept and retried: nothing says the endpoint takes any record", async () => {
    const sink = new MemorySink();
    sink.answer = (_records, attempt) => (attempt <= 3 ? REFUSED : TAKEN);
    const r = await deliver(sink, batchOf(sink, 1));
    expect(r.dropped).toBe(0);
    expect(r.failures).toHaveLength(3);
    expect(sink.accepted.map((x) => x.body)).toEqual(["r0"]);
  });

  it("a partial success that rejects every record is a failure too, with its message", async () => {
    const sink = new MemorySink();
    sink.answer = (records, attempt) =>
      attempt === 1 ? { kind: "accepted", rejected: records.length, message: "unknown tenant" } : TAKEN;
    const r = await deliver(sink, batchOf(sink, 1));
    expect(r.failures).toEqual([
      { kind: "refused", reason: "a partial success rejected the record: unknown tenant", partial: true },
    ]);
    expect(r.dropped).toBe(0);
  });

  it("many refused records among records it takes: only those are dropped, each counted", async () => {
    const sink = new MemorySink();
    sink.answer = (records) => (hasBad(records) ? REFUSED : TAKEN);
    // The first sixteen all refused: found by the search although its first parts take nothing.
    const r = await deliver(
      sink,
      batchOf(sink, 64, (i) => i < 16 || i === 40),
    );
    expect(r.dropped).toBe(17);
    expect(r.rejected.reduce((n, x) => n + x.count, 0)).toBe(17);
    expect(r.failures).toEqual([]);
    expect(sink.accepted.map((x) => x.body).sort()).toEqual(
      Array.from({ length: 64 }, (_, i) => `r${i}`)
        .filter((_, i) => !(i < 16 || i === 40))
        .sort(),
    );
  });

  it("an endpoint fixed in the middle of a search: what it refused before is sent again, not dropped", async () => {
    const sink = new MemorySink();
    // Refuses everything until its 3rd request, then takes everything.
    sink.answer = (_records, attempt) => (attempt < 3 ? REFUSED : TAKEN);
    const r = await deliver(sink, batchOf(sink, 2));
    expect(r.dropped).toBe(0);
    expect(r.rejected).toEqual([]);
    expect(sink.accepted.map((x) => x.body).sort()).toEqual(["r0", "r1"]);
  });
});
