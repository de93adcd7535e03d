/**
 * The checkpoint journal on a volume that fills up (a real tmpfs): a delta that cannot be written is
 * not prepared (so its export is never sent) and is reported; an acknowledgement whose commit marker
 * cannot be written stays in force in memory and its marker is written, in order, before the next
 * delta once space returns; a process that lost the checkpoint lock writes nothing more.
 */
import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import { deltaFor, type DeliveredRecord } from "../../../src/logs/checkpoint.js";
import { CheckpointMemory } from "../../../src/logs/checkpointMemory.js";
import { CheckpointFencedError, CheckpointStore, type StreamCheckpoint } from "../../../src/logs/journal.js";
import { deltaLine } from "../../../src/logs/journalFile.js";
import { CheckpointWriteError } from "../../../src/ha/volume.js";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { mountTmpfs, TMPFS_UNAVAILABLE, type TestVolume } from "../../helpers/volume.js";

const T = 1_700_000_000_000;
const OVERLAP = 600_000;
const records = (from: number, n: number): DeliveredRecord[] =>
  Array.from({ length: n }, (_, i) => ({
    fingerprint: String(from + i).padStart(32, "0"),
    occurrence: 0,
    timeMs: T + (from + i) * 10,
  }));

describe.skipIf(TMPFS_UNAVAILABLE)("checkpoint journal on a full volume", () => {
  let volume: TestVolume;
  let reported: CheckpointWriteError[];
  let store: CheckpointStore;
  beforeEach(async () => {
    volume = await mountTmpfs(512);
    reported = [];
    store = new CheckpointStore(volume.dir, { failures: { report: (e) => void reported.push(e) } });
  });
  afterEach(() => volume.close());

  const journal = () => readFileSync(join(volume.dir, "site-1-server.journal"), "utf8");

  it("does not prepare a delta it cannot write: nothing applied, reported, and fine once space returns", async () => {
    const cp = await store.open(1, "server", () => T, OVERLAP);
    await volume.fill();
    const err = await cp
      .prepare((seq) => deltaFor(cp.state, seq, records(0, 20), Infinity), "batch")
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CheckpointWriteError);
    expect((err as Error).message).toMatch(
      /^cannot write the checkpoint journal .*site-1-server\.journal under logs\.checkpointDir \(no space left on the device, ENOSPC\)/,
    );
    expect(reported).toEqual([err]);
    expect(cp.state.recent.size).toBe(0);
    expect(cp.pending).toBe(0);
    await volume.free();
    const prepared = await cp.prepare((seq) => deltaFor(cp.state, seq, records(0, 20), Infinity), "batch");
    expect(prepared.seq).toBe(1);
    prepared.commit();
    expect(journal()).toMatch(/^\{"s":1,.*\n\{"k":1\}\n$/);
  });

  it("keeps an acknowledgement whose marker it cannot write, and writes the marker before the next delta", async () => {
    const cp = await store.open(1, "server", () => T, OVERLAP);
    // A first delta that fills the journal's first page exactly: the marker needs a page of its own.
    const batch = records(0, 40);
    const lineOf = () => Buffer.byteLength(deltaLine(deltaFor(cp.state, 1, batch, Infinity)));
    const last = batch[39] as DeliveredRecord;
    last.fingerprint = last.fingerprint.padStart(32 + 4096 - lineOf(), "0");
    expect(lineOf()).toBe(4096);
    const first = await cp.prepare((seq) => deltaFor(cp.state, seq, batch, Infinity), 1);
    await volume.fill();
    const state = first.commit();
    expect(state.recent.size).toBe(40);
    expect(cp.owedMarkers).toBe(1);
    expect(reported.map((e) => e.reason)).toEqual(["no_space"]);
    expect(journal()).not.toContain('{"k":1}');
    // Still full: the next delta is not prepared (its marker would come after an unwritten one).
    await expect(
      cp.prepare((seq) => deltaFor(cp.state, seq, records(100, 5), Infinity), 2),
    ).rejects.toBeInstanceOf(CheckpointWriteError);
    await volume.free();
    const second = await cp.prepare((seq) => deltaFor(cp.state, seq, records(100, 5), Infinity), 2);
    second.commit();
    expect(cp.owedMarkers).toBe(0);
    expect([...journal().matchAll(/\{"(s|k)":(\d+)/g)].map((m) => `${m[1]}${m[2]}`)).toEqual([
      "s1",
      "k1",
      "s2",
      "k2",
    ]);
    await cp.close();
    const again = await new CheckpointStore(volume.dir).open(1, "server", () => T, OVERLAP);
    expect(again.state.recent.size).toBe(45);
  });
});

describe("checkpoint journal of a process that lost the lock", () => {
  it("writes no delta and no marker once the fence is up", async () => {
    const dir = await mkdtemp(join(tmpdir(), "journal-fence-"));
    const lock: { lost?: string } = {};
    const store = new CheckpointStore(dir, { fence: () => lock.lost });
    const cp = await store.open(1, "server", () => T, OVERLAP);
    const first = await cp.prepare((seq) => deltaFor(cp.state, seq, records(0, 2), Infinity), 1);
    lock.lost = "another exporter took over the checkpoint lock (generation 2)";
    first.commit();
    await expect(
      cp.prepare((seq) => deltaFor(cp.state, seq, records(2, 2), Infinity), 2),
    ).rejects.toBeInstanceOf(CheckpointFencedError);
    const text = readFileSync(join(dir, "site-1-server.journal"), "utf8");
    expect(text).toMatch(/^\{"s":1,[^\n]*\n$/);
    await rm(dir, { recursive: true, force: true });
  });
});

describe("checkpoints of a process that lost the lock because the directory was recreated", () => {
  async function lostAndRecreated(
    prepareAndLose: (cp: StreamCheckpoint, lock: { lost?: string }) => Promise<void>,
  ) {
    const dir = await mkdtemp(join(tmpdir(), "journal-memory-"));
    const memory = new CheckpointMemory();
    const lock: { lost?: string } = {};
    const store = new CheckpointStore(dir, { fence: () => lock.lost, memory });
    const cp = await store.open(1, "server", () => T, OVERLAP);
    await prepareAndLose(cp, lock);
    await cp.close();
    await rm(dir, { recursive: true, force: true });
    const resumed: string[] = [];
    const next = new CheckpointStore(dir, { memory, resumedFromMemory: (f) => resumed.push(f) });
    const again = await next.open(1, "server", () => T + 3_600_000, OVERLAP);
    return { dir, memory, again, resumed };
  }

  it("resumes what was acknowledged, the marker it could no longer write included, and writes the file again", async () => {
    const { dir, memory, again, resumed } = await lostAndRecreated(async (cp, lock) => {
      const first = await cp.prepare((seq) => deltaFor(cp.state, seq, records(0, 5), Infinity), 1);
      first.commit();
      const second = await cp.prepare((seq) => deltaFor(cp.state, seq, records(5, 5), Infinity), 2);
      lock.lost = "the lock file is gone (was the checkpoint directory recreated?)";
      second.commit(); // acknowledged after the loss: its marker cannot be written
    });
    expect(again.created).toBe(false);
    expect(again.state.recent.size).toBe(10);
    expect(again.state.floorMs).toBe(T);
    expect(resumed).toEqual([join(dir, "site-1-server.json")]);
    expect(memory.size).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, "site-1-server.json"), "utf8"))).toBeTruthy();
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps nothing of a stream whose last export was never acknowledged: it starts afresh", async () => {
    const { dir, again, resumed } = await lostAndRecreated(async (cp, lock) => {
      (await cp.prepare((seq) => deltaFor(cp.state, seq, records(0, 5), Infinity), 1)).commit();
      const unanswered = await cp.prepare((seq) => deltaFor(cp.state, seq, records(5, 5), Infinity), 2);
      lock.lost = "another exporter took over the checkpoint lock (generation 2)";
      unanswered.abandon();
    });
    expect(again.created).toBe(true);
    expect(again.state.recent.size).toBe(0);
    expect(resumed).toEqual([]);
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps nothing when the lock was held at the close, and a file on disk wins over memory", async () => {
    const dir = await mkdtemp(join(tmpdir(), "journal-memory-"));
    const memory = new CheckpointMemory();
    const store = new CheckpointStore(dir, { fence: () => undefined, memory });
    const cp = await store.open(1, "php", () => T, OVERLAP);
    (await cp.prepare((seq) => deltaFor(cp.state, seq, records(0, 3), Infinity), 1)).commit();
    await cp.close();
    expect(memory.size).toBe(0);
    memory.keep(store.fileFor(1, "php"), '{"this":"is not read"}');
    const again = await new CheckpointStore(dir, { memory }).open(1, "php", () => T, OVERLAP);
    expect(again.state.recent.size).toBe(3);
    expect(memory.size).toBe(0);
    await rm(dir, { recursive: true, force: true });
  });
});
