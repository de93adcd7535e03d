/**
 * Activity logs page by number (page, per_page ≤ 50) in an order the platform does not document:
 * newest-first pages are read from page 1, oldest-first ones from the last page backwards, and
 * entries written while a read pages through them are neither lost nor shipped twice.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ActivityEntry } from "../../../src/api/schemas.js";
import type { PageResult } from "../../../src/api/types.js";
import { fingerprint } from "../../../src/logs/entry.js";
import { CheckpointStore } from "../../../src/logs/journal.js";
import { CollectorHealth, StreamShipper } from "../../../src/logs/shipper.js";
import { NumberedSource } from "../../../src/logs/read/sources.js";
import { BufferBudget } from "../../../src/logs/spool.js";
import { systemClock } from "../../../src/util/time.js";
import { MemorySink, PartsTailer, RecordingEvents } from "./fakes.js";

const T0 = Date.now() - 3_600_000;

/** The account's activity log on a scripted platform, by page number. */
class FakeActivity {
  readonly log: ActivityEntry[] = [];
  order: "newest-first" | "oldest-first" = "newest-first";
  readonly requested: number[] = [];
  /** Called before each page is answered (to write entries while a read pages). */
  beforePage: ((page: number) => void) | undefined;
  /** Paging that never ends: every page repeats page 1's entries and names the page after it. */
  endless = false;

  write(n: number, atMs = Date.now()): void {
    for (let i = 0; i < n; i++) {
      const id = this.log.length + 1;
      this.log.push({
        id,
        timestamp: new Date(atMs + i * 1000).toISOString(),
        name: "site.disable",
        accountEmail: "ops@agency.example",
        ipAddress: "198.51.100.4",
        message: `entry ${id}`,
      });
    }
  }

  readonly page = async (page: number): Promise<PageResult<ActivityEntry>> => {
    this.requested.push(page);
    this.beforePage?.(page);
    const ordered = this.order === "newest-first" ? [...this.log].reverse() : [...this.log];
    const lastPage = this.endless ? page + 1 : Math.max(1, Math.ceil(ordered.length / 50));
    const items = this.endless ? ordered.slice(0, 50) : ordered.slice((page - 1) * 50, page * 50);
    return {
      items,
      rejected: 0,
      page: {
        currentPage: page,
        nextPage: page < lastPage ? page + 1 : null,
        lastPage,
        perPage: 50,
        totalItems: ordered.length,
      },
    };
  };
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "activity-test-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function tailer(api: FakeActivity, startFromMs = 0, maxPagesPerRead = 1000) {
  const sink = new MemorySink();
  const health = new CollectorHealth();
  const events = new RecordingEvents();
  const t = new PartsTailer(
    { id: 0, name: "" },
    "activity",
    new NumberedSource((_site, page) => api.page(page), 0),
    new CheckpointStore(dir),
    {
      shipperFor: (cp) =>
        new StreamShipper(
          sink,
          cp,
          health,
          { delivered: () => undefined, rejected: () => undefined, retrying: () => undefined },
          {
            maxRecords: 2000,
            maxBytes: 1 << 20,
            depth: 2,
            backoff: { baseMs: 1, capMs: 2 },
            clock: systemClock,
          },
          new AbortController().signal,
        ),
      encoder: {
        encode: (w, r) =>
          sink.encode(w, {
            timeMs: r.timeMs,
            observedMs: Date.now(),
            severityNumber: 9,
            severityText: "INFO",
            body: String((r.entry as ActivityEntry).message),
            attributes: {},
          }),
      },
      claim: undefined,
    },
    events,
    {
      overlapMs: 120_000,
      startFromMs: () => startFromMs,
      maxPagesPerRead,
      spoolDir: join(dir, "spool"),
      bufferBudget: new BufferBudget(1 << 24),
      fingerprint: (e) => fingerprint(e),
      clock: systemClock,
      collectorDown: () => health.down,
    },
  );
  return { t, sink, events };
}

const bodies = (sink: MemorySink) => sink.accepted.map((r) => r.body);
const signal = () => new AbortController().signal;

describe("activity logs by page number", () => {
  it.each(["newest-first", "oldest-first"] as const)(
    "%s: a read longer than the page cap still reaches the checkpoint, so nothing in the middle is skipped",
    async (order) => {
      const api = new FakeActivity();
      api.order = order;
      api.write(10, T0);
      const { t, sink } = tailer(api, 0, 2);
      await t.read(signal());
      // Five pages' worth arrives between two reads, with a cap of two pages per read.
      api.write(250, T0 + 100_000);
      await t.read(signal());
      expect(bodies(sink)).toEqual(Array.from({ length: 260 }, (_, i) => `entry ${i + 1}`));
    },
  );

  it.each(["newest-first", "oldest-first"] as const)(
    "%s: 120 entries ship once, oldest first; then only what is new",
    async (order) => {
      const api = new FakeActivity();
      api.order = order;
      api.write(120, T0);
      const { t, sink } = tailer(api);
      await t.read(signal());
      expect(bodies(sink)).toEqual(Array.from({ length: 120 }, (_, i) => `entry ${i + 1}`));
      api.write(3, T0 + 200_000);
      api.requested.length = 0;
      await t.read(signal());
      expect(bodies(sink).slice(120)).toEqual(["entry 121", "entry 122", "entry 123"]);
      // Newest-first: page 1 holds the news. Oldest-first: page 1 tells the order, then the last page.
      expect(api.requested).toEqual(order === "newest-first" ? [1] : [1, 3]);
    },
  );

  it("entries written while a newest-first read pages through are neither lost nor doubled", async () => {
    const api = new FakeActivity();
    api.write(120, T0);
    const { t, sink } = tailer(api);
    await t.read(signal());
    api.write(60, T0 + 200_000);
    // Two more arrive between the requests for page 1 and page 2: page 2 now repeats two of page 1's.
    api.beforePage = (page) => {
      if (page === 2) api.write(2, T0 + 300_000);
    };
    await t.read(signal());
    api.beforePage = undefined;
    await t.read(signal());
    const got = bodies(sink);
    expect(api.log).toHaveLength(182);
    expect(new Set(got).size, got.join(",")).toBe(182);
    expect(got).toHaveLength(182);
    expect(new Set(got).size).toBe(182);
  });

  it("ships nothing from before logs.startFrom", async () => {
    const api = new FakeActivity();
    api.write(10, T0);
    api.write(5, T0 + 600_000);
    const { t, sink } = tailer(api, T0 + 300_000);
    await t.read(signal());
    expect(bodies(sink)).toEqual(["entry 11", "entry 12", "entry 13", "entry 14", "entry 15"]);
  });

  it("paging whose nextPage never ends (every page repeats page 1) stops at the repeats, ships once, counts them", async () => {
    const api = new FakeActivity();
    api.write(10, T0);
    const { t, sink, events } = tailer(api);
    await t.read(signal());
    api.write(80, T0 + 100_000);
    api.endless = true;
    api.requested.length = 0;
    await t.read(signal());
    // Page 1 served again right after itself is passed over three times (a source may answer one
    // request twice), then taken for the loop it is.
    expect(api.requested).toEqual([1, 2, 3, 4, 5]);
    expect(events.pagingProblems).toEqual(Array.from({ length: 4 }, () => "repeated_page"));
    // Page 1's fifty entries once; what the paging hid is a counted gap.
    expect(bodies(sink)).toEqual(Array.from({ length: 60 }, (_, i) => `entry ${i < 10 ? i + 1 : i + 31}`));
    expect(events.gaps).toHaveLength(1);
  }, 10_000);
});
