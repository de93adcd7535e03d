/**
 * Checkpoints on disk: a snapshot plus a journal of deltas with commit markers. What one export costs
 * on disk is proportional to the export; only committed deltas count; a torn last line is ignored; the
 * first version of the snapshot format still loads; compaction folds the journal in once it grows.
 */
import { appendFileSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CorruptCheckpointError, deltaFor } from "../../../src/logs/checkpoint.js";
import { CheckpointStore } from "../../../src/logs/journal.js";

let dir: string;
let store: CheckpointStore;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "journal-test-"));
  store = new CheckpointStore(dir);
  await store.init();
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const OVERLAP = 120_000;
const T = 1_700_000_000_000;
const records = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    fingerprint: String(from + i).padStart(32, "0"),
    occurrence: 0,
    timeMs: T + (from + i) * 10,
    countKey: "2xx|false",
  }));

async function deliver(
  cp: Awaited<ReturnType<CheckpointStore["open"]>>,
  from: number,
  n: number,
  commit = true,
) {
  const prepared = await cp.prepare((seq) => deltaFor(cp.state, seq, records(from, n), Infinity), null);
  if (commit) prepared.commit();
  return prepared;
}

describe("journal", () => {
  it("committed deltas survive a restart; a delta without its commit marker does not", async () => {
    const cp = await store.open(5, "server", () => T, OVERLAP);
    await deliver(cp, 0, 10);
    await deliver(cp, 10, 10);
    await deliver(cp, 20, 10, false); // the export of these was never acknowledged
    await cp.close();
    const again = await store.open(5, "server", () => 0, OVERLAP);
    expect(again.state.highWaterMs).toBe(T + 19 * 10);
    expect(again.state.recent.size).toBe(20);
    expect(again.state.counts).toEqual({ "2xx|false": 20 });
    expect(again.state.floorMs).toBe(T);
  });

  it("ignores a torn last line and keeps appending cleanly after it", async () => {
    const cp = await store.open(5, "php", () => T, OVERLAP);
    await deliver(cp, 0, 3);
    await cp.close();
    const journal = join(dir, "site-5-php.journal");
    appendFileSync(journal, '{"s":2,"h":17000000');
    const again = await store.open(5, "php", () => T, OVERLAP);
    expect(again.state.recent.size).toBe(3);
    await deliver(again, 3, 3);
    await again.close();
    const third = await store.open(5, "php", () => T, OVERLAP);
    expect(third.state.recent.size).toBe(6);
  });

  it("costs about the size of the export on disk, not the size of the window", async () => {
    const cp = await store.open(5, "server", () => T, 10 * 60_000);
    for (let i = 0; i < 50; i++) await deliver(cp, i * 200, 200);
    const journal = join(dir, "site-5-server.journal");
    const before = statSync(journal).size;
    await deliver(cp, 10_000, 200);
    const grew = statSync(journal).size - before;
    // 200 fingerprints with their counts and times: tens of KB at most, while the window holds 10,200.
    expect(cp.state.recent.size).toBe(10_200);
    expect(grew).toBeLessThan(30_000);
    expect(grew).toBeGreaterThan(200 * 32);
  });

  it("compacts into a new snapshot once the journal has grown, and loads the same state", async () => {
    const cp = await store.open(5, "server", () => T, 10 * 60_000);
    for (let i = 0; i < 60; i++) await deliver(cp, i * 100, 100);
    await cp.compactIfLarge();
    expect(statSync(join(dir, "site-5-server.journal"), { throwIfNoEntry: false })).toBeUndefined();
    await deliver(cp, 6000, 100);
    await cp.close();
    const again = await store.open(5, "server", () => T, 10 * 60_000);
    expect(again.state.recent.size).toBe(6100);
    expect(again.state.counts).toEqual({ "2xx|false": 6100 });
    expect(again.state.seq).toBe(61);
  });

  it("a journal left behind by a compaction that died after the snapshot is not applied twice", async () => {
    const cp = await store.open(5, "server", () => T, OVERLAP);
    await deliver(cp, 0, 5);
    await cp.close();
    const journal = join(dir, "site-5-server.journal");
    const text = readFileSync(journal, "utf8");
    // The state with the delta folded in becomes the snapshot (as compaction does) ...
    const folded = await store.open(5, "server", () => T, OVERLAP);
    await folded.close();
    // ... and the old journal is still there (the process died before removing it).
    writeFileSync(journal, text);
    const again = await store.open(5, "server", () => T, OVERLAP);
    expect(again.state.counts).toEqual({ "2xx|false": 5 });
  });

  it("reads the first snapshot format (no seq)", async () => {
    writeFileSync(
      join(dir, "site-9-server.json"),
      JSON.stringify({
        version: 1,
        siteId: 9,
        stream: "server",
        floorMs: T,
        highWaterMs: T + 1000,
        recent: { abc: [2, T + 1000] },
        counts: { "5xx|false": 3 },
        updatedAt: new Date(T).toISOString(),
      }),
    );
    const cp = await store.open(9, "server", () => 0, OVERLAP);
    expect(cp.state.recent.timeOf("abc")).toBe(T + 1000);
    expect(cp.state.recent.count("abc")).toBe(2);
    expect(cp.state.counts).toEqual({ "5xx|false": 3 });
    expect(cp.created).toBe(false);
  });

  it("a corrupt snapshot or journal stops the stream with a message naming the file and how to reset", async () => {
    writeFileSync(join(dir, "site-3-server.json"), "{ not json");
    const err = await store.open(3, "server", () => 0, OVERLAP).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CorruptCheckpointError);
    expect((err as Error).message).toContain("site-3-server.json");
    expect((err as Error).message).toContain("delete the file");
    const cp = await store.open(4, "server", () => T, OVERLAP);
    await deliver(cp, 0, 2);
    await cp.close();
    const journal = join(dir, "site-4-server.journal");
    writeFileSync(journal, `garbage\n${readFileSync(journal, "utf8")}`);
    await expect(store.open(4, "server", () => T, OVERLAP)).rejects.toBeInstanceOf(CorruptCheckpointError);
  });

  it("never starts a checkpoint after now, and moves back one that did, with a warning", async () => {
    const now = Date.now();
    const second = Math.floor(now / 1000) * 1000;
    const tomorrow = now + 86_400_000;
    const repaired: Array<[string, number, number]> = [];
    const clocked = new CheckpointStore(dir, {
      now: () => now,
      floorRepaired: (file, was, to) => void repaired.push([file, was, to]),
    });
    const fresh = await clocked.open(1, "server", () => tomorrow, OVERLAP);
    expect(fresh.state.floorMs).toBe(second);
    await fresh.close();
    expect(JSON.parse(readFileSync(join(dir, "site-1-server.json"), "utf8")).floorMs).toBe(second);
    // A checkpoint written with a future floor (by a release that accepted one) is repaired.
    const file = join(dir, "site-2-server.json");
    writeFileSync(
      file,
      JSON.stringify({
        version: 2,
        siteId: 2,
        stream: "server",
        floorMs: tomorrow,
        highWaterMs: tomorrow,
        seq: 0,
        recent: {},
        counts: {},
        updatedAt: new Date(now).toISOString(),
      }),
    );
    const old = await clocked.open(2, "server", () => 0, OVERLAP);
    expect(old.state.floorMs).toBe(second);
    expect(old.state.highWaterMs).toBe(second);
    expect(repaired).toEqual([[file, tomorrow, second]]);
    await old.close();
    expect((await new CheckpointStore(dir).open(2, "server", () => 0, OVERLAP)).state.floorMs).toBe(second);
  });

  it("leaves no temporary file behind, and removes those a killed process left", async () => {
    writeFileSync(join(dir, "site-1-server.json.tmp-999-3"), "half");
    await store.init();
    const cp = await store.open(1, "server", () => T, OVERLAP);
    await deliver(cp, 0, 3);
    await cp.compactIfLarge();
    await cp.close();
    expect((await readdir(dir)).filter((n) => n.includes(".tmp-"))).toEqual([]);
  });
});
