import pino from "pino";
import { describe, expect, it, vi } from "vitest";
import { SiteRefresher, type RefreshTarget } from "../../../src/webhooks/refresh.js";
import { waitFor } from "../../helpers/wait.js";

const silent = pino({ level: "silent" });

/** Records what it is asked; each single read waits until released when `hold` is set. */
class Target implements RefreshTarget {
  readonly reads: number[] = [];
  discoveries = 0;
  /** Discovery runs asked for, including those refused because one was running. */
  asked = 0;
  /** When each discovery ran (ms). */
  readonly discoveredAt: number[] = [];
  discoveryBusy = false;
  hold = false;
  /** The watched sites (1 to 100 at first); a discovery adds `created`. */
  readonly known = new Set(Array.from({ length: 100 }, (_, i) => i + 1));
  readonly created = new Set<number>();
  isKnown(siteId: number): boolean {
    return this.known.has(siteId);
  }
  discoveryCost(): number {
    return 3;
  }
  private releases: Array<() => void> = [];
  refreshSite(siteId: number): Promise<void> {
    this.reads.push(siteId);
    if (!this.hold) return Promise.resolve();
    return new Promise((r) => this.releases.push(r));
  }
  release(): void {
    for (const r of this.releases.splice(0)) r();
  }
  rediscover(): Promise<boolean> {
    this.asked += 1;
    if (this.discoveryBusy) return Promise.resolve(false);
    this.discoveries += 1;
    this.discoveredAt.push(Date.now());
    for (const id of this.created) this.known.add(id);
    return Promise.resolve(true);
  }
}

/** Waits for `cond` (5 s at most). */
const until = (cond: () => boolean, what: string) => waitFor(what, cond, { timeoutMs: 5000, intervalMs: 2 });

describe("site refreshes after webhook events", () => {
  it("coalesces a burst of events about one site into one read", async () => {
    const t = new Target();
    const r = new SiteRefresher(t, silent, { debounceMs: 20 });
    for (let i = 0; i < 5; i++) r.request(7);
    r.request(8);
    await until(() => t.reads.length >= 2 && !r.busy, "the reads");
    expect([...t.reads].sort()).toEqual([7, 8]);
    expect(r.requestsPerSecond()).toBeCloseTo(2 / 900, 6);
    await r.stop();
  });

  it("reads a site again when an event about it arrives while it is being read", async () => {
    // On a fake clock: "not twice at once" is checked after the debounce has surely run out.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    try {
      const t = new Target();
      t.hold = true;
      const r = new SiteRefresher(t, silent, { debounceMs: 5 });
      r.request(7);
      await vi.advanceTimersByTimeAsync(5);
      expect(t.reads).toEqual([7]);
      r.request(7);
      await vi.advanceTimersByTimeAsync(30);
      expect(t.reads).toEqual([7]); // not twice at once
      t.hold = false;
      t.release();
      await vi.advanceTimersByTimeAsync(5);
      expect(t.reads).toEqual([7, 7]);
      expect(r.busy).toBe(false);
      await r.stop();
    } finally {
      vi.useRealTimers();
    }
  });

  it("a burst naming many sites is one discovery run, retried while one is already running", async () => {
    const t = new Target();
    t.discoveryBusy = true;
    const r = new SiteRefresher(t, silent, { debounceMs: 5, maxSingleReads: 3, retryMs: 20 });
    for (const id of [1, 2, 3, 4, 5]) r.request(id);
    await until(() => t.asked >= 1, "a discovery run asked for while one runs");
    expect(t.discoveries).toBe(0);
    t.discoveryBusy = false;
    await until(() => t.discoveries === 1 && !r.busy, "the discovery run");
    expect(t.reads).toEqual([]);
    await r.stop();
  });

  it("a failed read is logged, not thrown; nothing runs after stop", async () => {
    const t: RefreshTarget = {
      refreshSite: () => Promise.reject(new Error("HTTP 500")),
      rediscover: () => Promise.resolve(true),
      isKnown: () => true,
      discoveryCost: () => 1,
    };
    const r = new SiteRefresher(t, silent, { debounceMs: 1 });
    r.request(1);
    await until(() => !r.busy, "the failed read");
    await r.stop();
    r.request(2);
    expect(r.busy).toBe(false);
  });
});

describe("events naming sites the exporter does not watch", () => {
  it("855 unknown ids arriving over a while cost a discovery run per interval, not a request each", async () => {
    const t = new Target();
    const rates: number[] = [];
    const r = new SiteRefresher(t, silent, {
      debounceMs: 2,
      discoveryIntervalMs: 300,
      onRateChange: () => rates.push(r.requestsPerSecond()),
    });
    const started = Date.now();
    for (let id = 1000; id < 1855; id++) {
      r.request(id);
      if (id % 100 === 0) await new Promise((res) => setTimeout(res, 10));
    }
    const sent = Date.now() - started;
    await until(() => !r.busy, "the discovery runs");
    expect(t.reads).toEqual([]);
    expect(t.discoveries).toBeGreaterThanOrEqual(1);
    expect(t.discoveries).toBeLessThanOrEqual(Math.ceil(sent / 300) + 1);
    // The runs' cost is webhook work in the plan, and the plan was told (at most every 5 s).
    expect(r.requestsPerSecond()).toBeCloseTo((3 * t.discoveries) / 900, 6);
    expect(rates).toEqual([3 / 900]);
    // The same ids again: not found last time, so no new run for them.
    const runs = t.discoveries;
    for (let id = 1000; id < 1855; id++) r.request(id);
    // Decided at once: nothing waits, nothing is planned.
    expect(r.busy).toBe(false);
    expect(t.discoveries).toBe(runs);
    expect(t.reads).toEqual([]);
    await r.stop();
  });

  it("a new site's event: the discovery run finds it; later events about it read it alone", async () => {
    const t = new Target();
    t.created.add(500);
    const r = new SiteRefresher(t, silent, { debounceMs: 2 });
    r.request(500);
    await until(() => t.discoveries === 1 && !r.busy, "the discovery run");
    expect(t.reads).toEqual([]);
    r.request(500);
    await until(() => t.reads.length === 1 && !r.busy, "the single read");
    expect(t.reads).toEqual([500]);
    await r.stop();
  });

  it("discovery runs for unknown ids are at least discoveryIntervalMs apart", async () => {
    const t = new Target();
    const r = new SiteRefresher(t, silent, { debounceMs: 2, discoveryIntervalMs: 200 });
    r.request(2000);
    await until(() => t.discoveries === 1, "the first run");
    r.request(2001);
    await until(() => t.discoveries === 2 && !r.busy, "the second run");
    const [first, second] = t.discoveredAt as [number, number];
    expect(second - first).toBeGreaterThanOrEqual(200);
    await r.stop();
  });

  it("single reads of watched sites stay under maxReadsPerSecond; the rest join one discovery run", async () => {
    const t = new Target();
    // 1 read/s over 10 s: 10 single reads, then the others go to a discovery run.
    const r = new SiteRefresher(t, silent, { debounceMs: 2, maxReadsPerSecond: 1, discoveryIntervalMs: 50 });
    for (let id = 1; id <= 40; id++) {
      r.request(id);
      await new Promise((res) => setTimeout(res, 4));
    }
    await until(() => !r.busy, "the refreshes");
    expect(t.reads.length).toBeLessThanOrEqual(10);
    expect(t.discoveries).toBeGreaterThanOrEqual(1);
    expect(new Set([...t.reads]).size + 0).toBe(t.reads.length);
    await r.stop();
  });
});
