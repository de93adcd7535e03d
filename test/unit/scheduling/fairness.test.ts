/**
 * The sharing policy end to end, on a fake clock: the planner's weights handed to the real request
 * budget (refreshed every 5 s, as the daemon does during start-up), every source asking as fast as it
 * may. The numbers are those of 1,000 sites with the default schedules and three log streams each, at
 * 100 requests/s, right after start.
 */
import pino from "pino";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { RequestBudget, type BudgetSource } from "../../../src/api/budget.js";
import { BudgetPlanner, type StartupWork } from "../../../src/scheduling/budgetPlanner.js";

const PLAN: Record<string, number> = {
  traffic: 1000 / 60,
  domains: 1000 / 600,
  security: 2000 / 1800,
  git: 1000 / 900,
  backups: 3000 / 3600,
  certificates: 2800 / 3600,
  statistics: 1000 / 10_800,
  usage: 1000 / 21_600,
  performance: 1000 / 21_600,
  logs: 69,
};

const SOURCES = Object.keys(PLAN) as BudgetSource[];

const STARTUP: StartupWork[] = [
  { source: "logs", requests: 3000, withinSeconds: 20 },
  { source: "domains", requests: 1000, withinSeconds: 90 },
  { source: "security", requests: 2000, withinSeconds: 90 },
  { source: "git", requests: 1000, withinSeconds: 90 },
  { source: "backups", requests: 3000, withinSeconds: 300 },
  { source: "certificates", requests: 2800, withinSeconds: 300 },
  { source: "statistics", requests: 1000, withinSeconds: 900 },
  { source: "usage", requests: 1000, withinSeconds: 1800 },
  { source: "performance", requests: 1000, withinSeconds: 1800 },
];

afterEach(() => {
  vi.useRealTimers();
});

describe("fair sharing at start-up, 1,000 sites at 100 requests/s", () => {
  it("the traffic run keeps the rate its minute needs, every collector's first run comes before the streams' first reads, and nobody starves", async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const budget = new RequestBudget(16, 100, { now: () => Date.now() });
    const settings = { budgetRequestsPerSecond: 100, shardCount: 1, logsMaxPollInterval: "5m" };
    const granted: Record<string, number> = {};
    // Start-up work left: what each source has not yet been granted of its first run or reads.
    const pending = () =>
      STARTUP.map((w) => ({ ...w, requests: w.requests - (granted[w.source] ?? 0) })).filter(
        (w) => w.requests > 0,
      );
    const planner = new BudgetPlanner(settings, new Registry(), pino({ level: "silent" }), budget, {
      sources: () => SOURCES.map((source) => ({ source, requestsPerSecond: PLAN[source] ?? 0 })),
      startupWork: pending,
    });
    planner.update();
    const refresh = setInterval(() => planner.refreshWeights(), 5_000);

    let stopped = false;
    const ask = (source: BudgetSource) => {
      if (stopped) return;
      void budget.acquire(source).then(
        (release) => {
          granted[source] = (granted[source] ?? 0) + 1;
          release();
          ask(source);
        },
        () => undefined,
      );
    };
    for (const source of SOURCES) for (let i = 0; i < 16; i++) ask(source);
    // Every collector's first run (12,800 requests besides traffic's runs) done within five minutes.
    let collectorsDoneAt: number | undefined;
    let logsThen = 0;
    for (let s = 0; s < 600 && collectorsDoneAt === undefined; s++) {
      await vi.advanceTimersByTimeAsync(1_000);
      if (pending().every((w) => w.source === "logs")) {
        collectorsDoneAt = s + 1;
        logsThen = granted.logs ?? 0;
      }
    }
    expect(collectorsDoneAt).toBeLessThanOrEqual(300);
    // Meanwhile the streams had the floor share: a few hundred reads of their 3,000.
    expect(logsThen).toBeLessThan(600);
    // A traffic run (1,000 requests) fits in each minute, with room to spare.
    expect((granted.traffic ?? 0) / ((collectorsDoneAt ?? 1) / 60)).toBeGreaterThanOrEqual(1_200);
    // Then the streams' first reads take the room: done within a minute.
    await vi.advanceTimersByTimeAsync(60_000);
    expect(granted.logs).toBeGreaterThanOrEqual(3_000);
    stopped = true;
    clearInterval(refresh);
    budget.close();
    const total = Object.values(granted).reduce((a, b) => a + b, 0);
    // The whole budget is used.
    expect(total).toBeGreaterThan(100 * ((collectorsDoneAt ?? 0) + 60) * 0.98);
    for (const source of SOURCES) expect(granted[source], source).toBeGreaterThan(0);
  });
});
