/**
 * Scrapes served without waiting for a render: a scraper that scrapes at a steady interval gets an
 * exposition rendered shortly before its scrape was due, as fresh as that; a late scrape, or one
 * from a scraper without a steady interval, is rendered when it comes, as before.
 */
import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Exposition } from "../../../src/metrics/exposition.js";
import { METRIC_FAMILIES } from "../../../src/metrics/families.js";
import { ScrapeForecast } from "../../../src/metrics/scrapeForecast.js";
import { MetricStore } from "../../../src/metrics/store.js";

describe("ScrapeForecast", () => {
  it("forecasts a scraper's next scrape once three came at a steady interval", () => {
    const f = new ScrapeForecast();
    expect(f.arrived("prom", 0)).toBeUndefined();
    expect(f.arrived("prom", 30_000)).toBeUndefined();
    expect(f.arrived("prom", 60_000)).toEqual({ next: 90_000, intervalMs: 30_000 });
    // The median interval of the last three.
    expect(f.arrived("prom", 90_050)).toEqual({ next: 120_050, intervalMs: 30_000 });
  });

  it("has no forecast for irregular scrapes or bursts, and tells scrapers apart", () => {
    const f = new ScrapeForecast();
    for (const t of [0, 10_000, 40_000]) expect(f.arrived("curl", t)).toBeUndefined();
    for (const t of [0, 500, 1000, 1500]) expect(f.arrived("burst", t)).toBeUndefined();
    // Two Prometheus of an HA pair, each at its own offset.
    for (const t of [0, 15_000]) f.arrived("a", t);
    for (const t of [7_000, 22_000]) f.arrived("b", t);
    expect(f.arrived("a", 30_000)?.next).toBe(45_000);
    expect(f.arrived("b", 37_000)?.next).toBe(52_000);
  });
});

describe("rendering ahead of a due scrape", () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] }));
  afterEach(() => vi.useRealTimers());

  function setUp() {
    const store = new MetricStore(METRIC_FAMILIES);
    const sites = (n: number) =>
      store.replaceGlobal("inventory", [{ name: "sitehost_account_max_sites", labels: {}, value: n }]);
    sites(1);
    const exposition = new Exposition(store, new Registry());
    const scrape = async (scraper = "10.0.0.9 Prometheus/3.5.0") => {
      const renders = exposition.renders;
      const text = (await exposition.current("openmetrics", scraper)).body.toString();
      return {
        sites: Number(/sitehost_account_max_sites (\d+)/.exec(text)?.[1]),
        rendered: exposition.renders > renders,
      };
    };
    return { sites, scrape };
  }

  it("serves a steady scraper what was rendered a second before its scrape was due", async () => {
    const { sites, scrape } = setUp();
    // Scrapes at 0, 30 and 60 s, each rendered when it comes (no forecast yet).
    for (let i = 0; i < 3; i++) {
      sites(i + 2);
      expect(await scrape()).toEqual({ sites: i + 2, rendered: true });
      if (i < 2) await vi.advanceTimersByTimeAsync(30_000);
    }
    // The next is due at 90 s: rendered at 89 s, with what changed until then.
    await vi.advanceTimersByTimeAsync(28_000);
    sites(20);
    await vi.advanceTimersByTimeAsync(1_500);
    sites(21);
    await vi.advanceTimersByTimeAsync(500);
    expect(await scrape()).toEqual({ sites: 20, rendered: false });
    // A scrape later than two seconds past that render is rendered when it comes, with every change.
    await vi.advanceTimersByTimeAsync(33_000);
    sites(22);
    expect(await scrape()).toEqual({ sites: 22, rendered: true });
  });

  it("renders every scrape of a scraper without a steady interval when it comes", async () => {
    const { sites, scrape } = setUp();
    for (const [i, wait] of [4_000, 11_000, 3_000, 25_000, 9_000].entries()) {
      await vi.advanceTimersByTimeAsync(wait);
      sites(i + 5);
      expect(await scrape("127.0.0.1 curl/8.5.0")).toEqual({ sites: i + 5, rendered: true });
    }
  });
});
