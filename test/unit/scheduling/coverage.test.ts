/**
 * How many sites the request budget covers, computed once for doctor and the status page; and the
 * measured rates' start-up, when a source's measurement holds only its first runs.
 */
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { BudgetSource } from "../../../src/api/budget.js";
import { ConfigSchema } from "../../../src/config/schema.js";
import { budgetFindings, plannedFor } from "../../../src/doctor/budget.js";
import { coverageOf, coverageText, coverageWays } from "../../../src/scheduling/coverage.js";
import { MeasuredRates } from "../../../src/scheduling/measuredRates.js";
import { adviceFor, makePlan } from "../../../src/scheduling/plan.js";

describe("coverageOf", () => {
  it("the listing is fixed, the rest is shared by the sites", () => {
    const c = coverageOf(
      [
        { source: "inventory", requestsPerSecond: 0.5 },
        { source: "traffic", requestsPerSecond: 1 },
        { source: "logs", requestsPerSecond: 1 },
      ],
      100,
      20,
    );
    // 2 requests/s for 100 sites: 0.02 each; (20 - 0.5) / 0.02 = 975.
    expect(c).toMatchObject({ perSite: 0.02, fixed: 0.5, covers: 975, tight: false });
    expect(coverageText(c, 100)).toBe(
      "the budget of 20 requests/s (api.maxRequestsPerSecond) covers about 975 sites at this account's current mix (100 discovered)",
    );
  });

  it("over 80 % of the sites covered, or more than covered: tight, with the ways to make room", () => {
    const sources = (sites: number) => [{ source: "traffic" as const, requestsPerSecond: sites * 0.02 }];
    expect(coverageOf(sources(800), 800, 20).tight).toBe(false);
    const close = coverageOf(sources(801), 801, 20);
    expect(close.tight).toBe(true);
    expect(coverageText(close, 801)).toContain("(801 discovered): over 80 % of it. Ways to make room: ");
    const over = coverageOf(sources(1500), 1500, 20);
    const text = coverageText(over, 1500, 2);
    expect(text).toContain("covers about 1000 sites");
    expect(text).toContain("more than it covers");
    expect(text).toContain("raise api.maxRequestsPerSecond to at least 33 if the platform allows it");
    expect(text).toContain("collectors.<name>.schedule");
    expect(text).toContain("split the sites over 4 replicas with sites.shard");
    expect(text).toContain("split the account's sites over several API accounts");
  });

  it("no site known, or sites that cost nothing: any number", () => {
    const c = coverageOf([{ source: "inventory", requestsPerSecond: 0.01 }], 0, 20);
    expect(c).toMatchObject({ perSite: 0, covers: Infinity, tight: false });
    expect(coverageText(c, 0)).toContain("covers any number of sites");
    expect(coverageWays(c)).toContain("if the platform allows it");
  });
});

describe("doctor says what the budget covers, in the same words and with the same ways out", () => {
  const config = ConfigSchema.parse({});
  const covers = plannedFor(config, 100).coverage.covers;

  it("the number is the status page's: computed by coverageOf from the same plan", () => {
    expect(Number.isFinite(covers)).toBe(true);
    // The mix is the same at any site count: the number does not depend on how many were listed.
    expect(Math.abs(plannedFor(config, 1000).coverage.covers - covers)).toBeLessThanOrEqual(covers * 0.02);
  });

  it("with webhooks, activity logs count at logs.activityPollInterval: three quiet streams of 1,000 sites plan 7.2, not 10 requests/s", () => {
    const logsOf = (webhooks: boolean) =>
      plannedFor(
        ConfigSchema.parse({
          api: { url: "https://api.example/v1", clientId: "id", clientSecret: "s" },
          webhooks: { enabled: webhooks, token: "t" },
        }),
        1000,
      ).bySource.logs;
    // 2,000 streams every 300 s and 1,001 activity logs every 300 s, or every 1,800 s with webhooks.
    expect(logsOf(false)).toBeCloseTo(3001 / 300, 3);
    expect(logsOf(true)).toBeCloseTo(2000 / 300 + 1001 / 1800, 3);
  });

  it("quiet sites ask the collectors that back off at about their maxInterval: domains 1,000 sites at about 1.1 an hour", () => {
    const domainsOf = (maxInterval: string) =>
      plannedFor(ConfigSchema.parse({ collectors: { domains: { maxInterval } } }), 1000).bySource.domains ??
      0;
    // Every 10 minutes: 6 an hour; at 1 h less the spread's mean (a tenth): 1,000 / (3,600 × 0.9) per second.
    expect(domainsOf("10m")).toBeCloseTo(1000 / 600, 3);
    expect(domainsOf("1h")).toBeCloseTo(1000 / (3600 * 0.9), 3);
    expect(domainsOf("1m")).toBeCloseTo(1000 / 600, 3); // under the schedule: every run
  });

  it("well within it: pass, the sentence without ways out", () => {
    const f = budgetFindings(config, [], 10).find((x) => x.id === "budget");
    expect(f?.verdict).toBe("pass");
    expect(f?.summary).toMatch(
      /the budget of 20 requests\/s \(api.maxRequestsPerSecond\) covers about \d+ sites at this account's current mix \(10 listed\)$/,
    );
    expect(f?.fix).toBeUndefined();
  });

  it("over 80 % of it: warn, with the status page's ways out", () => {
    const sites = Math.ceil(covers * 0.9);
    const f = budgetFindings(config, [], sites).find((x) => x.id === "budget");
    expect(f?.verdict).toBe("warn");
    const c = plannedFor(config, sites).coverage;
    expect(f?.fix).toBe(coverageWays(c, 1));
  });

  it("over the budget: fail, raising it by how much", () => {
    const f = budgetFindings(config, [], covers * 2).find((x) => x.id === "budget");
    expect(f?.verdict).toBe("fail");
    expect(f?.fix).toMatch(/^raise api.maxRequestsPerSecond to at least \d+ if the platform allows it; slow/);
    expect(f?.fix).toContain("sites.shard");
    expect(f?.fix).toContain("split the account");
  });
});

describe("measured rates while starting", () => {
  it("a source is starting until its measurement spans its whole window; its first runs are left out of the advice", () => {
    let now = 1_000_000;
    const granted = new Map<BudgetSource, number>([["backups", 0]]);
    const rates = new MeasuredRates(new Registry(), {
      granted: () => granted,
      sites: () => 100,
      periodMs: (source) => (source === "backups" ? 3_600_000 : undefined),
      now: () => now,
    });
    rates.sample();
    granted.set("backups", 100);
    granted.set("logs", 0);
    for (let minute = 1; minute <= 30; minute++) {
      now += 60_000;
      granted.set("logs", minute * 60);
      rates.sample();
    }
    // Half an hour: logs' window is full, backups' (an hour, its period) not yet.
    expect([...rates.starting()]).toEqual(["backups"]);
    for (let minute = 31; minute <= 60; minute++) {
      now += 60_000;
      rates.sample();
    }
    expect(rates.starting().size).toBe(0);

    const plan = makePlan(
      [
        { source: "backups", requestsPerSecond: 10, measuredRequestsPerSecond: 500, measuredStarting: true },
        { source: "traffic", requestsPerSecond: 20, measuredRequestsPerSecond: 18 },
      ],
      20,
      100,
    );
    const advice = adviceFor(plan, { shardCount: 1, maxPollInterval: "5m" });
    // 18 requests/s for 100 sites: 648 per site-hour; the starting 500 left out.
    expect(advice).toContain("measured lately: 648.0");
  });
});
