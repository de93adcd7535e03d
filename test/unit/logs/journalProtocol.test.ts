/**
 * The journal's protocol, enforced by the journal itself: a prepared delta is committed or abandoned
 * once, oldest first; nothing is prepared beside a write in progress or after an abandon; compaction
 * and release wait for every outstanding delta. Each broken rule throws at once and leaves the disk
 * as it was.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { deltaFor } from "../../../src/logs/checkpoint.js";
import {
  CheckpointStore,
  JournalProtocolError,
  type PreparedDelta,
  type StreamCheckpoint,
} from "../../../src/logs/journal.js";

let dir: string;
let store: CheckpointStore;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "journal-protocol-"));
  store = new CheckpointStore(dir);
  await store.init();
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const T = 1_700_000_000_000;
const records = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    fingerprint: String(from + i).padStart(32, "0"),
    occurrence: 0,
    timeMs: T + (from + i) * 10,
  }));

function prepare(cp: StreamCheckpoint, from: number, n = 2): Promise<PreparedDelta<string>> {
  return cp.prepare((seq) => deltaFor(cp.state, seq, records(from, n), Infinity), `batch ${from}`);
}

const journal = () => readFileSync(join(dir, "site-1-server.journal"), "utf8");
const markers = () => [...journal().matchAll(/\{"k":(\d+)\}/g)].map((m) => Number(m[1]));

describe("journal protocol", () => {
  it("carries what the export sends in the prepared delta, durable before it is handed out", async () => {
    const cp = await store.open(1, "server", () => T, 600_000);
    const first = await prepare(cp, 0);
    expect(first.payload).toBe("batch 0");
    expect(journal()).toContain(`"s":${first.seq}`);
    expect(markers()).toEqual([]);
  });

  it("refuses a commit before an earlier delta's, and writes no marker for it", async () => {
    const cp = await store.open(1, "server", () => T, 600_000);
    const first = await prepare(cp, 0);
    const second = await prepare(cp, 2);
    expect(() => second.commit()).toThrow(JournalProtocolError);
    expect(() => second.commit()).toThrow(/delta 2 committed before delta 1/);
    expect(markers()).toEqual([]);
    first.commit();
    second.commit();
    expect(markers()).toEqual([1, 2]);
  });

  it("settles a delta once: a second commit, or a commit after an abandon, throws", async () => {
    const cp = await store.open(1, "server", () => T, 600_000);
    const first = await prepare(cp, 0);
    const second = await prepare(cp, 2);
    first.commit();
    expect(() => first.commit()).toThrow(/delta 1 committed after it was committed or abandoned/);
    second.abandon();
    expect(() => second.commit()).toThrow(JournalProtocolError);
    expect(markers()).toEqual([1]);
  });

  it("refuses an abandon out of order", async () => {
    const cp = await store.open(1, "server", () => T, 600_000);
    await prepare(cp, 0);
    const second = await prepare(cp, 2);
    expect(() => second.abandon()).toThrow(/delta 2 abandoned before delta 1/);
  });

  it("takes no delta after an abandon: the checkpoint in memory is ahead of the disk", async () => {
    const cp = await store.open(1, "server", () => T, 600_000);
    (await prepare(cp, 0)).abandon();
    await expect(prepare(cp, 2)).rejects.toThrow(/after a delta was abandoned/);
    await cp.close();
    // On disk the abandoned delta is not in force.
    const again = await new CheckpointStore(dir).open(1, "server", () => T, 600_000);
    expect(again.state.recent.size).toBe(0);
  });

  it("refuses a prepare beside one still being written", async () => {
    const cp = await store.open(1, "server", () => T, 600_000);
    const writing = prepare(cp, 0);
    await expect(prepare(cp, 2)).rejects.toThrow(/prepare during a prepare/);
    (await writing).commit();
    expect(markers()).toEqual([1]);
  });

  it("refuses compaction and release while a delta waits for its commit, and allows them after", async () => {
    const cp = await store.open(1, "server", () => T, 600_000);
    const first = await prepare(cp, 0);
    await expect(cp.compactIfLarge()).rejects.toThrow(/compaction while 1 prepared delta/);
    expect(() => cp.release()).toThrow(/release while 1 prepared delta/);
    first.commit();
    await cp.compactIfLarge();
    cp.release();
    expect(markers()).toEqual([1]);
  });

  it("a close with a delta outstanding lets go of the journal once the delta is committed", async () => {
    const cp = await store.open(1, "server", () => T, 600_000);
    const first = await prepare(cp, 0);
    await cp.close();
    first.commit();
    expect(markers()).toEqual([1]);
    const again = await new CheckpointStore(dir).open(1, "server", () => T, 600_000);
    expect(again.state.recent.size).toBe(2);
  });

  it("settling a delta other than through its PreparedDelta does not compile", () => {
    const misuse = (cp: StreamCheckpoint, prepared: PreparedDelta<string>) => {
      // @ts-expect-error a delta is committed by its PreparedDelta, which the journal checks is the oldest
      cp.commit(prepared);
    };
    expect(misuse).toBeTypeOf("function");
  });
});
