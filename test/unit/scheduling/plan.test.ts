/**
 * The request plan: runs per second of cron schedules, the demand of the default schedules for a
 * number of sites, and what the exporter says and publishes when it does not fit the budget.
 */
import pino from "pino";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { ConfigSchema, type CollectorName } from "../../../src/config/schema.js";
import type { BudgetSource } from "../../../src/api/budget.js";
import { UNKEPT_TRAFFIC_STATE } from "../../../src/collectors/trafficState.js";
import { BudgetPlanner, type StartupWork } from "../../../src/scheduling/budgetPlanner.js";
import { collectorSources, runsPerSecond, type PlannedSource } from "../../../src/scheduling/plan.js";
import { makeSite } from "../collectors/fixtures.js";

describe("runsPerSecond", () => {
  it.each([
    ["0 * * * * *", 1 / 60],
    ["*/5 * * * *", 1 / 300],
    ["17 */3 * * *", 1 / 10_800],
    ["7 * * * *", 1 / 3_600],
    ["*/10 * * * * *", 1 / 10],
    ["0 9 * * 1-5", 5 / 7 / 86_400],
    ["0 0 1 * *", 1 / 30.44 / 86_400],
  ])("%s runs %d times per second on average", (schedule, expected) => {
    expect(runsPerSecond(schedule)).toBeCloseTo(expected, 9);
  });
});

describe("the default schedules at 1,000 sites", () => {
  it("plan about 6 requests per second for traffic, domains and security, and name every collector", async () => {
    const { createCollectors } = await import("../../../src/collectors/index.js");
    const config = ConfigSchema.parse({});
    const sites = Array.from({ length: 1000 }, (_, i) => makeSite(i + 1));
    const byName = new Map(
      Object.entries(
        createCollectors({
          now: Date.now,
          concurrency: 4,
          traffic: { polling: { runEveryMs: 300_000, maxIntervalMs: 900_000 }, state: UNKEPT_TRAFFIC_STATE },
          performance: config.collectors.performance,
          statistics: config.collectors.statistics,
        }),
      ),
    );
    const costs = Object.entries(config.collectors)
      .filter(([name]) => byName.has(name))
      .map(([name, c]) => ({
        name: name as CollectorName,
        schedule: c.schedule,
        plannedRequestsPerRun: byName.get(name)?.requestsPerRun(sites) ?? 0,
      }));
    const plan = Object.fromEntries(collectorSources(costs).map((s) => [s.source, s.requestsPerSecond]));
    // One request per site every 5 minutes (every site at first), every 10 minutes, and two every 30 minutes.
    expect(plan.traffic).toBeCloseTo(1000 / 300, 6);
    expect(plan.domains).toBeCloseTo(1000 / 600, 6);
    expect(plan.security).toBeCloseTo(2000 / 1800, 6);
    expect(Object.keys(plan).sort()).toEqual([...byName.keys()].sort());
  });
});

describe("BudgetPlanner", () => {
  function planner(budget: number, sources: () => PlannedSource[], startupWork?: () => StartupWork[]) {
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: "info" }, { write: (l: string) => void lines.push(JSON.parse(l)) });
    const registry = new Registry();
    const weights: Array<Record<string, number>> = [];
    const p = new BudgetPlanner(
      { budgetRequestsPerSecond: budget, shardCount: 1, logsMaxPollInterval: "5m" },
      registry,
      logger,
      { setWeights: (w) => void weights.push(w) },
      { sources, ...(startupWork ? { startupWork } : {}) },
    );
    return { p, lines, registry, weights };
  }

  it("publishes the plan and the budget, and makes the plan the budget's weights", async () => {
    const { p, registry, weights } = planner(100, () => [
      { source: "traffic", requestsPerSecond: 16.7 },
      { source: "logs", requestsPerSecond: 10 },
    ]);
    p.update();
    const text = await registry.metrics();
    expect(text).toContain('sitehost_exporter_api_planned_requests_per_second{source="traffic"} 16.7');
    expect(text).toContain('sitehost_exporter_api_planned_requests_per_second{source="logs"} 10');
    expect(text).toContain("sitehost_exporter_api_budget_requests_per_second 100");
    // The collector's weight is its plan plus a quarter as a share of the budget; logs get the rest.
    const w = weights.at(-1) ?? {};
    const total = Object.values(w).reduce((a, b) => a + b, 0);
    expect(((w.traffic ?? 0) / total) * 100).toBeCloseTo(16.7 * 1.25, 6);
    expect(((w.logs ?? 0) / total) * 100).toBeCloseTo(100 - 16.7 * 1.25, 6);
  });

  it("warns when the plan does not fit, naming the numbers and the ways out, and again only when the answer changes", () => {
    let logs = 10;
    const { p, lines } = planner(20, () => [
      { source: "traffic", requestsPerSecond: 16.7 },
      { source: "domains", requestsPerSecond: 1.7 },
      { source: "logs", requestsPerSecond: logs },
    ]);
    p.update();
    p.update();
    const warnings = lines.filter((l) => l.level === 40);
    expect(warnings).toHaveLength(1);
    const msg = String(warnings[0]?.msg);
    expect(msg).toContain("28.4");
    expect(msg).toContain("budget (api.maxRequestsPerSecond) is 20");
    expect(msg).toContain("raise api.maxRequestsPerSecond to at least 32");
    expect(msg).toContain("collectors.traffic.schedule");
    expect(msg).toContain("sites.shard");
    expect(msg).toContain("logs.maxPollInterval");
    logs = 30; // discovery found many more sites
    p.update();
    expect(lines.filter((l) => l.level === 40)).toHaveLength(2);
    logs = 0.5;
    p.update();
    expect(lines.some((l) => l.level === 30 && String(l.msg).includes("fit the budget again"))).toBe(true);
  });

  it("weights pending start-up work to be done in its time, collectors' first runs before the streams' first reads", () => {
    // An hourly collector's first run (3,000 requests) and 3,000 streams not read yet.
    let work: StartupWork[] = [
      { source: "backups", requests: 3000, withinSeconds: 90 },
      { source: "logs", requests: 3000, withinSeconds: 20 },
    ];
    const { p, weights } = planner(
      100,
      () => [
        { source: "traffic", requestsPerSecond: 16.7 },
        { source: "backups", requestsPerSecond: 0.83 },
        { source: "logs", requestsPerSecond: 10 },
      ],
      () => work,
    );
    p.update();
    const share = (w: Record<string, number>, source: string) =>
      ((w[source] ?? 0) / Object.values(w).reduce((a, b) => a + b, 0)) * 100;
    const steady = { traffic: 16.7 * 1.25, backups: 0.83 * 1.25 };
    const w = weights.at(-1) ?? {};
    // However much start-up work there is, traffic keeps its rate plus a quarter: its runs end in time.
    expect(share(w, "traffic")).toBeCloseTo(steady.traffic, 6);
    // The backups' first run takes the room; the streams wait (the budget's floor share) until it is done.
    expect(share(w, "backups")).toBeCloseTo(100 - steady.traffic, 6);
    expect(w.logs ?? 0).toBe(0);
    // First runs done: the streams' first reads take the room.
    work = [{ source: "logs", requests: 3000, withinSeconds: 20 }];
    p.refreshWeights();
    const next = weights.at(-1) ?? {};
    expect(share(next, "traffic")).toBeCloseTo(steady.traffic, 6);
    expect(share(next, "backups")).toBeCloseTo(steady.backups, 6);
    expect(share(next, "logs")).toBeCloseTo(100 - steady.traffic - steady.backups, 6);
    // Less pending work than the plan's rate never lowers a share below the plan.
    work = [{ source: "logs", requests: 10, withinSeconds: 20 }];
    p.refreshWeights();
    const after = weights.at(-1) ?? {};
    expect(share(after, "traffic")).toBeCloseTo(steady.traffic, 6);
    expect(share(after, "backups")).toBeCloseTo(steady.backups, 6);
    expect(share(after, "logs")).toBeCloseTo(100 - steady.traffic - steady.backups, 6);
  });

  it("the collectors' rates come first only while they fit in the budget: beyond it, plain shares of the plan", () => {
    const { p, weights } = planner(20, () => [
      { source: "traffic", requestsPerSecond: 30 },
      { source: "logs", requestsPerSecond: 10 },
    ]);
    p.update();
    expect(weights.at(-1)).toEqual({ traffic: 30, logs: 10 });
  });

  it("gives start-up work a quarter of the budget when the plan alone exceeds it", () => {
    const { p, weights } = planner(
      20,
      () => [
        { source: "traffic", requestsPerSecond: 16.7 },
        { source: "logs", requestsPerSecond: 10 },
      ],
      () => [{ source: "logs", requests: 3000, withinSeconds: 20 }],
    );
    p.update();
    const w = weights.at(-1) ?? {};
    const total = Object.values(w).reduce((a, b) => a + b, 0);
    // The raise (logs above their plan) is a quarter of all the weight: a quarter of the budget.
    expect(((w.logs ?? 0) - 10) / total).toBeCloseTo(0.25, 6);
    expect(w.traffic).toBe(16.7);
  });
});

describe("the over-budget advice", () => {
  it("names slower traffic polling first, with the plan and the measured cost per site-hour", async () => {
    const { adviceFor, makePlan } = await import("../../../src/scheduling/plan.js");
    const plan = makePlan(
      [
        { source: "traffic", requestsPerSecond: 20, measuredRequestsPerSecond: 21 },
        { source: "domains", requestsPerSecond: 2, measuredRequestsPerSecond: 2 },
        { source: "logs", requestsPerSecond: 8, measuredRequestsPerSecond: 9 },
      ],
      20,
      1000,
    );
    const advice = adviceFor(plan, {
      shardCount: 1,
      maxPollInterval: "5m",
      traffic: { schedule: "30 */5 * * * *", maxInterval: "15m" },
    });
    // 30 requests/s over 1,000 sites is 108 per site-hour; measured 32/s is 115.2; 20/s at 0.03 a site covers 666.
    expect(advice).toContain(
      "plan 30.0 API requests/s (108.0 per site-hour for 1000 sites; measured lately: 115.2; the budget covers about 666 sites at this mix)",
    );
    const ways = advice.slice(advice.indexOf("Ways out: ") + "Ways out: ".length).split("; ");
    expect(ways[0]).toContain("poll traffic less often");
    expect(ways[0]).toContain(
      "collectors.traffic.schedule for busy live sites (now 30 */5 * * * *, traffic plans 20.0/s)",
    );
    expect(ways[0]).toContain(
      "collectors.traffic.maxInterval for idle, staging, sandbox and kit sites (now 15m, up to 45m)",
    );
    expect(ways[1]).toContain("raise api.maxRequestsPerSecond");
    // Traffic is not named a second time among the other schedules.
    expect(ways.slice(1).join("; ")).not.toContain("collectors.traffic");
  });
});

describe("measured rates", () => {
  it("are the places each source took from the budget over the last half hour, per second and per site-hour", async () => {
    const { MeasuredRates } = await import("../../../src/scheduling/measuredRates.js");
    let now = 1_000_000;
    const granted = new Map<BudgetSource, number>([["traffic", 0]]);
    const registry = new Registry();
    const rates = new MeasuredRates(registry, { granted: () => granted, sites: () => 200, now: () => now });
    rates.sample();
    expect(rates.perSecond().size).toBe(0);
    // 10 minutes: 1,200 traffic requests, 600 log reads.
    for (let minute = 1; minute <= 40; minute++) {
      now += 60_000;
      granted.set("traffic", minute * 120);
      granted.set("logs", minute * 60);
      rates.sample();
    }
    // Over the last 30 minutes (the window), 2 traffic requests/s: 36 per site-hour at 200 sites.
    expect(rates.perSecond().get("traffic")).toBeCloseTo(2, 9);
    expect(rates.perSecond().get("logs")).toBeCloseTo(1, 9);
    const text = await registry.metrics();
    expect(text).toContain('sitehost_exporter_api_requests_per_site_hour{source="traffic"} 36');
    expect(text).toContain('sitehost_exporter_api_requests_per_site_hour{source="logs"} 18');
  });

  it("measure a collector that runs less often than every half hour over one period of its schedule", async () => {
    const { MeasuredRates } = await import("../../../src/scheduling/measuredRates.js");
    const { schedulePeriodMs } = await import("../../../src/scheduling/plan.js");
    const schedules = { backups: { schedule: "7 * * * *" }, statistics: { schedule: "17 */3 * * *" } };
    let now = Date.UTC(2026, 10, 24, 0, 0, 30);
    const granted = new Map<BudgetSource, number>([
      ["backups", 0],
      ["statistics", 0],
    ]);
    const rates = new MeasuredRates(new Registry(), {
      granted: () => granted,
      sites: () => 100,
      periodMs: (source) => schedulePeriodMs(schedules as never, source),
      now: () => now,
    });
    // Five hours, one sample a minute; each run asks once per site at its minute (300 requests for
    // backups' three per site).
    const perHour: number[] = [];
    for (let minute = 0; minute < 300; minute++) {
      now += 60_000;
      const m = new Date(now).getUTCMinutes();
      if (m === 7) granted.set("backups", (granted.get("backups") ?? 0) + 300);
      if (m === 17 && new Date(now).getUTCHours() % 3 === 0)
        granted.set("statistics", (granted.get("statistics") ?? 0) + 100);
      rates.sample();
      if (minute >= 120) perHour.push(((rates.perSecond().get("backups") ?? 0) * 3600) / 100);
    }
    // Planned: 3 per site-hour. A half-hour window would say 6 or 0 by turns; an hour's says 3.
    expect(Math.min(...perHour)).toBeCloseTo(3, 9);
    expect(Math.max(...perHour)).toBeCloseTo(3, 9);
    // Every three hours, one request per site: a third per site-hour, over the last three hours.
    expect(((rates.perSecond().get("statistics") ?? 0) * 3600) / 100).toBeCloseTo(1 / 3, 9);
  });
});

describe("webhook refreshes in the plan", () => {
  it("count toward the total but are not named as a schedule to slow down", async () => {
    const { adviceFor, makePlan } = await import("../../../src/scheduling/plan.js");
    const plan = makePlan(
      [
        { source: "webhooks", requestsPerSecond: 9 },
        { source: "traffic", requestsPerSecond: 4 },
        { source: "logs", requestsPerSecond: 2 },
      ],
      10,
    );
    expect(plan.total).toBe(15);
    expect(plan.fits).toBe(false);
    const advice = adviceFor(plan, { shardCount: 1, maxPollInterval: "5m" });
    expect(advice).toContain("collectors.traffic.schedule");
    expect(advice).not.toContain("collectors.webhooks");
  });
});
