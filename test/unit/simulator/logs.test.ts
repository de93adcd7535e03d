/**
 * The log endpoints' paging. Where the documentation is silent (order, end of a scroll, expiry) the
 * simulator picks a behaviour and has a switch for the other (docs/simulator.md):
 *   default  newest-first snapshot: entries up to the moment the scroll opened, newest first; an idle
 *            scroll expires (error status, envelope body);
 *   switch   oldest-first growing cursor: oldest first; at the end the same scroll keeps returning what
 *            was written since.
 * Documented: 7 days of retention, 200 entries a page; server timestamps are epoch seconds. Optional
 * indexing lateness (fault knobs) makes entries visible only some seconds after their time.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startTestSim, T0, T0_SECONDS, type TestSim } from "./helpers.js";

interface LogPage {
  total_results: number;
  logs: Array<Record<string, unknown>>;
  scroll_id: string;
}

let t: TestSim | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const secondsOf = (e: Record<string, unknown>): number =>
  typeof e.timestamp === "number" ? e.timestamp : Math.floor(Date.parse(String(e.timestamp)) / 1000);

async function page(
  sim: TestSim,
  id: number,
  stream: string,
  scrollId?: string,
): Promise<LogPage & { status: number }> {
  const r = await sim.get(
    `/sites/${id}/logs/${stream}${scrollId ? `?scroll_id=${encodeURIComponent(scrollId)}` : ""}`,
  );
  return { status: r.status, ...(r.body as LogPage) };
}

/** Pages of one scroll until an empty page; every page checked against the 200 limit. */
async function drain(
  sim: TestSim,
  id: number,
  stream: string,
  limit = 1000,
): Promise<{ entries: Array<Record<string, unknown>>; scrollId: string; pages: number }> {
  const first = await page(sim, id, stream);
  expect(first.status).toBe(200);
  const entries = [...first.logs];
  let pages = 1;
  for (;;) {
    const next = await page(sim, id, stream, first.scroll_id);
    expect(next.status).toBe(200);
    expect(next.logs.length).toBeLessThanOrEqual(200);
    expect(next.scroll_id).toBe(first.scroll_id);
    if (next.logs.length === 0) break;
    entries.push(...next.logs);
    pages += 1;
    if (pages > limit) throw new Error("scroll never ended");
  }
  return { entries, scrollId: first.scroll_id, pages };
}

describe("default: newest-first snapshot", () => {
  it("pages of at most 200, newest first; entries written after the scroll opened stay out of it", async () => {
    t = await startTestSim({ sites: 3, seed: 2, logRatePerSite: 0.01 });
    const id = t.sim.control.sites()[0]?.site.id as number;
    const first = await page(t, id, "php");
    expect(first.logs).toHaveLength(200); // 0.01/s over 7 days is ~6048 entries: the first page is full
    // An entry written after the scroll opened is not part of this snapshot...
    t.sim.control.appendLog(id, "php", { message: "written after the scroll opened" });
    const seen: Array<Record<string, unknown>> = [...first.logs];
    for (let i = 0; i < 5; i++) seen.push(...(await page(t, id, "php", first.scroll_id)).logs);
    const times = seen.map(secondsOf);
    for (let i = 1; i < times.length; i++) expect(times[i]).toBeLessThanOrEqual(times[i - 1] as number);
    expect(seen.some((e) => e.message === "written after the scroll opened")).toBe(false);
    // ...but it is the newest entry of a new scroll.
    const fresh = await page(t, id, "php");
    expect(fresh.logs[0]?.message).toBe("written after the scroll opened");
  });

  it("starts with 7 days of history: the oldest entry of a full scroll is about 7 days old", async () => {
    // 0.002 entries/s: ~1210 php entries over 604800 s, ~7 pages.
    t = await startTestSim({ sites: 2, seed: 3, logRatePerSite: 0.002 });
    const id = t.sim.control.sites()[1]?.site.id as number;
    const { entries, pages } = await drain(t, id, "php");
    expect(pages).toBeGreaterThanOrEqual(5);
    const oldest = Math.min(...entries.map(secondsOf));
    const newest = Math.max(...entries.map(secondsOf));
    // 7 days = 604800 s before T0 (1795348800) is 1794744000; with one entry per ~500 s on average the
    // oldest lies within an hour after that, and nothing is older than the retention.
    expect(oldest).toBeGreaterThanOrEqual(1_794_744_000);
    expect(oldest).toBeLessThan(1_794_744_000 + 3600);
    expect(newest).toBeLessThanOrEqual(T0_SECONDS);
    expect(newest).toBeGreaterThan(T0_SECONDS - 3600);
  });

  it("an idle scroll expires: its id then gets an error status with an envelope body", async () => {
    t = await startTestSim({ sites: 2, seed: 3, logRatePerSite: 0.5, scrollIdleSeconds: 60 });
    const id = t.sim.control.sites()[0]?.site.id as number;
    const first = await page(t, id, "server");
    t.clock.ms = T0 + 59_000; // idle 59 s: still open
    expect((await page(t, id, "server", first.scroll_id)).status).toBe(200);
    t.clock.ms = T0 + 59_000 + 61_000; // idle 61 s since the last page
    const expired = await t.get(`/sites/${id}/logs/server?scroll_id=${encodeURIComponent(first.scroll_id)}`);
    expect(expired.status).toBeGreaterThanOrEqual(400);
    expect(expired.body).toMatchObject({
      message: expect.any(String),
      data: null,
      errors: expect.any(Array),
    });
    // A made-up scroll id is refused the same way.
    expect((await t.get(`/sites/${id}/logs/server?scroll_id=nonsense`)).status).toBe(expired.status);
  });

  it("identical lines in the same second exist (health checks)", async () => {
    t = await startTestSim({ sites: 2, seed: 3, logRatePerSite: 0.2 });
    const id = t.sim.control.sites()[0]?.site.id as number;
    const first = await page(t, id, "server");
    const lines = first.logs.map((e) => JSON.stringify(e));
    const duplicates = lines.filter((l, i) => lines.indexOf(l) !== i);
    // Two byte-identical health checks a minute; 200 entries at ~0.23/s span ~14 minutes.
    expect(duplicates.length).toBeGreaterThanOrEqual(5);
    for (const d of duplicates) expect(JSON.parse(d)).toMatchObject({ request_url: "/healthz", status: 200 });
  });

  it("total_results covers the 7 days: rate × seconds, plus health checks, plus appended entries", async () => {
    t = await startTestSim({ sites: 1, seed: 3, logRatePerSite: 1 });
    const id = t.sim.control.sites()[0]?.site.id as number;
    t.sim.control.appendLog(id, "php", { message: "one more" });
    // Seconds T0-604800 .. T0 inclusive: 604801, at 1 entry/s = 604801; plus the appended one.
    expect(((await t.get(`/sites/${id}/logs/php`)).body as LogPage).total_results).toBe(604_802);
    // Server: site seed 3 * 7919 + 0 = 23757, health checks at seconds = 57 (mod 60), twice each. Both
    // ends of the range are whole minutes (1795348800 = 0 mod 60), so 10080 such seconds: 20160 lines.
    expect(((await t.get(`/sites/${id}/logs/server`)).body as LogPage).total_results).toBe(604_801 + 20_160);
  });

  it("control.appendLog entries appear, with their fields, at the time given", async () => {
    t = await startTestSim({ sites: 2, seed: 3, logRatePerSite: 0.01 });
    const id = t.sim.control.sites()[1]?.site.id as number;
    t.sim.control.appendLog(id, "server", { status: 503, request_url: "/checkout/" }, T0 - 5_000);
    const r = await page(t, id, "server");
    const mine = r.logs.filter((e) => e.request_url === "/checkout/");
    expect(mine).toHaveLength(1);
    // T0 - 5 s = 1795348795 epoch seconds.
    expect(mine[0]).toMatchObject({ status: 503, timestamp: 1_795_348_795 });
  });

  it("filters: server status and request_type, php status (severity word)", async () => {
    t = await startTestSim({ sites: 2, seed: 3, logRatePerSite: 1 });
    const id = t.sim.control.sites()[0]?.site.id as number;
    const s404 = (await t.get(`/sites/${id}/logs/server?status=404`)).body as LogPage;
    expect(s404.logs.length).toBeGreaterThan(0);
    for (const e of s404.logs) expect(e.status).toBe(404);
    const posts = (await t.get(`/sites/${id}/logs/server?request_type=POST`)).body as LogPage;
    expect(posts.logs.length).toBeGreaterThan(0);
    for (const e of posts.logs) expect(e.request_type).toBe("POST");
    const warnings = (await t.get(`/sites/${id}/logs/php?status=Warning`)).body as LogPage;
    expect(warnings.logs.length).toBeGreaterThan(0);
    for (const e of warnings.logs) expect(e.severity).toBe("Warning");
  });
});

describe("switch: oldest-first growing cursor", () => {
  it("oldest first; after the end, an entry written later appears on the next page of the same scroll", async () => {
    t = await startTestSim({ sites: 2, seed: 3, logRatePerSite: 0.001 });
    t.sim.control.setLogPaging("oldest-first", "cursor");
    const id = t.sim.control.sites()[0]?.site.id as number;
    const { entries, scrollId } = await drain(t, id, "php");
    const times = entries.map(secondsOf);
    for (let i = 1; i < times.length; i++) expect(times[i]).toBeGreaterThanOrEqual(times[i - 1] as number);
    // At the end: an empty page. Now write one entry at T0 + 10 s.
    t.clock.ms = T0 + 10_000;
    t.sim.control.appendLog(id, "php", { message: "arrived after the end" });
    const next = await page(t, id, "php", scrollId);
    expect(next.status).toBe(200);
    expect(next.logs.map((e) => e.message)).toContain("arrived after the end");
    // And it is not repeated on the page after.
    const after = await page(t, id, "php", scrollId);
    expect(after.logs.map((e) => e.message)).not.toContain("arrived after the end");
  });

  it("oldest-first snapshot (the other combination) ends for good", async () => {
    t = await startTestSim({
      sites: 2,
      seed: 3,
      logRatePerSite: 0.001,
      logOrder: "oldest-first",
      scrollMode: "snapshot",
    });
    const id = t.sim.control.sites()[0]?.site.id as number;
    const { scrollId } = await drain(t, id, "php");
    t.clock.ms = T0 + 10_000;
    t.sim.control.appendLog(id, "php", { message: "too late for this scroll" });
    const next = await page(t, id, "php", scrollId);
    expect(next.logs).toEqual([]);
  });
});

describe("newest-indexed-first paging: by when entries became visible", () => {
  it("lists an entry indexed late among those indexed with it, and every entry once", async () => {
    t = await startTestSim({
      sites: 1,
      seed: 4,
      logRatePerSite: 1,
      lateLogFraction: 0.3,
      lateLogMaxSeconds: 20,
    });
    const id = t.sim.control.sites()[0]?.site.id as number;
    t.sim.control.setLogPaging("newest-indexed-first", "snapshot");
    // Stamped 10 minutes ago, indexed now: first, before entries stamped seconds ago.
    t.sim.control.appendLog(id, "php", { message: "indexed late" }, T0 - 600_000, T0);
    const first = (await page(t, id, "php")).logs;
    expect(first[0]?.message).toBe("indexed late");
    expect(secondsOf(first[1]!)).toBeGreaterThan(T0_SECONDS - 20);
    // The whole last minute as a newest-first scroll sees it, in another order.
    const twoPages = async () => {
      const one = await page(t as TestSim, id, "php");
      const two = await page(t as TestSim, id, "php", one.scroll_id);
      return [...one.logs, ...two.logs].filter((e) => secondsOf(e) > T0_SECONDS - 60);
    };
    const indexed = await twoPages();
    t.sim.control.setLogPaging("newest-first", "snapshot");
    const byTime = await twoPages();
    const key = (e: Record<string, unknown>) => `${secondsOf(e)} ${String(e.message)}`;
    expect(indexed.map(key).sort()).toEqual(byTime.map(key).sort());
    expect(indexed.map(key)).not.toEqual(byTime.map(key));
  });
});

describe("late log entries (the indexing lateness knobs)", () => {
  const inRange = (entries: Array<Record<string, unknown>>, from: number, to: number) =>
    entries.filter((e) => secondsOf(e) >= from && secondsOf(e) <= to);

  it("logIndexDelaySeconds: entries of second s are visible from s + delay", async () => {
    // 1 entry a second on the php stream: every second has exactly one.
    t = await startTestSim({ sites: 1, seed: 3, logRatePerSite: 1, logIndexDelaySeconds: 30 });
    const id = t.sim.control.sites()[0]?.site.id as number;
    const first = await page(t, id, "php");
    expect(secondsOf(first.logs[0]!)).toBe(T0_SECONDS - 30);
    t.clock.ms = T0 + 30_000;
    const later = await page(t, id, "php");
    expect(secondsOf(later.logs[0]!)).toBe(T0_SECONDS);
    // An appended entry waits for the delay too, unless it names its own visibility time.
    t.sim.control.appendLog(id, "php", { message: "delayed" });
    t.sim.control.appendLog(id, "php", { message: "at once" }, undefined, T0 + 30_000);
    const now = (await page(t, id, "php")).logs.map((e) => e.message);
    expect(now).toContain("at once");
    expect(now).not.toContain("delayed");
    t.clock.ms = T0 + 60_000;
    expect((await page(t, id, "php")).logs.map((e) => e.message)).toContain("delayed");
  });

  it("lateLogFraction: some entries of the last lateLogMaxSeconds are missing, all arrive by then", async () => {
    t = await startTestSim({
      sites: 1,
      seed: 3,
      logRatePerSite: 1,
      lateLogFraction: 0.5,
      lateLogMaxSeconds: 20,
    });
    const id = t.sim.control.sites()[0]?.site.id as number;
    const first = (await page(t, id, "php")).logs;
    // Older than 20 s: all 40 of [T0-60, T0-21]; the last 20 s: some, not all.
    expect(inRange(first, T0_SECONDS - 60, T0_SECONDS - 21)).toHaveLength(40);
    const recent = inRange(first, T0_SECONDS - 19, T0_SECONDS).length;
    expect(recent).toBeGreaterThan(0);
    expect(recent).toBeLessThan(20);
    t.clock.ms = T0 + 20_000;
    const later = (await page(t, id, "php")).logs;
    expect(inRange(later, T0_SECONDS - 19, T0_SECONDS)).toHaveLength(20);
  });

  it("a growing cursor that passed a second never shows that second's late entries; a new scroll does", async () => {
    t = await startTestSim({
      sites: 1,
      seed: 3,
      logRatePerSite: 0.02,
      lateLogFraction: 1,
      lateLogMaxSeconds: 600,
      logOrder: "oldest-first",
      scrollMode: "cursor",
      scrollIdleSeconds: 3600,
    });
    const id = t.sim.control.sites()[0]?.site.id as number;
    const { entries, scrollId } = await drain(t, id, "php", 200);
    t.clock.ms = T0 + 600_000;
    const rest: Array<Record<string, unknown>> = [];
    for (;;) {
      const next = await page(t, id, "php", scrollId);
      if (next.logs.length === 0) break;
      rest.push(...next.logs);
    }
    const cursorSaw = new Set([...entries, ...rest].map((e) => JSON.stringify(e)));
    // A new snapshot of the last 10 minutes before T0 has entries the cursor skipped.
    t.sim.control.setLogPaging("newest-first", "snapshot");
    const fresh = inRange((await page(t, id, "php")).logs, T0_SECONDS - 600, T0_SECONDS);
    expect(fresh.length).toBeGreaterThan(3);
    expect(fresh.filter((e) => !cursorSaw.has(JSON.stringify(e))).length).toBeGreaterThan(0);
  });

  it("the knobs over HTTP: set, read back, invalid values refused", async () => {
    t = await startTestSim({ sites: 1 });
    const set = await t.control("POST", "/_simulator/faults", {
      logIndexDelaySeconds: 5,
      lateLogFraction: 0.1,
      lateLogMaxSeconds: 30,
    });
    expect(set.body).toMatchObject({ logIndexDelaySeconds: 5, lateLogFraction: 0.1, lateLogMaxSeconds: 30 });
    expect((await t.control("POST", "/_simulator/faults", { lateLogFraction: 2 })).status).toBe(400);
    const id = t.sim.control.sites()[0]?.site.id as number;
    const r = await t.control("POST", `/_simulator/sites/${id}/logs/php?visibleAt=${T0 + 60_000}`, {
      message: "later",
    });
    expect(r.status).toBe(201);
    expect((await page(t, id, "php")).logs.map((e) => e.message)).not.toContain("later");
  });
});
