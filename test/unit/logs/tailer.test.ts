/**
 * The log tailer against a scripted platform (FakeLogApi) and a recording sink: what is read, in
 * how many requests, what is shipped, deduplicated, dropped, and where the checkpoint stands.
 * Expected values are worked out by hand from the paging rules in docs/logs.md.
 */
import { readdirSync } from "node:fs";
import { mkdtemp, readdir, readlink, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ServerLogEntry } from "../../../src/api/schemas.js";
import { resolveStartFrom } from "../../../src/logs/streams.js";
import { MAX_UNUSABLE_PAGES } from "../../../src/logs/read/decide.js";
import { DEEP_READ_INTERVAL_MS } from "../../../src/logs/tailer.js";
import { FakeLogApi, makeTailer, MemorySink } from "./fakes.js";

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
const signal = () => new AbortController().signal;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "tailer-test-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("delivery and dedupe", () => {
  it("ships two identical lines in one second both, and absorbs a replay of both", async () => {
    const rig = makeTailer(dir);
    rig.api.append(line(1, "/same"), line(1, "/same"), line(2));
    expect(await rig.tailer.read(signal())).toMatchObject({ kind: "found", shipped: 3 });
    expect(rig.sink.paths()).toEqual(["/same", "/same", "/p2"]);
    const uids = rig.sink.accepted.map((r) => r.attributes.uid);
    expect(new Set(uids).size).toBe(3);
    // The next read sees all three again (they are inside the window): nothing ships twice.
    expect(await rig.tailer.read(signal())).toEqual({ kind: "empty" });
    expect(rig.sink.accepted).toHaveLength(3);
    expect(rig.events.dedup).toBe(3);
  });

  it("counts identical lines right anywhere in a long read, in both page orders", async () => {
    for (const order of ["newest-first", "oldest-first"] as const) {
      const rig = makeTailer(join(dir, order));
      rig.api.order = order;
      rig.api.pageSize = 50;
      // Twenty minutes at five lines a second; in every tenth second one line is written three times,
      // with other lines between the copies.
      const written: string[] = [];
      for (let s = 0; s < 1200; s++) {
        const urls =
          s % 10 === 0
            ? [`/same${s}`, `/a${s}`, `/same${s}`, `/b${s}`, `/same${s}`]
            : Array.from({ length: 5 }, (_, k) => `/p${s}-${k}`);
        for (const url of urls) {
          rig.api.append(line(s, url));
          written.push(url);
        }
      }
      await rig.tailer.read(signal());
      expect([...rig.sink.paths()].sort(), order).toEqual([...written].sort());
      // Each copy is its own record: its own uid, so a store that deduplicates on it keeps all three.
      const uids = new Set(rig.sink.accepted.map((r) => r.attributes.uid));
      expect(uids.size, order).toBe(written.length);
      // A replay of the window ships nothing again.
      await rig.tailer.read(signal());
      expect(rig.sink.accepted, order).toHaveLength(written.length);
    }
  });

  it("sends several pages per export, at most maxRecords records each, oldest first", async () => {
    const rig = makeTailer(dir, { maxRecords: 4 });
    rig.api.pageSize = 3;
    for (let i = 1; i <= 10; i++) rig.api.append(line(i));
    await rig.tailer.read(signal());
    expect(rig.sink.sent.map((b) => b.length)).toEqual([4, 4, 2]);
    expect(rig.sink.paths()).toEqual(Array.from({ length: 10 }, (_, i) => `/p${i + 1}`));
  });

  it("skips and counts entries without a usable time, and records that did not fit the schema", async () => {
    const rig = makeTailer(dir);
    rig.api.rejectedPerPage = 1;
    rig.api.append(line(1), { ...line(2), timestamp: "not a time" }, line(3));
    await rig.tailer.read(signal());
    expect(rig.sink.paths()).toEqual(["/p1", "/p3"]);
    expect(rig.events.malformedCount).toBe(1 + 1);
  });
});

describe("paging order", () => {
  it("newest-first: the first read goes back the whole overlap; the next ones only a short window", async () => {
    const rig = makeTailer(dir);
    rig.api.pageSize = 2;
    // Ten entries one minute apart: the overlap (2 min) covers the newest three.
    for (let i = 0; i < 10; i++) rig.api.append(minute(i));
    await rig.tailer.read(signal());
    expect(rig.sink.accepted).toHaveLength(10);
    rig.api.requests.length = 0;
    rig.api.append(minute(10), minute(11));
    expect(await rig.tailer.read(signal())).toMatchObject({ kind: "found", shipped: 2 });
    // Page 1: m11, m10 (new); page 2: m9, m8 — m9 is below the short window: stop. Two requests,
    // not the overlap's worth.
    expect(rig.api.requests).toEqual([null, "scroll-2"]);
    expect(rig.sink.paths().slice(-2)).toEqual(["/m10", "/m11"]);
  });

  it("asks for a backlog's pages to be decoded whole once a page was mostly new, a quiet stream's not", async () => {
    const rig = makeTailer(dir);
    rig.api.pageSize = 3;
    for (let i = 0; i < 12; i++) rig.api.append(line(i));
    await rig.tailer.read(signal());
    expect(rig.sink.accepted).toHaveLength(12);
    // The first page and the one fetched ahead of it are asked for before any page was taken.
    expect(rig.api.mostlyNew.slice(0, 2)).toEqual([false, false]);
    expect(rig.api.mostlyNew.slice(2)).not.toContain(false);
    expect(rig.api.mostlyNew.length).toBeGreaterThan(3);
    rig.api.mostlyNew.length = 0;
    rig.api.append(line(12));
    await rig.tailer.read(signal());
    expect(rig.api.mostlyNew).not.toContain(true);
  });

  it("with no lateness seen, a read fits on one page when the new entries and the high-water second do", async () => {
    let now = Date.now();
    const clock = { now: () => now, sleep: async () => undefined };
    const rig = makeTailer(dir, { clock });
    rig.api.pageSize = 5;
    // One entry a second; the newest (second 19) is the high-water mark.
    for (let i = 0; i < 20; i++) rig.api.append(line(i));
    await rig.tailer.read(signal());
    rig.api.requests.length = 0;
    // Another entry of second 19 arrives after it was read, with two newer ones.
    rig.api.append(line(19, "/same-second"), line(20), line(21));
    now += 1_000;
    expect(await rig.tailer.read(signal())).toMatchObject({ kind: "found", shipped: 3 });
    // Page: 21, 20, 19 (new), 19, 18: 18 is below the high-water second, so nothing further can be new.
    expect(rig.api.requests).toEqual([null]);
    expect(rig.sink.paths().slice(-3)).toEqual(["/same-second", "/p20", "/p21"]);
  });

  it("a deep read every interval goes back the whole overlap and ships what arrived late", async () => {
    let now = Date.now();
    const clock = { now: () => now, sleep: async () => undefined };
    const rig = makeTailer(dir, { clock });
    rig.api.pageSize = 10;
    for (let i = 0; i < 100; i++) rig.api.append(line(i * 2));
    await rig.tailer.read(signal());
    // An entry appears 30 s behind the newest one: later than the short window, and beyond the one
    // page a read of the short window fetches.
    rig.api.log.splice(85, 0, line(169, "/late"));
    now += 1_000;
    await rig.tailer.read(signal());
    expect(rig.sink.paths()).not.toContain("/late");
    // The second deep read comes within one and a half intervals (each stream has its phase).
    now += DEEP_READ_INTERVAL_MS * 1.5;
    await rig.tailer.read(signal());
    expect(rig.sink.paths().filter((p) => p === "/late")).toHaveLength(1);
    expect(rig.events.lateCount).toBe(1);
    // It widened the short window: the next late entry at that depth is caught without a deep read.
    expect(rig.tailer.lateWindowMs(now)).toBeGreaterThanOrEqual(30_000);
    rig.api.log.splice(90, 0, line(179, "/late2"));
    now += 1_000;
    await rig.tailer.read(signal());
    expect(rig.sink.paths().filter((p) => p === "/late2")).toHaveLength(1);
  });

  it("streams started together spread their second deep reads over the half interval after the first", async () => {
    let now = Date.now();
    const clock = { now: () => now, sleep: async () => undefined };
    const rigs = Array.from({ length: 12 }, (_, i) => makeTailer(join(dir, `s${i}`), { clock }));
    for (const rig of rigs) {
      rig.api.pageSize = 10;
      for (let i = 0; i < 100; i++) rig.api.append(line(i * 2));
      await rig.tailer.read(signal());
    }
    // Read every stream every 30 s: a read of the short window is one page, a deep read goes back
    // the whole overlap (all ten pages).
    const deepAt: Array<number | undefined> = rigs.map(() => undefined);
    const step = 30_000;
    for (let t = step; t <= DEEP_READ_INTERVAL_MS * 1.5; t += step) {
      now += step;
      for (const [i, rig] of rigs.entries()) {
        rig.api.requests.length = 0;
        await rig.tailer.read(signal());
        if (rig.api.requests.length > 1) deepAt[i] ??= t;
      }
    }
    const due = deepAt.map((t) => t ?? Infinity);
    expect(Math.min(...due)).toBeGreaterThanOrEqual(DEEP_READ_INTERVAL_MS);
    expect(Math.max(...due)).toBeLessThanOrEqual(DEEP_READ_INTERVAL_MS * 1.5);
    // Twelve streams over ten 30-second steps of the half interval: no step has more than two.
    const perStep = new Map<number, number>();
    for (const t of due) perStep.set(t, (perStep.get(t) ?? 0) + 1);
    expect(Math.max(...perStep.values())).toBeLessThanOrEqual(2);
  });

  it("a late entry on a page the read fetched anyway is shipped, not skipped", async () => {
    let now = Date.now();
    const clock = { now: () => now, sleep: async () => undefined };
    const rig = makeTailer(dir, { clock });
    rig.api.pageSize = 50;
    for (let i = 0; i < 100; i++) rig.api.append(line(i * 2));
    await rig.tailer.read(signal());
    // 30 s behind the newest entry: below the short window, but on the first page.
    rig.api.log.splice(85, 0, line(169, "/late"));
    now += 1_000;
    await rig.tailer.read(signal());
    expect(rig.sink.paths().filter((p) => p === "/late")).toHaveLength(1);
    expect(rig.api.requests.slice(-1)).toEqual([null]);
    expect(rig.tailer.lateWindowMs(now)).toBeGreaterThanOrEqual(30_000);
  });

  it("oldest-first snapshot: a fresh scroll reads from the start and only new entries ship", async () => {
    const rig = makeTailer(dir);
    rig.api.order = "oldest-first";
    rig.api.pageSize = 2;
    for (let i = 0; i < 5; i++) rig.api.append(minute(i));
    await rig.tailer.read(signal());
    rig.api.append(minute(5));
    await rig.tailer.read(signal());
    expect(rig.sink.paths()).toEqual(["/m0", "/m1", "/m2", "/m3", "/m4", "/m5"]);
  });

  it("oldest-first growing cursor: continued next read, not read again", async () => {
    const rig = makeTailer(dir);
    rig.api.order = "oldest-first";
    rig.api.mode = "cursor";
    rig.api.pageSize = 2;
    for (let i = 0; i < 4; i++) rig.api.append(minute(i));
    await rig.tailer.read(signal());
    rig.api.requests.length = 0;
    rig.api.append(minute(4));
    await rig.tailer.read(signal());
    expect(rig.api.requests.every((r) => r === "scroll-1")).toBe(true);
    expect(rig.sink.paths()).toEqual(["/m0", "/m1", "/m2", "/m3", "/m4"]);
  });

  it("newest-first past the page cap: reads on to the checkpoint before shipping, so nothing in the middle is skipped", async () => {
    const rig = makeTailer(dir, { maxPagesPerRead: 2 });
    rig.api.pageSize = 2;
    for (let i = 0; i < 9; i++) rig.api.append(minute(i));
    expect(await rig.tailer.read(signal())).toMatchObject({ kind: "found", shipped: 9 });
    expect(rig.sink.paths()).toEqual(Array.from({ length: 9 }, (_, i) => `/m${i}`));
  });

  it("oldest-first at the page cap: says more is waiting and resumes the same scroll", async () => {
    const rig = makeTailer(dir, { maxPagesPerRead: 2 });
    rig.api.order = "oldest-first";
    rig.api.pageSize = 2;
    for (let i = 0; i < 9; i++) rig.api.append(minute(i));
    expect(await rig.tailer.read(signal())).toEqual({ kind: "more", shipped: 4 });
    expect(await rig.tailer.read(signal())).toEqual({ kind: "more", shipped: 4 });
    expect(await rig.tailer.read(signal())).toMatchObject({ kind: "found", shipped: 1 });
    expect(rig.sink.paths()).toEqual(Array.from({ length: 9 }, (_, i) => `/m${i}`));
    // One fresh scroll, continued twice.
    expect(rig.api.requests.filter((r) => r === null)).toHaveLength(1);
  });

  it("a page fetched ahead when the collector goes down is kept with the held scroll, not lost", async () => {
    const sink = new MemorySink();
    const rig = makeTailer(dir, { sink, maxRecords: 2 });
    rig.api.order = "oldest-first";
    rig.api.mode = "cursor";
    rig.api.pageSize = 2;
    for (let i = 0; i < 8; i++) rig.api.append(minute(i));
    // The first export is acknowledged, and then the collector is down: the page after the first
    // was already fetched ahead (the scroll moved past it).
    sink.answer = (_r, attempt) => {
      if (attempt === 1) rig.health.enter();
      return { kind: "accepted", rejected: 0 };
    };
    expect(await rig.tailer.read(signal())).toEqual({ kind: "interrupted" });
    expect(rig.sink.paths()).toEqual(["/m0", "/m1"]);
    rig.health.leave();
    await rig.tailer.read(signal());
    expect(rig.sink.paths()).toEqual(Array.from({ length: 8 }, (_, i) => `/m${i}`));
    expect(rig.api.requests.filter((r) => r === null)).toHaveLength(1);
  });

  it("a held scroll that expired: starts over from the checkpoint, nothing lost or doubled", async () => {
    const rig = makeTailer(dir, { maxPagesPerRead: 1 });
    rig.api.order = "oldest-first";
    rig.api.pageSize = 2;
    for (let i = 0; i < 6; i++) rig.api.append(minute(i));
    await rig.tailer.read(signal());
    rig.api.expireScrolls();
    for (let i = 0; i < 4; i++) await rig.tailer.read(signal());
    expect(rig.sink.paths()).toEqual(Array.from({ length: 6 }, (_, i) => `/m${i}`));
  });
});

describe("entries from the future", () => {
  it("an entry stamped 2100 is shipped and counted, and does not hide the entries after it", async () => {
    const rig = makeTailer(dir);
    rig.api.append(line(1));
    await rig.tailer.read(signal());
    rig.api.append({ ...line(2, "/from-2100"), timestamp: Date.UTC(2100, 0, 1) / 1000 });
    await rig.tailer.read(signal());
    expect(rig.events.futureCount).toBe(1);
    expect(rig.tailer.checkpoint?.highWaterMs).toBeLessThanOrEqual(Date.now());
    for (let i = 3; i <= 5; i++) {
      rig.api.append(line(i * 10));
      await rig.tailer.read(signal());
    }
    expect(rig.sink.paths()).toEqual(["/p1", "/from-2100", "/p30", "/p40", "/p50"]);
    // Read again and again, the 2100 entry is never shipped twice.
    await rig.tailer.read(signal());
    expect(rig.sink.paths().filter((p) => p === "/from-2100")).toHaveLength(1);
  });

  it("an entry ten minutes ahead does not hide later ones either", async () => {
    const rig = makeTailer(dir);
    const now = Math.floor(Date.now() / 1000);
    rig.api.append({ ...line(0, "/ahead"), timestamp: now + 600 });
    await rig.tailer.read(signal());
    rig.api.append({ ...line(0, "/now"), timestamp: now });
    await rig.tailer.read(signal());
    expect(rig.sink.paths()).toEqual(["/ahead", "/now"]);
  });
});

describe("malformed data", () => {
  it("a stream of entries without a usable time costs a few pages per read, not the retention", async () => {
    const rig = makeTailer(dir);
    rig.api.pageSize = 10;
    for (let i = 0; i < 500; i++) rig.api.append({ ...line(i), timestamp: "garbage" });
    expect(await rig.tailer.read(signal())).toEqual({ kind: "empty" });
    expect(rig.api.requests).toHaveLength(MAX_UNUSABLE_PAGES);
    expect(rig.events.malformedCount).toBe(MAX_UNUSABLE_PAGES * 10);
    // New, valid entries at the top still arrive.
    rig.api.append(line(900));
    await rig.tailer.read(signal());
    expect(rig.sink.paths()).toEqual(["/p900"]);
  });
});

describe("what the collector answers", () => {
  it("a refused batch is split until the refused record is isolated; only it is dropped, the checkpoint moves on", async () => {
    const sink = new MemorySink();
    sink.answer = (records) =>
      records.some((r) => r.attributes["url.path"] === "/poison")
        ? { kind: "refused", reason: "HTTP 400: invalid attribute" }
        : { kind: "accepted", rejected: 0 };
    const rig = makeTailer(dir, { sink });
    for (let i = 1; i <= 8; i++) rig.api.append(line(i, i === 5 ? "/poison" : `/p${i}`));
    await rig.tailer.read(signal());
    expect(rig.sink.paths()).toEqual(["/p1", "/p2", "/p3", "/p4", "/p6", "/p7", "/p8"]);
    expect(rig.rejected).toEqual([{ count: 1, reason: "HTTP 400: invalid attribute" }]);
    expect(rig.delivered).toBe(7);
    // It is not read again and retried: the checkpoint is past it.
    rig.api.append(line(9));
    await rig.tailer.read(signal());
    expect(rig.sink.paths().at(-1)).toBe("/p9");
    expect(rig.rejected).toHaveLength(1);
  });

  it("a partial success counts what the collector rejected", async () => {
    const sink = new MemorySink();
    sink.answer = () => ({ kind: "accepted", rejected: 2, message: "2 records too large" });
    const rig = makeTailer(dir, { sink });
    for (let i = 1; i <= 5; i++) rig.api.append(line(i));
    await rig.tailer.read(signal());
    expect(rig.rejected).toEqual([{ count: 2, reason: "2 records too large" }]);
    // Shipped counts what the collector took, not what was sent.
    expect(rig.delivered).toBe(3);
  });

  it("a retryable failure is retried until accepted; the collector counts as down meanwhile", async () => {
    const sink = new MemorySink();
    let downSeen = false;
    const rig = makeTailer(dir, { sink });
    sink.answer = (_r, attempt) => {
      if (attempt > 1) downSeen ||= rig.health.down;
      return attempt <= 3 ? { kind: "retry", reason: "HTTP 503" } : { kind: "accepted", rejected: 0 };
    };
    rig.api.append(line(1), line(2));
    await rig.tailer.read(signal());
    expect(sink.attempts).toBe(4);
    expect(downSeen).toBe(true);
    expect(rig.health.down).toBe(false);
    expect(rig.sink.paths()).toEqual(["/p1", "/p2"]);
  });

  it("fetches nothing while the collector is down", async () => {
    const rig = makeTailer(dir);
    rig.health.enter();
    rig.api.append(line(1));
    expect(await rig.tailer.read(signal())).toEqual({ kind: "interrupted" });
    expect(rig.api.requests).toEqual([]);
  });
});

describe("checkpoints across restarts", () => {
  it("holds no file open between reads (thousands of idle streams would each hold one)", async () => {
    const openJournals = async () => {
      const fds = await readdir("/proc/self/fd");
      const targets = await Promise.all(fds.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => "")));
      return targets.filter((t) => t.startsWith(dir)).length;
    };
    const rig = makeTailer(dir);
    rig.api.append(line(1), line(2));
    await rig.tailer.read(signal());
    expect(rig.sink.paths()).toEqual(["/p1", "/p2"]);
    expect(await openJournals()).toBe(0);
    rig.api.append(line(3));
    await rig.tailer.read(signal());
    expect(rig.sink.paths()).toEqual(["/p1", "/p2", "/p3"]);
    expect(await openJournals()).toBe(0);
  });

  it("a new tailer on the same directory continues where the last one committed", async () => {
    const first = makeTailer(dir);
    first.api.append(line(1), line(2));
    await first.tailer.read(signal());
    const api = new FakeLogApi();
    api.append(line(1), line(2), line(3));
    const second = makeTailer(dir, { api });
    await second.tailer.read(signal());
    expect(second.sink.paths()).toEqual(["/p3"]);
    // Only the first started without a checkpoint (where history before logs.startFrom is skipped).
    expect(first.events.freshStarts).toHaveLength(1);
    expect(second.events.freshStarts).toEqual([]);
  });

  it("startFrom: no history before it, everything after it", async () => {
    const rig = makeTailer(dir, { startFromMs: () => (T0 + 5) * 1000 });
    for (let i = 1; i <= 8; i++) rig.api.append(line(i));
    await rig.tailer.read(signal());
    expect(rig.sink.paths()).toEqual(["/p5", "/p6", "/p7", "/p8"]);
  });

  it("resolves relative and absolute startFrom", () => {
    const now = Date.parse("2026-11-23T10:00:00.750Z");
    expect(resolveStartFrom("now", now)).toBe(Date.parse("2026-11-23T10:00:00.000Z"));
    expect(resolveStartFrom("-15m", now)).toBe(Date.parse("2026-11-23T09:45:00.000Z"));
    expect(resolveStartFrom("2026-01-31T00:00:00Z", now)).toBe(Date.parse("2026-01-31T00:00:00Z"));
  });
});

describe("retention gap and backlog", () => {
  it("detects a retention gap once and counts it", async () => {
    const rig = makeTailer(dir);
    rig.api.append({ ...line(0), timestamp: Math.floor(Date.now() / 1000) - 9 * 86_400 });
    await rig.tailer.read(signal());
    // Retention removes it; newer entries exist beyond the window.
    rig.api.log.splice(0, 1);
    rig.api.append(line(100));
    await rig.tailer.read(signal());
    await rig.tailer.read(signal());
    expect(rig.events.gaps).toHaveLength(1);
  });

  it("spills a newest-first backlog bigger than the memory budget and ships it all once, oldest first, leaving no spool file", async () => {
    const { BufferBudget } = await import("../../../src/logs/spool.js");
    const rig = makeTailer(dir, { bufferBudget: new BufferBudget(1000) });
    rig.api.pageSize = 7;
    for (let i = 0; i < 100; i++) rig.api.append(line(i));
    await rig.tailer.read(signal());
    expect(rig.sink.paths()).toEqual(Array.from({ length: 100 }, (_, i) => `/p${i}`));
    expect(readdirSync(join(dir, "spool"))).toEqual([]);
  });
});

describe("hostile paging", () => {
  const timeless = (i: number): ServerLogEntry => ({ ...line(0, `/timeless${i}`), timestamp: "not a time" });

  it("a full page without a scroll_id fails the read (counted) and it is retried; nothing is skipped", async () => {
    const rig = makeTailer(dir);
    rig.api.pageSize = 200;
    for (let i = 0; i < 100; i++) rig.api.append(line(i));
    await rig.tailer.read(signal());
    rig.api.dropScrollId = true;
    for (let i = 100; i < 400; i++) rig.api.append(line(i));
    await expect(rig.tailer.read(signal())).rejects.toThrow(/without a scroll_id/);
    expect(rig.events.pagingProblems).toEqual(["no_continuation"]);
    expect(rig.sink.accepted).toHaveLength(100);
    // Once the platform pages again, every entry arrives, once.
    rig.api.dropScrollId = false;
    await rig.tailer.read(signal());
    expect(rig.sink.paths()).toEqual(Array.from({ length: 400 }, (_, i) => `/p${i}`));
    expect(rig.events.gaps).toEqual([]);
  });

  it("a scroll that breaks off early: the jump past the checkpoint is a counted gap", async () => {
    const rig = makeTailer(dir);
    rig.api.pageSize = 3;
    for (let i = 0; i < 3; i++) rig.api.append(minute(i));
    await rig.tailer.read(signal());
    // A short page without a scroll_id: the scroll ends there, three minutes short of the checkpoint.
    rig.api.dropScrollId = true;
    for (let i = 3; i < 9; i++) rig.api.append(minute(i));
    await rig.tailer.read(signal());
    expect(rig.sink.paths()).toEqual(["/m0", "/m1", "/m2", "/m6", "/m7", "/m8"]);
    expect(rig.events.gaps).toEqual([{ fromMs: (T0 + 120) * 1000, toMs: (T0 + 360) * 1000 }]);
  });

  it("entries without a time do not move the stopping point: older entries behind 1,300 of them arrive", async () => {
    const rig = makeTailer(dir);
    rig.api.pageSize = 200;
    for (let i = 0; i < 10; i++) rig.api.append(line(i));
    await rig.tailer.read(signal());
    // Newest first: 100 newer entries, then 1,300 without a time, then 50 older ones, then the checkpoint.
    for (let i = 10; i < 60; i++) rig.api.append(line(i));
    for (let i = 0; i < 1300; i++) rig.api.append(timeless(i));
    for (let i = 60; i < 160; i++) rig.api.append(line(i));
    await rig.tailer.read(signal());
    expect(rig.sink.paths()).toEqual(Array.from({ length: 160 }, (_, i) => `/p${i}`));
    expect(rig.events.malformedCount).toBe(1300);
    expect(rig.events.gaps).toEqual([]);
  });

  it("a newest-first scroll that loops back to its first page: stops at the repeat, ships once, counts it", async () => {
    const rig = makeTailer(dir);
    rig.api.pageSize = 10;
    for (let i = 0; i < 100; i++) rig.api.append(line(i));
    await rig.tailer.read(signal());
    rig.api.loopAfterPages = 3;
    rig.api.requests.length = 0;
    for (let i = 100; i < 150; i++) rig.api.append(line(i));
    expect(await rig.tailer.read(signal())).toMatchObject({ kind: "found", shipped: 30 });
    // Three pages, then page one again: the read stops there.
    expect(rig.api.requests).toHaveLength(4);
    expect(rig.events.pagingProblems).toEqual(["repeated_page"]);
    expect(rig.sink.paths().slice(100)).toEqual(Array.from({ length: 30 }, (_, i) => `/p${120 + i}`));
    // What the loop hid is a counted gap, not a silent one.
    expect(rig.events.gaps).toEqual([{ fromMs: (T0 + 99) * 1000, toMs: (T0 + 120) * 1000 }]);
  }, 10_000);

  it("a burst of identical lines in one second filling several pages is not taken for a loop", async () => {
    const rig = makeTailer(dir);
    rig.api.pageSize = 10;
    rig.api.append(line(0));
    await rig.tailer.read(signal());
    for (let i = 0; i < 35; i++) rig.api.append(line(5, "/same"));
    await rig.tailer.read(signal());
    expect(rig.sink.paths().filter((p) => p === "/same")).toHaveLength(35);
    expect(rig.events.pagingProblems).toEqual([]);
  });

  it("pages of records that all fail validation cost a bounded number of pages per read", async () => {
    const rig = makeTailer(dir);
    rig.api.pageSize = 10;
    rig.api.allRejected = true;
    for (let i = 0; i < 500; i++) rig.api.append(line(i));
    expect(await rig.tailer.read(signal())).toEqual({ kind: "empty" });
    expect(rig.api.requests).toHaveLength(MAX_UNUSABLE_PAGES);
    expect(rig.events.malformedCount).toBe(MAX_UNUSABLE_PAGES * 10);
    expect(rig.events.pagingProblems).toEqual(["unusable_pages"]);
  });

  it("a read is bounded by pages: it ships what it holds and counts the gap below", async () => {
    const rig = makeTailer(dir, { readLimits: { maxPages: 4 } });
    rig.api.pageSize = 2;
    rig.api.append(line(0), line(1));
    await rig.tailer.read(signal());
    for (let i = 2; i < 22; i++) rig.api.append(line(i));
    rig.api.requests.length = 0;
    expect(await rig.tailer.read(signal())).toMatchObject({ kind: "found", shipped: 8 });
    expect(rig.api.requests).toHaveLength(4);
    expect(rig.events.pagingProblems).toEqual(["page_limit"]);
    expect(rig.events.gaps).toEqual([{ fromMs: (T0 + 1) * 1000, toMs: (T0 + 14) * 1000 }]);
  });

  it("a read is bounded by the bytes it holds back", async () => {
    const rig = makeTailer(dir, { readLimits: { maxHeldBytes: 1 } });
    rig.api.pageSize = 2;
    rig.api.append(line(0));
    await rig.tailer.read(signal());
    rig.events.pagingProblems.length = 0;
    for (let i = 1; i < 10; i++) rig.api.append(line(i));
    // The first page's two entries are held: the bound is reached, no further page is fetched.
    expect(await rig.tailer.read(signal())).toMatchObject({ kind: "found", shipped: 2 });
    expect(rig.events.pagingProblems).toEqual(["byte_limit"]);
  });
});
