/**
 * Issue #2 — the shared budget: a strict cap on requests in flight (measured by a slow loopback server
 * under 50 parallel calls) and the requests-per-second bucket and 429 gate (hand-driven clock).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { RequestBudget, type Release } from "../../../src/api/budget.js";
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
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => client.getSite(i + 1)));
    expect(results.map((s) => s.id)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(server.api()).toHaveLength(50);
    // The cap holds (≤ 4) and is used (50 queued calls, each held 100 ms, fill all 4 slots).
    expect(server.maxInFlight).toBe(4);
    expect(client.budget.active).toBe(0);
    expect(client.budget.waiting).toBe(0);
  });
});

describe("RequestBudget (fake timers)", () => {
  function grantTimes(budget: RequestBudget, n: number, t0: number, releaseAtOnce = true) {
    const times: number[] = [];
    const releases: Release[] = [];
    for (let i = 0; i < n; i++) {
      void budget.acquire().then(
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
    const budget = new RequestBudget(100, 5, () => Date.now());
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
    const budget = new RequestBudget(2, 1_000, () => Date.now());
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
    const budget = new RequestBudget(10, 1_000, () => Date.now());
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
