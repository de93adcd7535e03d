import pino from "pino";
import { describe, expect, it } from "vitest";
import { SiteRefresher, type RefreshTarget } from "../../../src/webhooks/refresh.js";

const silent = pino({ level: "silent" });

/** Records what it is asked; each single read waits until released when `hold` is set. */
class Target implements RefreshTarget {
  readonly reads: number[] = [];
  discoveries = 0;
  discoveryBusy = false;
  hold = false;
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
    if (this.discoveryBusy) return Promise.resolve(false);
    this.discoveries += 1;
    return Promise.resolve(true);
  }
}

async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

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
    const t = new Target();
    t.hold = true;
    const r = new SiteRefresher(t, silent, { debounceMs: 5 });
    r.request(7);
    await until(() => t.reads.length === 1, "the first read");
    r.request(7);
    await new Promise((res) => setTimeout(res, 30));
    expect(t.reads).toEqual([7]); // not twice at once
    t.hold = false;
    t.release();
    await until(() => t.reads.length === 2 && !r.busy, "the second read");
    expect(t.reads).toEqual([7, 7]);
    await r.stop();
  });

  it("a burst naming many sites is one discovery run, retried while one is already running", async () => {
    const t = new Target();
    t.discoveryBusy = true;
    const r = new SiteRefresher(t, silent, { debounceMs: 5, maxSingleReads: 3, retryMs: 20 });
    for (const id of [1, 2, 3, 4, 5]) r.request(id);
    await new Promise((res) => setTimeout(res, 15));
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
    };
    const r = new SiteRefresher(t, silent, { debounceMs: 1 });
    r.request(1);
    await until(() => !r.busy, "the failed read");
    await r.stop();
    r.request(2);
    expect(r.busy).toBe(false);
  });
});
