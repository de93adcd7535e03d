/**
 * The shipper: at most `depth` exports of a stream in flight, commits strictly in order whatever
 * order the acknowledgements come in, in the same turn as the acknowledgement; an export abandoned at
 * shutdown leaves it and everything after it uncommitted; nothing is sent before its delta is durable.
 */
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { CheckpointStore } from "../../../src/logs/journal.js";
import type { ExportOutcome } from "../../../src/logs/otlp/outcome.js";
import type { PendingRecord } from "../../../src/logs/pending.js";
import { preparePage, type PreparedPage } from "../../../src/logs/prepared.js";
import { CollectorHealth, StreamShipper } from "../../../src/logs/shipper.js";
import { systemClock } from "../../../src/util/time.js";
import { waitFor } from "../../helpers/wait.js";
import { MemorySink } from "./fakes.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "shipper-test-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const T = 1_700_000_000_000;
/** Records from..from+n-1 as a prepared page; each encodes as its path. */
const recs = (from: number, n: number): PreparedPage => {
  const records: PendingRecord[] = Array.from({ length: n }, (_, i) => ({
    entry: { timestamp: (T + (from + i) * 1000) / 1000, status: 200, request_url: `/r${from + i}` },
    timeMs: T + (from + i) * 1000,
    fingerprint: String(from + i).padStart(32, "0"),
    occurrence: 0,
  }));
  const sink = new MemorySink();
  return preparePage(records, {
    encode: (w, r) =>
      sink.encode(w, {
        timeMs: r.timeMs,
        observedMs: T,
        severityNumber: 9,
        severityText: "INFO",
        body: (r.entry as { request_url: string }).request_url,
        attributes: {},
      }),
  });
};

async function rig(answers: Array<() => Promise<ExportOutcome>>, stop = new AbortController()) {
  const store = new CheckpointStore(dir);
  const cp = await store.open(1, "server", () => T - 1, 600_000);
  const sink = new MemorySink();
  let inFlight = 0;
  let maxInFlight = 0;
  let answered = 0;
  const sent: string[][] = [];
  sink.answer = async (records, attempt) => {
    sent.push(records.map((r) => r.body));
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      return await (
        answers[attempt - 1] ?? (async (): Promise<ExportOutcome> => ({ kind: "accepted", rejected: 0 }))
      )();
    } finally {
      inFlight -= 1;
      answered += 1;
    }
  };
  // What each commit delivered: the bodies of the exports in the order they were sent.
  const committed: string[][] = [];
  const shipper = new StreamShipper(
    sink,
    cp,
    new CollectorHealth(),
    {
      delivered: (count) => void committed.push((sent[committed.length] ?? []).slice(0, count)),
      rejected: () => undefined,
      retrying: () => undefined,
    },
    { maxRecords: 2, maxBytes: 1 << 20, depth: 2, backoff: { baseMs: 1, capMs: 2 }, clock: systemClock },
    stop.signal,
  );
  shipper.begin(Date.now());
  return {
    shipper,
    committed,
    cp,
    store,
    sent,
    inFlight: () => inFlight,
    maxInFlight: () => maxInFlight,
    answered: () => answered,
  };
}

function deferred() {
  let resolve!: (o: ExportOutcome) => void;
  const promise = new Promise<ExportOutcome>((r) => (resolve = r));
  return { promise, accept: () => resolve({ kind: "accepted", rejected: 0 }) };
}

it("commits in order when the second export is acknowledged before the first", async () => {
  const first = deferred();
  const second = deferred();
  const r = await rig([() => first.promise, () => second.promise]);
  const adding = r.shipper.add(recs(0, 4)); // two batches of two
  await waitFor("both exports in flight", () => r.inFlight() === 2);
  second.accept();
  // Once the sink has answered, the shipper has taken the acknowledgement (in the same turn).
  await waitFor("the second export's acknowledgement", () => r.answered() === 1);
  expect(r.committed).toEqual([]); // the second waits for the first
  first.accept();
  await adding;
  await r.shipper.flush();
  expect(r.committed).toEqual([
    ["/r0", "/r1"],
    ["/r2", "/r3"],
  ]);
  expect(r.maxInFlight()).toBe(2);
});

it("keeps at most two exports in flight", async () => {
  const gates = Array.from({ length: 5 }, () => deferred());
  const r = await rig(gates.map((g) => () => g.promise));
  const adding = r.shipper.add(recs(0, 10));
  await waitFor("two exports in flight", () => r.inFlight() === 2);
  // Nothing is acknowledged, so nothing else can start: the third batch waits for the first.
  expect(r.sent).toHaveLength(2);
  expect(r.maxInFlight()).toBe(2);
  for (const g of gates) g.accept();
  await adding;
  await r.shipper.flush();
  expect(r.committed.flat()).toHaveLength(10);
  expect(r.maxInFlight()).toBe(2);
});

it("an export abandoned at shutdown leaves it and the ones after it uncommitted, on disk too", async () => {
  const stop = new AbortController();
  const never = new Promise<ExportOutcome>(() => undefined);
  const r = await rig(
    [
      async () => ({ kind: "accepted", rejected: 0 }),
      () => never,
      async () => ({ kind: "accepted", rejected: 0 }),
    ],
    stop,
  );
  // The first export is committed at once, so the third goes out beside the second (which never ends).
  await r.shipper.add(recs(0, 6));
  await waitFor("the third export answered", () => r.answered() === 2);
  stop.abort(new Error("shutting down"));
  // The sink ignores the signal here; what matters is what was committed.
  expect(r.sent).toHaveLength(3);
  expect(r.committed).toEqual([["/r0", "/r1"]]);
  await r.cp.close();
  const reopened = await new CheckpointStore(dir).open(1, "server", () => 0, 600_000);
  expect(reopened.state.recent.fingerprints()).toEqual([
    String(0).padStart(32, "0"),
    String(1).padStart(32, "0"),
  ]);
});

it("sends nothing whose delta could not be made durable", async () => {
  const r = await rig([]);
  // The journal's place is taken by a directory: appending to it fails.
  await mkdir(join(dir, "site-1-server.journal"));
  await expect(r.shipper.add(recs(0, 2))).rejects.toThrow(/EISDIR/);
  expect(r.sent).toEqual([]);
  expect(r.committed).toEqual([]);
});

it("writes the commit marker in the same turn as the acknowledgement, before any timer or I/O", async () => {
  const gate = deferred();
  const r = await rig([() => gate.promise]);
  const adding = r.shipper.add(recs(0, 2));
  await waitFor("the export in flight", () => r.inFlight() === 1);
  const journal = join(dir, "site-1-server.journal");
  // A next-tick callback runs once every promise continuation of this turn has, before any I/O.
  const seen = new Promise<string>((resolve) =>
    process.nextTick(() => resolve(readFileSync(journal, "utf8"))),
  );
  gate.accept();
  expect(await seen).toContain('{"k":1}');
  await adding;
  await r.shipper.flush();
});
