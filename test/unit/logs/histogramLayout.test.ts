/**
 * The duration histogram as published: by default what the origin served, with seven bounds and every
 * latency threshold in use; each published bucket counts exactly the entries at or under its bound
 * (the fine buckets the checkpoints keep, added up), and its exemplar is the newest record within it.
 */
import { describe, expect, it } from "vitest";
import { ConfigSchema } from "../../../src/config/schema.js";
import { eachServerSeries } from "../../../src/logs/countSeries.js";
import { histogramLayout, HistogramLayout, FULL_HISTOGRAM } from "../../../src/logs/histogramLayout.js";
import { RecentRecords } from "../../../src/logs/requestCounts.js";
import { countsOf, entry, shippedPage } from "./serverEntries.js";

function buckets(layout: HistogramLayout, durations: number[], cached = "MISS"): Map<string, number> {
  const out = new Map<string, number>();
  eachServerSeries(
    countsOf(durations.map((d) => entry(d, 200, cached))),
    layout,
    (name, suffix, labels, value) => {
      if (suffix === "_bucket") out.set(`${labels.cached} ${labels.le}`, value);
      if (suffix === "_count") out.set(`${labels.cached} count`, value);
    },
  );
  return out;
}

describe("the published duration histogram", () => {
  it("defaults: the origin's half, 0.1 to 10 s and +Inf", () => {
    const layout = histogramLayout(ConfigSchema.parse({}));
    expect(layout.le).toEqual(["0.1", "0.25", "0.5", "1", "2.5", "5", "10", "+Inf"]);
    expect(layout.cacheHits).toBe(false);
    const published = buckets(layout, [0.2, 0.001], "HIT");
    expect([...published.keys()].some((k) => k.startsWith("true"))).toBe(false);
  });

  it("publishes every latency threshold an objective uses, and the configured bounds", () => {
    const config = ConfigSchema.parse({
      metrics: { requestDurationBuckets: [0.5, 5], requestDurationCacheHits: true },
      slos: {
        latency: { objective: 95, threshold: "50ms" },
        overrides: [{ match: { tags: ["slow"] }, latency: { objective: 90, threshold: "30s" } }],
      },
    });
    const layout = histogramLayout(config);
    expect(layout.le).toEqual(["0.05", "0.5", "5", "30", "+Inf"]);
    expect(layout.cacheHits).toBe(true);
    // Objectives off: their thresholds are not needed.
    const off = ConfigSchema.parse({ metrics: { requestDurationBuckets: [1] }, slos: { enabled: false } });
    expect(histogramLayout(off).le).toEqual(["1", "+Inf"]);
  });

  it("refuses a bound that is not counted, naming the ones that are", () => {
    const parsed = ConfigSchema.safeParse({ metrics: { requestDurationBuckets: [0.3] } });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toMatch(/must be one of 0.005, .* 30/);
  });

  it("each published bucket counts the entries at or under its bound, as the full histogram does", () => {
    let seed = 3;
    const random = () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32;
    const durations = Array.from({ length: 500 }, () => random() ** 3 * 40);
    const layout = new HistogramLayout([0.025, 0.5, 1, 10], false);
    const published = buckets(layout, durations);
    const full = buckets(FULL_HISTOGRAM, durations);
    for (const le of layout.le) {
      const bound = le === "+Inf" ? Infinity : Number(le);
      const truth = durations.filter((d) => d <= bound).length;
      expect(published.get(`false ${le}`), le).toBe(truth);
      expect(full.get(`false ${le}`), le).toBe(truth);
    }
    expect(published.get("false count")).toBe(500);
    expect(published.size).toBe(layout.le.length + 1);
  });

  it("a merged bucket's exemplar is the newest record of any of its fine buckets", () => {
    const layout = new HistogramLayout([0.1, 1], false);
    const recent = new RecentRecords(layout);
    // fp0: 0.003 s, fp1: 0.07 s (both under 0.1, fp1 newer), fp2: 0.4 s (under 1).
    recent.take([shippedPage([entry(0.003), entry(0.07), entry(0.4)])]);
    expect(recent.get("d|false|0.1")).toMatchObject({ fingerprint: "fp1", value: 0.07 });
    expect(recent.get("d|false|0.005")).toMatchObject({ fingerprint: "fp1" });
    expect(recent.get("d|false|1")).toMatchObject({ fingerprint: "fp2", value: 0.4 });
    expect(recent.get("d|false|+Inf")).toBeUndefined();
    expect(layout.exemplarSlot("d|false|0.05")).toBe(layout.exemplarSlot("d|false|0.1"));
  });
});
