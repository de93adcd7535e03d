import { Registry, type Gauge } from "prom-client";
import { describe, expect, it } from "vitest";
import type { BudgetSource } from "../../../src/api/budget.js";
import { CountBuckets } from "../../../src/scheduling/countBuckets.js";
import { MeasuredRates } from "../../../src/scheduling/measuredRates.js";
import { schedulePeriodMs } from "../../../src/scheduling/plan.js";

const SITES = 100;
const MINUTE = 60_000;

/** A MeasuredRates on a fake clock, sampled once a minute; `run` adds a source's requests. */
function fixture(
  planned: ReadonlyMap<BudgetSource, number>,
  schedules: Record<string, { schedule: string }> = {},
  startup?: { doneAt: number | undefined },
) {
  const registry = new Registry();
  const granted = new Map<BudgetSource, number>();
  let now = Date.UTC(2026, 10, 24, 1, 0, 30);
  const rates = new MeasuredRates(registry, {
    granted: () => granted,
    sites: () => SITES,
    periodMs: (source) => schedulePeriodMs(schedules as never, source),
    planned: () => planned,
    now: () => now,
    ...(startup ? { startupDoneAt: () => startup.doneAt } : {}),
  });
  rates.sample();
  const value = async (name: string, source: BudgetSource) => {
    const metric = registry.getSingleMetric(name) as Gauge<"source">;
    return (await metric.get()).values.find((v) => v.labels.source === source)?.value;
  };
  return {
    rates,
    now: () => now,
    run: (source: BudgetSource, requests: number) =>
      granted.set(source, (granted.get(source) ?? 0) + requests),
    /** Advances the clock a minute at a time, calling `each` before every sample with the UTC time. */
    minutes(count: number, each: (at: Date) => void = () => {}) {
      for (let i = 0; i < count; i++) {
        now += MINUTE;
        each(new Date(now));
        rates.sample();
      }
    },
    perSiteHour: (source: BudgetSource) => value("sitehost_exporter_api_requests_per_site_hour", source),
    measured: (source: BudgetSource) =>
      value("sitehost_exporter_api_requests_per_site_hour_measured", source),
  };
}

describe("the measured cost per site-hour", () => {
  it("is a 3-hourly collector's plan after 14 minutes, and its real cost once a whole period is measured", async () => {
    // statistics every 3 hours, one request a site: a third of a request per site-hour.
    const f = fixture(new Map([["statistics", SITES / (3 * 3600)]]), {
      statistics: { schedule: "17 */3 * * *" },
    });
    const statistics = (at: Date) => {
      if (at.getUTCMinutes() === 17 && at.getUTCHours() % 3 === 0) f.run("statistics", SITES);
    };
    // The first run at the start reads every site once.
    f.run("statistics", SITES);
    f.minutes(14, statistics);
    // Extrapolated, the first run would read 100 requests in 14 minutes: 4.29 per site-hour.
    expect(f.rates.perSecond().get("statistics")! * 36).toBeCloseTo(4.29, 2);
    expect(await f.perSiteHour("statistics")).toBe(0.333);
    expect(await f.measured("statistics")).toBe(0);
    expect([...f.rates.starting()]).toEqual(["statistics"]);
    // Still the plan a minute before three hours.
    f.minutes(180 - 14 - 1, statistics);
    expect(await f.perSiteHour("statistics")).toBe(0.333);
    // Three hours: measured, the first run and the one at 03:17 in the window.
    f.minutes(1, statistics);
    expect(await f.measured("statistics")).toBe(1);
    expect(await f.perSiteHour("statistics")).toBe(0.667);
    expect(f.rates.starting().size).toBe(0);
    // Once the first run is out of the window: one run in three hours, as planned.
    f.minutes(31, statistics);
    expect(await f.perSiteHour("statistics")).toBe(0.333);
  });

  it("measures over a whole window begun after the start-up work: no first run in it", async () => {
    // security every 30 minutes, two requests a site: 4 per site-hour.
    const startup: { doneAt: number | undefined } = { doneAt: undefined };
    const f = fixture(
      new Map([["security", (SITES * 4) / 3600]]),
      { security: { schedule: "*/30 * * * *" } },
      startup,
    );
    const security = (at: Date) => {
      if (at.getUTCMinutes() % 30 === 0) f.run("security", 2 * SITES);
    };
    f.run("security", 2 * SITES); // the first run at the start
    f.minutes(2, security);
    startup.doneAt = f.now(); // every first run done
    f.minutes(29, security);
    // 31 minutes since the start: without the start-up's end, measured with the first run in it (8).
    expect(await f.measured("security")).toBe(0);
    expect(await f.perSiteHour("security")).toBe(4);
    f.minutes(1, security);
    expect(await f.measured("security")).toBe(1);
    expect(await f.perSiteHour("security")).toBe(4);
  });

  it("holds the plan while the start-up work is not done, however long", async () => {
    const f = fixture(new Map([["logs", 1]]), {}, { doneAt: undefined });
    f.minutes(90, () => f.run("logs", 120));
    expect(await f.measured("logs")).toBe(0);
    expect(await f.perSiteHour("logs")).toBe(36);
  });

  it("reads the measured figure once a source's window is complete, when its cost is twice the plan", async () => {
    // Traffic every 5 minutes, planned at one request a site (12 per site-hour), asks two.
    const f = fixture(new Map([["traffic", (SITES * 12) / 3600]]));
    const traffic = (at: Date) => {
      if (at.getUTCMinutes() % 5 === 0) f.run("traffic", 2 * SITES);
    };
    f.minutes(29, traffic);
    expect(await f.perSiteHour("traffic")).toBe(12);
    expect(await f.measured("traffic")).toBe(0);
    f.minutes(1, traffic);
    expect(await f.measured("traffic")).toBe(1);
    expect(await f.perSiteHour("traffic")).toBe(24);
  });

  it("drops the counts older than the window", async () => {
    const f = fixture(new Map([["logs", 1]]));
    // 40 minutes of one log read a second (36 per site-hour), then none.
    f.minutes(40, () => f.run("logs", 60));
    expect(await f.perSiteHour("logs")).toBe(36);
    f.minutes(15);
    expect(await f.perSiteHour("logs")).toBe(18);
    f.minutes(15);
    expect(await f.perSiteHour("logs")).toBe(0);
    expect(await f.measured("logs")).toBe(1);
    // Six hours later (the ring has gone round): still nothing, not a count left from before.
    f.minutes(6 * 60 + 7);
    expect(await f.perSiteHour("logs")).toBe(0);
  });

  it("leaves out a source without a plan until its window is measured, and publishes a planned one before its first request", async () => {
    const f = fixture(new Map([["backups", 0]]), { backups: { schedule: "7 * * * *" } });
    f.run("auth", 1);
    f.minutes(5);
    expect(await f.perSiteHour("auth")).toBeUndefined();
    expect(await f.perSiteHour("backups")).toBe(0);
    expect(await f.measured("backups")).toBe(0);
    f.minutes(25);
    // 1 token request in half an hour, for 100 sites.
    expect(await f.perSiteHour("auth")).toBe(0.02);
    expect(await f.measured("auth")).toBe(1);
    expect(await f.measured("backups")).toBe(0);
  });
});

describe("CountBuckets", () => {
  it("sums the newest buckets and clears the ones that fall out of the ring", () => {
    const b = new CountBuckets<string>(MINUTE, 5);
    b.add("a", 0, 1);
    b.add("a", MINUTE, 2);
    b.add("a", 2 * MINUTE + 59_999, 4);
    expect(b.sum("a", 2)).toBe(6);
    expect(b.sum("a", 5)).toBe(7);
    b.advance(5 * MINUTE);
    // The ring holds minutes 1 to 5 now: minute 0 is cleared.
    expect(b.sum("a", 5)).toBe(6);
    b.advance(20 * MINUTE);
    expect(b.sum("a", 5)).toBe(0);
    // A time older than the ring is dropped.
    b.add("a", 10 * MINUTE, 9);
    expect(b.sum("a", 5)).toBe(0);
    expect(b.sum("b", 5)).toBe(0);
  });
});
