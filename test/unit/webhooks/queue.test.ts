import { appendFile, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { OutgoingRecord } from "../../../src/logs/otlp/encode.js";
import { CheckpointWriteError } from "../../../src/ha/volume.js";
import { parseQueueFile, QUEUE_FILE, QueueFullError, WebhookQueue } from "../../../src/webhooks/queue.js";
import { mountTmpfs, TMPFS_UNAVAILABLE, type TestVolume } from "../../helpers/volume.js";

let dir: string;
let file: string;
const open: WebhookQueue[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "webhook-queue-"));
  file = join(dir, QUEUE_FILE);
});
afterEach(async () => {
  for (const q of open.splice(0)) await q.close();
  await rm(dir, { recursive: true, force: true });
});

function record(n: number): OutgoingRecord {
  return {
    timeMs: 1_769_860_800_000 + n,
    observedMs: 1_769_860_800_000 + n,
    severityNumber: 9,
    severityText: "INFO",
    body: `event ${n}`,
    attributes: { "event.name": "site_disabled", "log.record.uid": `webhook-${n}` },
    eventName: "site_disabled",
  };
}

async function openQueue(limits?: { maxRecords: number; maxBytes: number }, depths?: number[]) {
  const q = new WebhookQueue(file, limits, (d) => depths?.push(d));
  const opened = await q.open();
  open.push(q);
  return { q, opened };
}

const bodies = (q: WebhookQueue) => q.oldest(100, 1 << 30).map((e) => e.record.body);

describe("the durable webhook queue", () => {
  it("a record is in the file once enqueue resolves", async () => {
    const { q } = await openQueue();
    await q.enqueue(record(1));
    const { records } = parseQueueFile(await readFile(file, "utf8"));
    expect(records.map((r) => r.record)).toEqual([record(1)]);
    expect(q.depth).toBe(1);
  });

  it("records enqueued together share one write and keep their order", async () => {
    const { q } = await openQueue();
    await Promise.all([1, 2, 3, 4, 5].map((n) => q.enqueue(record(n))));
    expect(bodies(q)).toEqual(["event 1", "event 2", "event 3", "event 4", "event 5"]);
    const text = await readFile(file, "utf8");
    expect(text.trim().split("\n")).toHaveLength(5);
  });

  it("what was not acknowledged waits again after a restart (a crash keeps nothing else in memory)", async () => {
    const first = await openQueue();
    for (const n of [1, 2, 3]) await first.q.enqueue(record(n));
    const [a] = first.q.oldest(1, 1 << 30);
    await first.q.acknowledge([a?.seq as number]);
    // No close: the process "dies" here; a new queue reads the same file.
    const again = new WebhookQueue(file);
    const opened = await again.open();
    open.push(again);
    expect(opened.replayed).toBe(2);
    expect(bodies(again)).toEqual(["event 2", "event 3"]);
    // New records get sequence numbers after the replayed ones.
    await again.enqueue(record(4));
    expect(bodies(again)).toEqual(["event 2", "event 3", "event 4"]);
    const seqs = again.oldest(10, 1 << 30).map((e) => e.seq);
    expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);
  });

  it("a torn last line (a write that was never answered) and unreadable lines are skipped", async () => {
    const first = await openQueue();
    await first.q.enqueue(record(1));
    await appendFile(file, "garbage\n");
    await appendFile(file, '{"q":99,"r":{"timeMs":1');
    const again = new WebhookQueue(file);
    const opened = await again.open();
    open.push(again);
    expect(opened).toEqual({ replayed: 1, skippedLines: 2 });
    expect(bodies(again)).toEqual(["event 1"]);
    // The file was rewritten with only what waits: appending goes on cleanly.
    await again.enqueue(record(2));
    expect(parseQueueFile(await readFile(file, "utf8"))).toMatchObject({ skipped: 0 });
  });

  it("acknowledged records leave at once; the depth is reported as it changes", async () => {
    const depths: number[] = [];
    const { q } = await openQueue(undefined, depths);
    await q.enqueue(record(1));
    await q.enqueue(record(2));
    await q.acknowledge(q.oldest(10, 1 << 30).map((e) => e.seq));
    expect(q.depth).toBe(0);
    expect(depths).toEqual([0, 1, 2, 0]);
    expect(parseQueueFile(await readFile(file, "utf8")).records).toEqual([]);
  });

  it("refuses records beyond its limits with QueueFullError, and takes them again once drained", async () => {
    const { q } = await openQueue({ maxRecords: 2, maxBytes: 1 << 20 });
    await q.enqueue(record(1));
    await q.enqueue(record(2));
    await expect(q.enqueue(record(3))).rejects.toBeInstanceOf(QueueFullError);
    await q.acknowledge(q.oldest(1, 1 << 30).map((e) => e.seq));
    await expect(q.enqueue(record(3))).resolves.toBeUndefined();
    const small = new WebhookQueue(join(dir, "small.jsonl"), { maxRecords: 100, maxBytes: 100 });
    await small.open();
    open.push(small);
    await expect(small.enqueue(record(1))).rejects.toBeInstanceOf(QueueFullError);
  });

  it("never holds more than its limit, counting records still being written", async () => {
    const { q } = await openQueue({ maxRecords: 5, maxBytes: 1 << 20 });
    const first = Array.from({ length: 5 }, (_, i) => q.enqueue(record(i)));
    // The first five are being written (taken for the write, not yet waiting): once this turn's
    // promise continuations ran, before the write's I/O completes ...
    await new Promise((resolve) => process.nextTick(resolve));
    expect([q.depth, q.writingRecords]).toEqual([0, 5]);
    // ... and still count: a sixth is refused while they are on their way to disk.
    const late = Array.from({ length: 3 }, (_, i) => q.enqueue(record(10 + i)));
    const outcomes = await Promise.allSettled([...first, ...late]);
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(5);
    expect(
      outcomes.filter((o) => o.status === "rejected" && o.reason instanceof QueueFullError),
    ).toHaveLength(3);
    expect(q.depth).toBe(5);
    expect(parseQueueFile(await readFile(file, "utf8")).records).toHaveLength(5);
  });

  it("a queue that is not open (or closed) refuses records", async () => {
    const q = new WebhookQueue(file);
    await expect(q.enqueue(record(1))).rejects.toThrow(/not open/);
    await q.open();
    await q.close();
    await expect(q.enqueue(record(1))).rejects.toThrow();
  });
});

describe.skipIf(TMPFS_UNAVAILABLE)("the webhook queue on a full volume", () => {
  let volume: TestVolume;
  beforeEach(async () => {
    volume = await mountTmpfs(512);
  });
  afterEach(() => volume.close());

  it("opens anyway, refuses events with a reported error naming logs.checkpointDir, and takes them once space returns", async () => {
    const path = join(volume.dir, QUEUE_FILE);
    // What the last run left waiting is shipped even when the file cannot be rewritten.
    await appendFile(path, `{"q":1,"r":${JSON.stringify(record(1))}}\n`);
    await volume.fill();
    const reported: CheckpointWriteError[] = [];
    const q = new WebhookQueue(path, undefined, undefined, { report: (e) => void reported.push(e) });
    open.push(q);
    expect(await q.open()).toEqual({ replayed: 1, skippedLines: 0 });
    expect(q.depth).toBe(1);
    const err = await q.enqueue(record(2)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CheckpointWriteError);
    expect((err as Error).message).toMatch(/webhook queue .* under logs\.checkpointDir \(no space left/);
    expect(reported.length).toBeGreaterThanOrEqual(2);
    expect(reported.every((e) => e.kind === "webhook_queue" && e.reason === "no_space")).toBe(true);
    await volume.free();
    await q.enqueue(record(3));
    expect(bodies(q)).toEqual(["event 1", "event 3"]);
    expect(parseQueueFile(await readFile(path, "utf8")).records.map((r) => r.record.body)).toEqual([
      "event 1",
      "event 3",
    ]);
  });
});
