/**
 * Entries listed by when the platform indexed them, not by their time: some are stamped seconds or
 * minutes before entries listed after them. However late, shuffled within pages, served twice, through
 * an outage of the collector and a restart of the exporter, every entry is shipped exactly once.
 * The platform is FakeLogApi: its log is in the order entries were written (indexed), newest first
 * when read; a scripted clock drives the reads.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ServerLogEntry } from "../../../src/api/schemas.js";
import { FakeLogApi, makeTailer, MemorySink } from "./fakes.js";

/** Entries are stamped from an hour ago on (web-server times are epoch seconds). */
const T0 = Math.floor(Date.now() / 1000) - 3600;
const signal = () => new AbortController().signal;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "late-entries-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function entry(stampedAt: number, url: string): ServerLogEntry {
  return {
    timestamp: T0 + stampedAt,
    request_type: "GET",
    request_url: url,
    status: 200,
    http_version: "HTTP/1.1",
  };
}

/** A deterministic source of numbers in [0, 1). */
function random(seed: number): () => number {
  let x = seed;
  return () => (x = (x * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

/**
 * `perSecond` entries a second for `seconds` seconds, a share of them stamped up to `maxLate` seconds
 * before the second they are indexed in; each entry's path is unique.
 */
function write(
  api: FakeLogApi,
  from: number,
  seconds: number,
  perSecond: number,
  late: number,
  maxLate: number,
  seed = 7,
) {
  const next = random(seed + from);
  for (let s = from; s < from + seconds; s++) {
    for (let k = 0; k < perSecond; k++) {
      const back = next() < late ? 1 + Math.floor(next() * maxLate) : 0;
      api.append(entry(s - back, `/s${s}-${k}`));
    }
  }
}

/** Every path shipped, and how many times. */
function shippedOnce(sink: MemorySink, written: FakeLogApi): { missing: string[]; twice: string[] } {
  const counts = new Map<string, number>();
  for (const p of sink.paths()) counts.set(p, (counts.get(p) ?? 0) + 1);
  const missing = written.log
    .map((e) => (e as ServerLogEntry).request_url as string)
    .filter((p) => !counts.has(p));
  const twice = [...counts].filter(([, n]) => n > 1).map(([p]) => p);
  return { missing, twice };
}

/**
 * A tailer on a scripted clock starting `from` seconds after T0, pages of 20; `read(to)` moves the
 * clock to `to` seconds and reads once.
 */
function scripted(from: number) {
  let now = (T0 + from) * 1000;
  const clock = { now: () => now, sleep: async () => undefined };
  const rig = makeTailer(dir, { clock });
  rig.api.pageSize = 20;
  const read = async (to: number) => {
    now = (T0 + to) * 1000;
    await rig.tailer.read(signal());
  };
  return { rig, read };
}

describe("entries indexed late", () => {
  it("10 a second, 5 % stamped up to 30 s back, read every 5 s: each once", async () => {
    const { rig, read } = scripted(60);
    for (let s = 60; s < 360; s += 5) {
      write(rig.api, s, 5, 10, 0.05, 30);
      await read(s + 5);
    }
    expect(shippedOnce(rig.sink, rig.api)).toEqual({ missing: [], twice: [] });
    expect(rig.events.lateCount).toBeGreaterThan(0);
  });

  it("an entry stamped ten minutes back after the collector was down for 40 s: each once", async () => {
    const { rig, read } = scripted(700);
    for (let s = 700; s < 760; s += 5) {
      write(rig.api, s, 5, 10, 0, 0);
      await read(s + 5);
    }
    // The collector refuses for 40 s: reads stop shipping, entries go on being indexed.
    rig.health.enter();
    for (let s = 760; s < 800; s += 5) {
      write(rig.api, s, 5, 10, 0, 0);
      await read(s + 5);
    }
    rig.health.leave();
    rig.api.append(entry(800 - 600, "/ten-minutes-late"));
    for (let s = 800; s < 860; s += 5) {
      write(rig.api, s, 5, 10, 0, 0);
      await read(s + 5);
    }
    expect(shippedOnce(rig.sink, rig.api)).toEqual({ missing: [], twice: [] });
  });

  it("an entry ten minutes late that falls last on a page, before anything out of order: shipped", async () => {
    const { rig, read } = scripted(700);
    for (let s = 700; s < 730; s += 5) {
      write(rig.api, s, 5, 2, 0, 0);
      await read(s + 5);
    }
    // Indexed first, then 19 on time after it: newest first, it ends the next read's first page.
    rig.api.append(entry(730 - 600, "/ten-minutes-late"));
    for (let k = 0; k < 19; k++) rig.api.append(entry(730, `/after-${k}`));
    await read(731);
    for (let s = 731; s < 760; s += 5) {
      write(rig.api, s, 5, 2, 0, 0);
      await read(s + 5);
    }
    expect(shippedOnce(rig.sink, rig.api)).toEqual({ missing: [], twice: [] });
  });

  it("a restart soon after start, with entries up to 180 s late: each once", async () => {
    let now = (T0 + 1000) * 1000;
    const clock = { now: () => now, sleep: async () => undefined };
    const api = new FakeLogApi();
    api.pageSize = 20;
    const sink = new MemorySink();
    let rig = makeTailer(dir, { clock, api, sink });
    for (let s = 1000; s < 1400; s += 5) {
      // The exporter restarts (a new tailer over the same checkpoint directory) at 1,100 s.
      if (s === 1100) rig = makeTailer(dir, { clock, api, sink });
      write(api, s, 5, 4, 0.05, 180);
      now = (T0 + s + 5) * 1000;
      await rig.tailer.read(signal());
    }
    expect(shippedOnce(sink, api)).toEqual({ missing: [], twice: [] });
  });

  it.each(["page", "scroll"] as const)("entries in any order within a %s: each once", async (shuffle) => {
    const { rig, read } = scripted(2000);
    rig.api.shuffle = shuffle;
    for (let s = 2000; s < 2100; s += 5) {
      write(rig.api, s, 5, 10, 0, 0);
      await read(s + 5);
    }
    expect(shippedOnce(rig.sink, rig.api)).toEqual({ missing: [], twice: [] });
  });

  it("a page served twice in a row is passed over and the scroll read on, in the same read", async () => {
    const rig = makeTailer(dir);
    rig.api.pageSize = 20;
    write(rig.api, 3000, 100, 10, 0, 0);
    rig.api.servedTwice.add(2);
    expect(await rig.tailer.read(signal())).toMatchObject({ kind: "found", shipped: 1000 });
    expect(shippedOnce(rig.sink, rig.api)).toEqual({ missing: [], twice: [] });
    expect(rig.events.pagingProblems).toEqual(["repeated_page"]);
  });
});

describe("a scroll that loops back on a stream with nothing delivered yet", () => {
  it("counts the entries it never reached as a gap from the start point", async () => {
    const rig = makeTailer(dir);
    rig.api.pageSize = 20;
    write(rig.api, 4000, 200, 10, 0, 0);
    // After 30 pages (600 of the 2,000 entries) the scroll starts again from its first page.
    rig.api.loopAfterPages = 30;
    await rig.tailer.read(signal());
    expect(rig.sink.accepted).toHaveLength(600);
    expect(rig.events.pagingProblems).toContain("repeated_page");
    expect(rig.events.gaps).toHaveLength(1);
  });
});
