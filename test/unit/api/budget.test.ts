/**
 * The shared budget: a strict cap on requests in flight (measured by a slow loopback server under 50
 * parallel calls), the requests-per-second bucket, the 429 gate, and fair sharing between sources of
 * work (fake timers).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { AUTH_SOURCE, RequestBudget, type BudgetSource, type Release } from "../../../src/api/budget.js";
import { makeClient, ok, site, startServer, type TestClient, type TestServer } from "./helpers.js";

let server: TestServer | undefined;
let tc: TestClient | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await tc?.client.close();
  await server?.close();
  tc = undefined;
  server = undefined;
});

describe("concurrency cap against a slow server", () => {
  it("50 parallel calls with maxConcurrency 4: the server never holds more than 4", async () => {
    server = await startServer((req) => ({ ...ok(site(Number(req.path.split("/")[3]))), delayMs: 100 }));
    tc = makeClient(server, { maxConcurrency: 4, maxRequestsPerSecond: 10_000 });
    const client = tc.client;
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => client.site({ id: i + 1 })));
    expect(results.map((s) => s.id)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(server.api()).toHaveLength(50);
    // The cap holds (≤ 4) and is used (50 queued calls, each held 100 ms, fill all 4 slots).
    expect(server.maxInFlight).toBe(4);
    expect(client.budget.active).toBe(0);
    expect(client.budget.waiting).toBe(0);
  });
});

const clock = { now: () => Date.now() };

describe("RequestBudget (fake timers)", () => {
  function grantTimes(budget: RequestBudget, n: number, t0: number, releaseAtOnce = true) {
    const times: number[] = [];
    const releases: Release[] = [];
    for (let i = 0; i < n; i++) {
      void budget.acquire("other").then(
        (release) => {
          times.push(Date.now() - t0);
          if (releaseAtOnce) release();
          else releases.push(release);
        },
        () => undefined, // close() rejects the waiters left at the end of a test
      );
    }
    return { times, releases };
  }

  it("requests per second: 5/s grants a burst of 5, then one every 200 ms", async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const t0 = Date.now();
    // burst = min(rate 5, concurrency 100) = 5; refill 1 token per 1_000 / 5 = 200 ms.
    const budget = new RequestBudget(100, 5, clock);
    const { times } = grantTimes(budget, 12, t0);
    await vi.advanceTimersByTimeAsync(0);
    expect(times).toEqual([0, 0, 0, 0, 0]);
    await vi.advanceTimersByTimeAsync(199);
    expect(times).toHaveLength(5);
    await vi.advanceTimersByTimeAsync(1);
    expect(times).toHaveLength(6);
    await vi.advanceTimersByTimeAsync(1_200);
    // 6th..12th at 200, 400, ..., 1_400 ms.
    expect(times).toEqual([0, 0, 0, 0, 0, 200, 400, 600, 800, 1_000, 1_200, 1_400]);
    budget.close();
  });

  it("concurrency: a slot is granted only when one is released", async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const budget = new RequestBudget(2, 1_000, clock);
    const { times, releases } = grantTimes(budget, 5, Date.now(), false);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(times).toHaveLength(2);
    expect(budget.active).toBe(2);
    expect(budget.waiting).toBe(3);
    releases[0]?.();
    releases[0]?.(); // a double release frees one slot only
    await vi.advanceTimersByTimeAsync(10);
    expect(times).toHaveLength(3);
    expect(budget.active).toBe(2);
    budget.close();
  });

  it("a 429 gate holds every waiter until it ends, and is never shortened", async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const t0 = Date.now();
    const budget = new RequestBudget(10, 1_000, clock);
    budget.pauseUntil(t0 + 3_000);
    budget.pauseUntil(t0 + 1_000); // a shorter Retry-After from another caller does not shorten it
    const { times } = grantTimes(budget, 3, t0);
    await vi.advanceTimersByTimeAsync(2_999);
    expect(times).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(times).toEqual([3_000, 3_000, 3_000]);
    budget.close();
  });
});

describe("fair sharing between sources (fake timers)", () => {
  /** Keeps `depth` requests of each source queued at all times, as busy collectors and tailers do. */
  function saturate(budget: RequestBudget, sources: BudgetSource[], depth: number) {
    const granted: Record<string, number[]> = Object.fromEntries(sources.map((s) => [s, []]));
    let stopped = false;
    const ask = (source: BudgetSource) => {
      if (stopped) return;
      void budget.acquire(source).then(
        (release) => {
          (granted[source] as number[]).push(Date.now());
          release();
          ask(source);
        },
        () => undefined,
      );
    };
    for (const s of sources) for (let i = 0; i < depth; i++) ask(s);
    return {
      granted,
      stop: () => {
        stopped = true;
      },
    };
  }

  it("with equal weights, two saturating sources get equal shares", async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const budget = new RequestBudget(8, 10, clock);
    const run = saturate(budget, ["traffic", "logs"], 50);
    await vi.advanceTimersByTimeAsync(60_000);
    run.stop();
    budget.close();
    const traffic = run.granted.traffic?.length ?? 0;
    const logs = run.granted.logs?.length ?? 0;
    // 10 requests/s for 60 s, split evenly (within a burst).
    expect(traffic + logs).toBeGreaterThanOrEqual(600);
    expect(Math.abs(traffic - logs)).toBeLessThanOrEqual(10);
  });

  it("shares follow the weights while everyone waits, and every source keeps at least the floor share", async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const budget = new RequestBudget(8, 100, clock);
    // traffic plans 60 requests/s, logs 30, statistics almost nothing.
    budget.setWeights({ traffic: 60, logs: 30, statistics: 0.01 });
    const run = saturate(budget, ["traffic", "logs", "statistics"], 50);
    await vi.advanceTimersByTimeAsync(100_000);
    run.stop();
    budget.close();
    const n = (s: string) => run.granted[s]?.length ?? 0;
    const total = n("traffic") + n("logs") + n("statistics");
    // Weights after the floor (1 % of 90.01 = 0.9): 60 : 30 : 0.9.
    expect(n("traffic") / total).toBeCloseTo(60 / 90.9, 1);
    expect(n("logs") / total).toBeCloseTo(30 / 90.9, 1);
    expect(n("statistics") / total).toBeGreaterThan(0.008);
  });

  it("a source that waited alone leaves no credit behind: a newcomer is not starved by a backlog", async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const budget = new RequestBudget(4, 10, clock);
    // The collectors queue a long start-up run first.
    const first = saturate(budget, ["domains"], 200);
    await vi.advanceTimersByTimeAsync(30_000);
    // The log tailers start asking later: they get half of what follows, not what is left after the backlog.
    const second = saturate(budget, ["logs"], 4);
    const before = first.granted.domains?.length ?? 0;
    await vi.advanceTimersByTimeAsync(20_000);
    first.stop();
    second.stop();
    budget.close();
    const domainsAfter = (first.granted.domains?.length ?? 0) - before;
    const logs = second.granted.logs?.length ?? 0;
    expect(logs).toBeGreaterThanOrEqual(90);
    expect(Math.abs(domainsAfter - logs)).toBeLessThanOrEqual(10);
  });

  it("token requests go before everything else", async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const budget = new RequestBudget(1, 1_000, clock);
    const order: string[] = [];
    const hold = await budget.acquire("traffic");
    const pending = (["traffic", "logs", AUTH_SOURCE] as const).map((s) =>
      budget.acquire(s).then((release) => {
        order.push(s);
        release();
      }),
    );
    hold();
    await vi.advanceTimersByTimeAsync(100);
    await Promise.all(pending);
    expect(order[0]).toBe(AUTH_SOURCE);
    budget.close();
  });

  it("an idle source's share goes to the others (no capacity held back)", async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const budget = new RequestBudget(8, 10, clock);
    budget.setWeights({ traffic: 1, logs: 99 });
    const run = saturate(budget, ["traffic"], 20);
    await vi.advanceTimersByTimeAsync(10_000);
    run.stop();
    budget.close();
    // logs asked nothing: traffic had the whole 10 requests/s (plus the initial burst).
    expect(run.granted.traffic?.length ?? 0).toBeGreaterThanOrEqual(100);
  });
});
