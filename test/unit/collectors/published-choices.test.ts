/**
 * What the performance and statistics collectors publish of an answer that holds more: the audit
 * strategies of `collectors.performance.strategies` (mobile by default) and the periods of
 * `collectors.statistics.periods` (yesterday, the current and the last month by default), wired from
 * the configuration through `createCollectors`; the requests stay the same.
 */
import { describe, expect, it } from "vitest";
import type { PerformanceReport, Statistics, StrategyReport } from "../../../src/api/schemas.js";
import { createCollectors } from "../../../src/collectors/index.js";
import { UNKEPT_TRAFFIC_STATE } from "../../../src/collectors/trafficState.js";
import type { SiteCollector } from "../../../src/collectors/types.js";
import { ConfigSchema, type Config } from "../../../src/config/schema.js";
import { makeSite } from "./fixtures.js";

const site = makeSite(4);
const audit: StrategyReport = {
  fetch_time: "2026-03-15T10:00:00Z",
  performance_score: 0.8,
  accessibility_score: 0.9,
  best_practices_score: 1,
  seo_score: 0.7,
  first_contentful_paint_numeric_value: 1200,
  first_contentful_paint_numeric_unit: "millisecond",
  cumulative_layout_shift_numeric_value: 0.05,
};
const report: PerformanceReport = { mobile_report: audit, desktop_report: audit };
const count = { views: 10, people: 4 };
const statistics: Statistics = {
  pageViews: {
    today: count,
    yesterday: count,
    currentMonth: count,
    lastMonth: count,
    twoMonthsAgo: count,
    lastOneYear: count,
    lastTwoYears: count,
  },
};

/** The collectors as the daemon makes them from this `collectors` configuration. */
function collectorsFor(collectors: Record<string, unknown>) {
  const config: Config = ConfigSchema.parse({ collectors });
  const set = createCollectors({
    now: Date.now,
    concurrency: 1,
    traffic: { polling: { runEveryMs: 300_000, maxIntervalMs: 900_000 }, state: UNKEPT_TRAFFIC_STATE },
    performance: config.collectors.performance,
    statistics: config.collectors.statistics,
  });
  return {
    performance: set.performance as SiteCollector<PerformanceReport>,
    statistics: set.statistics as SiteCollector<Statistics>,
  };
}

const labelValues = (samples: { labels: Record<string, string> }[], label: string) => [
  ...new Set(samples.map((s) => s.labels[label])),
];

describe("performance audits", () => {
  it("by default only mobile's, one request per site as before", () => {
    const { performance } = collectorsFor({});
    const samples = performance.collect(site, report, Date.now());
    expect(labelValues(samples, "strategy")).toEqual(["mobile"]);
    // 4 scores, 1 timing, the layout shift and the audit's time.
    expect(samples).toHaveLength(7);
    expect(performance.requestsPerRun([site, makeSite(5)])).toBe(2);
  });

  it("both strategies when listed, the same series for each", () => {
    const { performance } = collectorsFor({ performance: { strategies: ["desktop", "mobile"] } });
    const samples = performance.collect(site, report, Date.now());
    expect(labelValues(samples, "strategy")).toEqual(["mobile", "desktop"]);
    expect(samples).toHaveLength(14);
  });

  it("a strategy listed but absent from the report publishes nothing", () => {
    const { performance } = collectorsFor({ performance: { strategies: ["desktop"] } });
    expect(performance.collect(site, { mobile_report: audit, desktop_report: null }, Date.now())).toEqual([]);
  });
});

describe("statistics", () => {
  it("by default yesterday, the current and the last month, one request per site as before", () => {
    const { statistics: collector } = collectorsFor({});
    const samples = collector.collect(site, statistics, Date.now());
    expect(labelValues(samples, "period")).toEqual(["yesterday", "current_month", "last_month"]);
    expect(samples).toHaveLength(6);
    expect(collector.requestsPerRun([site])).toBe(1);
  });

  it("the periods listed, in the platform's order", () => {
    const { statistics: collector } = collectorsFor({ statistics: { periods: ["last_two_years", "today"] } });
    const samples = collector.collect(site, statistics, Date.now());
    expect(labelValues(samples, "period")).toEqual(["today", "last_two_years"]);
    expect(samples.map((s) => s.name)).toEqual([
      "sitehost_site_page_views",
      "sitehost_site_unique_visits",
      "sitehost_site_page_views",
      "sitehost_site_unique_visits",
    ]);
  });
});
