/**
 * The log tailer against a scripted platform (FakeLogApi) and recording hooks. Expected values are
 * worked out by hand from DESIGN.md ("log tailers"): page counts, what is shipped, what is deduplicated.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { LogEntry, ServerLogEntry } from "../../../src/api/schemas.js";
import {
  CheckpointStore,
  CorruptCheckpointError,
  newCheckpoint,
  remember,
} from "../../../src/logs/checkpoint.js";
import { resolveStartFrom } from "../../../src/logs/pipeline.js";
import { Tailer, type TailerOptions } from "../../../src/logs/tailer.js";
import { FakeLogApi, RecordingHooks, silent } from "./fakes.js";

const SITE = { id: 1, name: "shop" };
/** Entries are written an hour ago, on whole seconds (web-server times are epoch seconds). */
const T0 = Math.floor(Date.now() / 1000) - 3600;

function line(second: number, url = `/p${second}`): ServerLogEntry {
  return {
    timestamp: T0 + second,
    request_type: "GET",
    request_url: url,
    status: 200,
    http_version: "HTTP/1.1",
  };
}
/** Entry `i` written at minute i. */
const minute = (i: number) => line(60 * i, `/m${i}`);

let dir: string;
let api: FakeLogApi;
let hooks: RecordingHooks;
let store: CheckpointStore;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "tailer-test-"));
  store = new CheckpointStore(join(dir, "checkpoints"));
  await store.init();
  api = new FakeLogApi();
  hooks = new RecordingHooks();
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function tailer(opts: Partial<TailerOptions> = {}): Tailer {
  return new Tailer(
    SITE,
    "server",
    api.asSitehostApi(),
    store,
    hooks,
    {
      overlapMs: 120_000,
      startFromMs: () => (T0 - 3600) * 1000, // an hour before the first entry: everything is new
      maxPagesPerCycle: 1000,
      maxBufferedEntries: 10_000,
      spoolDir: join(dir, "spool"),
      ...opts,
    },
    silent,
  );
}

const signal = new AbortController().signal;
const urls = (records: { entry: LogEntry }[]) => records.map((r) => (r.entry as ServerLogEntry).request_url);
const cpFile = () => JSON.parse(readFileSync(store.fileFor(1, "server"), "utf8")) as { highWaterMs: number };

describe("delivery and dedupe", () => {
  it("ships two identical lines in one second both, with different occurrences, and absorbs a replay", async () => {
    api.append(line(0, "/same"), line(0, "/same"), line(1, "/other"));
    const t = tailer();
    await t.cycle(signal);
    expect(hooks.shipped).toHaveLength(3);
    const same = hooks.shipped.filter((r) => (r.entry as ServerLogEntry).request_url === "/same");
    expect(same).toHaveLength(2);
    expect(same[0]?.fingerprint).toBe(same[1]?.fingerprint);
    // log.record.uid = fingerprint-occurrence: the two occurrences are 0 and 1.
    expect(same.map((r) => r.occurrence).sort()).toEqual([0, 1]);
    expect(urls(hooks.shipped).at(-1)).toBe("/other"); // oldest-first
    expect(hooks.dedup).toBe(0);

    // Next cycle: the same page is read again (all 3 inside the 2-minute overlap) and absorbed.
    await t.cycle(signal);
    expect(hooks.shipped).toHaveLength(3);
    expect(hooks.dedup).toBe(3);

    // A restarted tailer (new process) reading the same page also ships nothing: the checkpoint file remembers.
    const again = tailer();
    await again.cycle(signal);
    expect(hooks.shipped).toHaveLength(3);
    expect(hooks.dedup).toBe(6);
  });

  it("exports at most 200 records per request, oldest first", async () => {
    // 450 entries, one per second; pages of 300 newest-first: page 1 = seconds 449..150 (300),
    // page 2 = seconds 149..0 (150). Shipped oldest first, one page per export capped at 200:
    // page 2 → 150, then page 1 → 200 + 100.
    for (let i = 0; i < 450; i++) api.append(line(i));
    api.pageSize = 300;
    await tailer().cycle(signal);
    expect(hooks.batches.map((b) => b.length)).toEqual([150, 200, 100]);
    const times = hooks.shipped.map((r) => r.timeMs);
    expect(times[0]).toBe(T0 * 1000);
    expect(times.at(-1)).toBe((T0 + 449) * 1000);
    expect(times.every((t, i) => i === 0 || t > (times[i - 1] as number))).toBe(true);
  });

  it("skips and counts an entry without a timestamp", async () => {
    const noTime = { request_url: "/broken", status: 200 } as unknown as LogEntry;
    api.append(line(0, "/a"), noTime, line(1, "/b"));
    await tailer().cycle(signal);
    expect(urls(hooks.shipped)).toEqual(["/a", "/b"]);
    expect(hooks.malformedCount).toBe(1);
  });
});

describe("paging order", () => {
  it("newest-first: detects the order and stops below checkpoint − overlap", async () => {
    for (let i = 0; i < 10; i++) api.append(minute(i));
    api.order = "newest-first";
    api.pageSize = 2;
    const t = tailer();
    await t.cycle(signal);
    // 10 entries / 2 per page = 5 pages, + 1 empty page that ends the scroll.
    expect(api.requests).toHaveLength(6);
    expect(urls(hooks.shipped)).toEqual([
      "/m0",
      "/m1",
      "/m2",
      "/m3",
      "/m4",
      "/m5",
      "/m6",
      "/m7",
      "/m8",
      "/m9",
    ]);

    api.append(minute(10), minute(11));
    api.requests.length = 0;
    await t.cycle(signal);
    // High water = minute 9, overlap 2 min → lower bound minute 7. Pages: [11,10] [9,8] [7,6]; minute 6 is
    // below the bound, so the scroll stops after 3 requests, a fresh one.
    expect(api.requests).toEqual([null, "scroll-2", "scroll-2"]);
    expect(urls(hooks.shipped).slice(10)).toEqual(["/m10", "/m11"]);
    // 9, 8 and 7 were read again within the overlap and dropped.
    expect(hooks.dedup).toBe(3);
  });

  it("oldest-first snapshot: a fresh scroll reads back to the start and only new entries ship", async () => {
    for (let i = 0; i < 10; i++) api.append(minute(i));
    api.order = "oldest-first";
    api.pageSize = 2;
    const t = tailer();
    await t.cycle(signal);
    expect(api.requests).toHaveLength(6);
    // Shipped page by page as read: 5 exports of 2.
    expect(hooks.batches.map((b) => b.length)).toEqual([2, 2, 2, 2, 2]);

    api.append(minute(10), minute(11));
    api.requests.length = 0;
    await t.cycle(signal);
    // The ended scroll is tried once (a snapshot: empty), then a fresh scroll reads all 12 entries
    // (6 pages) and its empty end page: 1 + 6 + 1 = 8 requests.
    expect(api.requests).toHaveLength(8);
    expect(api.requests[0]).toBe("scroll-1");
    expect(api.requests[1]).toBeNull();
    expect(urls(hooks.shipped).slice(10)).toEqual(["/m10", "/m11"]);
    // Lower bound minute 7: 7, 8, 9 dropped as delivered; 0–6 are below the bound and not counted.
    expect(hooks.dedup).toBe(3);
  });

  it("oldest-first growing cursor: continued next cycle, not re-read", async () => {
    for (let i = 0; i < 4; i++) api.append(minute(i));
    api.order = "oldest-first";
    api.mode = "cursor";
    api.pageSize = 2;
    const t = tailer();
    await t.cycle(signal);
    expect(api.requests).toEqual([null, "scroll-1", "scroll-1"]);
    api.append(minute(4), minute(5));
    api.requests.length = 0;
    await t.cycle(signal);
    // The held cursor yields the 2 new entries, then an empty page: 2 requests, no fresh scroll.
    expect(api.requests).toEqual(["scroll-1", "scroll-1"]);
    expect(urls(hooks.shipped)).toEqual(["/m0", "/m1", "/m2", "/m3", "/m4", "/m5"]);
    expect(hooks.dedup).toBe(0);
  });

  it("newest-first past the page cap: reads on to the checkpoint before shipping, so nothing in the middle is skipped", async () => {
    // 12 entries, pages of 2 newest-first, a cap of 2 pages. Stopping at the cap would ship minutes
    // 11..8 and move the high-water mark past minutes 0..7, which were never read.
    for (let i = 0; i < 12; i++) api.append(minute(i));
    api.order = "newest-first";
    api.pageSize = 2;
    const more = await tailer({ maxPagesPerCycle: 2 }).cycle(signal);
    expect(more).toBe(false);
    expect(urls(hooks.shipped)).toEqual(Array.from({ length: 12 }, (_, i) => `/m${i}`));
    // 6 pages + the empty page that ends the scroll, all in one cycle.
    expect(api.requests).toHaveLength(7);
  });

  it("oldest-first at the page cap: says more is waiting and resumes the same scroll next cycle", async () => {
    for (let i = 0; i < 10; i++) api.append(minute(i));
    api.order = "oldest-first";
    api.pageSize = 2;
    const t = tailer({ maxPagesPerCycle: 2 });
    expect(await t.cycle(signal)).toBe(true);
    expect(urls(hooks.shipped)).toEqual(["/m0", "/m1", "/m2", "/m3"]);
    expect(await t.cycle(signal)).toBe(true);
    expect(await t.cycle(signal)).toBe(false); // minutes 8, 9, then the empty end page
    // One scroll from start to end: never a fresh scroll that would start again from the top.
    expect(api.requests).toEqual([null, "scroll-1", "scroll-1", "scroll-1", "scroll-1", "scroll-1"]);
    expect(urls(hooks.shipped)).toEqual(Array.from({ length: 10 }, (_, i) => `/m${i}`));
    expect(hooks.dedup).toBe(0);
  });

  it.each(["newest-first", "oldest-first"] as const)(
    "%s: a 5xx mid-scroll fails the cycle; the next starts a fresh scroll and ships the rest once",
    async (order) => {
      for (let i = 0; i < 6; i++) api.append(minute(i));
      api.order = order;
      api.pageSize = 2;
      api.failOn.add(2); // the second page request of the first cycle
      const t = tailer();
      await expect(t.cycle(signal)).rejects.toThrow(/503/);
      const afterFailure = hooks.shipped.length;
      // oldest-first ships page 1 as read; newest-first had buffered it and ships nothing.
      expect(afterFailure).toBe(order === "oldest-first" ? 2 : 0);

      await t.cycle(signal);
      expect(api.requests[2]).toBeNull(); // fresh scroll, never the failed scroll id
      expect(urls(hooks.shipped)).toEqual(["/m0", "/m1", "/m2", "/m3", "/m4", "/m5"]);
      expect(hooks.dedup).toBe(afterFailure);
    },
  );
});

describe("checkpoints", () => {
  it("is not advanced when the collector refuses the export", async () => {
    api.append(line(0), line(1));
    const t = tailer();
    hooks.refuse = new Error("OTLP export failed: 503");
    await expect(t.cycle(signal)).rejects.toThrow(/503/);
    const floor = (T0 - 3600) * 1000;
    expect(cpFile().highWaterMs).toBe(floor);

    hooks.refuse = undefined;
    await t.cycle(signal);
    expect(cpFile().highWaterMs).toBe((T0 + 1) * 1000);
    expect(hooks.shipped).toHaveLength(2);
  });

  it("startFrom now ships no history, only what comes after", async () => {
    for (let i = 0; i < 10; i++) api.append(minute(i));
    const start = resolveStartFrom("now", (T0 + 600) * 1000 + 789); // minute 10, rounded down to the second
    expect(start).toBe((T0 + 600) * 1000);
    const t = tailer({ startFromMs: () => start });
    await t.cycle(signal);
    expect(hooks.shipped).toHaveLength(0);
    api.append(minute(11));
    await t.cycle(signal);
    expect(urls(hooks.shipped)).toEqual(["/m11"]);
  });

  it("resolves relative and absolute startFrom", () => {
    // 1_700_000_000_789 − 3_600_000 = 1_699_996_400_789 → whole second 1_699_996_400_000
    expect(resolveStartFrom("-1h", 1_700_000_000_789)).toBe(1_699_996_400_000);
    expect(resolveStartFrom("2023-11-14T22:13:20Z", 0)).toBe(1_700_000_000_000);
  });

  it("a corrupt checkpoint stops the stream with an error naming the file and how to reset", async () => {
    api.append(line(0));
    writeFileSync(store.fileFor(1, "server"), "{not json");
    const t = tailer();
    expect(await t.cycle(signal)).toBe(false);
    expect(t.failed).toBeInstanceOf(CorruptCheckpointError);
    const message = t.failed?.message ?? "";
    expect(message).toContain(store.fileFor(1, "server"));
    expect(message).toContain("delete the file");
    expect(message).toContain("logs.startFrom");
    expect(hooks.checkpointErrors).toHaveLength(1);
    await t.cycle(signal);
    expect(api.requests).toHaveLength(0);
    expect(hooks.shipped).toHaveLength(0);
    expect(readFileSync(store.fileFor(1, "server"), "utf8")).toBe("{not json"); // left for the operator
  });

  it("rejects a checkpoint of another version or site", async () => {
    writeFileSync(store.fileFor(1, "server"), JSON.stringify({ version: 99 }));
    await expect(store.load(1, "server")).rejects.toThrow(/unknown version 99/);
    await store.save(newCheckpoint(2, "server", 0));
    const { renameSync } = await import("node:fs");
    renameSync(store.fileFor(2, "server"), store.fileFor(1, "server"));
    await expect(store.load(1, "server")).rejects.toThrow(/another site or stream/);
  });

  it("writes the next checkpoint before the export and puts it in force only on the acknowledgement", async () => {
    api.append(line(0), line(1));
    const t = tailer();
    await t.prepare();
    const seenDuringExport: Array<{ files: string[]; prepared: number; inForce: number }> = [];
    hooks.onShip = () => {
      const files = readdirSync(join(dir, "checkpoints")).sort();
      const tmp = files.find((f) => f.includes(".tmp-")) as string;
      const prepared = (
        JSON.parse(readFileSync(join(dir, "checkpoints", tmp), "utf8")) as { highWaterMs: number }
      ).highWaterMs;
      seenDuringExport.push({ files, prepared, inForce: cpFile().highWaterMs });
    };
    await t.cycle(signal);
    // While the export was in flight: the prepared file already held the advanced mark (second 1),
    // the checkpoint in force still the start point.
    expect(seenDuringExport).toEqual([
      {
        files: [
          "site-1-server.json",
          expect.stringMatching(/^site-1-server\.json\.tmp-/) as unknown as string,
        ],
        prepared: (T0 + 1) * 1000,
        inForce: (T0 - 3600) * 1000,
      },
    ]);
    expect(cpFile().highWaterMs).toBe((T0 + 1) * 1000);
    expect(readdirSync(join(dir, "checkpoints"))).toEqual(["site-1-server.json"]);
  });

  it("removes the prepared file when the export fails, and a killed process's leftovers at start", async () => {
    api.append(line(0));
    hooks.refuse = new Error("OTLP export failed: 503");
    await expect(tailer().cycle(signal)).rejects.toThrow(/503/);
    expect(readdirSync(join(dir, "checkpoints"))).toEqual(["site-1-server.json"]);
    writeFileSync(join(dir, "checkpoints", "site-1-server.json.tmp-4242-7"), "{half");
    await store.init();
    expect(readdirSync(join(dir, "checkpoints"))).toEqual(["site-1-server.json"]);
  });

  it("round-trips through its file: window in delivery order, counts, marks", async () => {
    const cp = newCheckpoint(1, "server", 1_000);
    cp.highWaterMs = 5_000;
    cp.counts = { "2xx|false": 3, "5xx|true": 1 };
    remember(cp, "b".repeat(32), 2, 4_000);
    remember(cp, "a".repeat(32), 1, 5_000);
    await store.save(cp);
    const text = readFileSync(store.fileFor(1, "server"), "utf8");
    expect(JSON.parse(text)).toMatchObject({
      version: 1,
      floorMs: 1_000,
      highWaterMs: 5_000,
      counts: { "2xx|false": 3, "5xx|true": 1 },
      recent: { ["b".repeat(32)]: [2, 4_000], ["a".repeat(32)]: [1, 5_000] },
    });
    const loaded = await store.load(1, "server");
    expect([...(loaded?.recent ?? new Map())].map(([fp, e]) => [fp[0], e.n, e.t])).toEqual([
      ["b", 2, 4_000],
      ["a", 1, 5_000],
    ]);
    expect(loaded?.counts).toEqual(cp.counts);
  });

  it("after a refused export, the next cycle starts from the committed checkpoint, not the advanced one", async () => {
    api.append(line(0), line(1));
    const t = tailer();
    hooks.refuse = new Error("OTLP export failed: 503");
    await expect(t.cycle(signal)).rejects.toThrow(/503/);
    api.append(line(2));
    hooks.refuse = undefined;
    await t.cycle(signal);
    // Nothing was acknowledged before: all three ship now, none counted as already delivered.
    expect(urls(hooks.shipped)).toEqual(["/p0", "/p1", "/p2"]);
    expect(hooks.dedup).toBe(0);
  });

  it("writes atomically: no temporary file is left next to the checkpoint", async () => {
    for (let i = 0; i < 5; i++) api.append(line(i));
    api.pageSize = 2;
    await tailer().cycle(signal);
    expect(readdirSync(join(dir, "checkpoints"))).toEqual(["site-1-server.json"]);
    const cp = JSON.parse(readFileSync(store.fileFor(1, "server"), "utf8")) as Record<string, unknown>;
    expect(cp.version).toBe(1);
    expect(cp.highWaterMs).toBe((T0 + 4) * 1000);
    // All five are within the 2-minute overlap of the high-water mark, so all are remembered once.
    expect(Object.values(cp.recent as object)).toHaveLength(5);
  });
});

describe("retention gap and backlog", () => {
  it("detects a retention gap once and counts it", async () => {
    const now = Date.now();
    const cp = newCheckpoint(1, "server", now - 9 * 86_400_000);
    cp.highWaterMs = now - 8 * 86_400_000; // delivered up to 8 days ago; retention is 7 days
    await store.save(cp);
    const first = Math.floor((now - 6 * 86_400_000) / 1000); // the oldest entry still held: 6 days ago
    for (let i = 0; i < 3; i++) api.append({ ...line(0, `/g${i}`), timestamp: first + i });
    const t = tailer();
    await t.cycle(signal);
    expect(hooks.gaps).toEqual([{ fromMs: cp.highWaterMs, toMs: first * 1000 }]);
    expect(hooks.shipped).toHaveLength(3);
    await t.cycle(signal);
    expect(hooks.gaps).toHaveLength(1);
  });

  it("spills a newest-first backlog bigger than maxBufferedEntries to disk and ships it all once, oldest first", async () => {
    for (let i = 0; i < 30; i++) api.append(line(i));
    api.order = "newest-first";
    api.pageSize = 3;
    await tailer({ maxBufferedEntries: 5 }).cycle(signal);
    const times = hooks.shipped.map((r) => r.timeMs);
    // 30 entries, seconds 0..29, each exactly once, ascending.
    expect(times).toEqual(Array.from({ length: 30 }, (_, i) => (T0 + i) * 1000));
    // The spool directory was created by the spill and is empty again afterwards.
    expect(existsSync(join(dir, "spool"))).toBe(true);
    expect(readdirSync(join(dir, "spool"))).toEqual([]);
  });

  it("fetches nothing while the collector is down", async () => {
    api.append(line(0));
    hooks.down = true;
    await tailer().cycle(signal);
    expect(api.requests).toHaveLength(0);
  });
});
