/**
 * A gauge whose series its sources name at each scrape: what a scrape shows is what the sources hold
 * at that moment, nothing is kept between scrapes, and a source taken away takes its series along.
 */
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { Exposition } from "../../../src/metrics/exposition.js";
import { METRIC_FAMILIES } from "../../../src/metrics/families.js";
import { MetricStore } from "../../../src/metrics/store.js";
import { SelfRegistry, type SeriesSource } from "../../../src/metrics/readGauge.js";
import { counter, readGauge } from "../../../src/metrics/selfMetric.js";

const spec = { name: "test_stream_lag_seconds", help: "Lag.", labelNames: ["stream"] as const };

describe("readGauge", () => {
  it("renders what its sources hold at each scrape", async () => {
    const registry = new Registry();
    const lag = readGauge(registry, spec);
    const held = new Map<string, number>([["php", 3]]);
    const source: SeriesSource<"stream"> = {
      series: (emit) => held.forEach((value, stream) => emit({ stream }, value)),
    };
    lag.add(source);
    expect(await registry.metrics()).toContain('test_stream_lag_seconds{stream="php"} 3\n');
    held.set("php", 5).set("server", 0.5);
    const text = await registry.metrics();
    expect(text).toContain('test_stream_lag_seconds{stream="php"} 5\n');
    expect(text).toContain('test_stream_lag_seconds{stream="server"} 0.5\n');
    expect(text).toContain("# TYPE test_stream_lag_seconds gauge\n");
    lag.delete(source);
    expect(await registry.metrics()).not.toContain("test_stream_lag_seconds{");
  });

  it("is shared by everything declaring it on one registry, and refuses another kind under its name", async () => {
    const registry = new Registry();
    const a = readGauge(registry, spec);
    expect(readGauge(registry, spec)).toBe(a);
    a.add({ series: (emit) => emit({ stream: "php" }, 1) });
    readGauge(registry, spec).add({ series: (emit) => emit({ stream: "server" }, 2) });
    const values = (await a.get()).values.map((v) => [v.labels.stream, v.value]);
    expect(values).toEqual([
      ["php", 1],
      ["server", 2],
    ]);
    counter(registry, { name: "test_other_total", help: "Other." });
    expect(() => readGauge(registry, { ...spec, name: "test_other_total" })).toThrow(/another kind/);
  });

  it("renders in the exporter's registry exactly what prom-client renders, escapes and odd values included", async () => {
    const labelNames = ["site_id", "site", "stream"] as const;
    const series: Array<[Record<(typeof labelNames)[number], string>, number]> = [
      [{ site_id: "1", site: "plain", stream: "php" }, 3],
      [{ site_id: "2", site: 'quote " back \\ slash', stream: "server" }, 0.25],
      [{ site_id: "3", site: "new\nline", stream: "activity" }, Number.NaN],
      [{ site_id: "", site: "", stream: "activity" }, Number.POSITIVE_INFINITY],
      [{ site_id: "4", site: "négative", stream: "php" }, Number.NEGATIVE_INFINITY],
      [{ site_id: "5", site: "big", stream: "php" }, 1.7e21],
    ];
    const render = async (registry: Registry): Promise<string> => {
      counter(registry, { name: "test_before_total", help: "Before." }).inc(2);
      const g = readGauge(registry, { name: "test_lag_seconds", help: "Lag \\ with\nlines.", labelNames });
      g.add({ series: (emit) => series.forEach(([labels, value]) => emit(labels, value)) });
      g.add({ series: () => undefined });
      readGauge(registry, { name: "test_empty_seconds", help: "Nothing.", labelNames });
      counter(registry, { name: "test_after_total", help: "After." }).inc(1);
      return registry.metrics();
    };
    const own = await render(new SelfRegistry());
    expect(own).toBe(await render(new Registry()));
    expect(own).toContain(
      'test_lag_seconds{site_id="2",site="quote \\" back \\\\ slash",stream="server"} 0.25\n',
    );
    expect(own).toContain('test_lag_seconds{site_id="3",site="new\\nline",stream="activity"} Nan\n');
  });

  it("is written once into the exposition, in both formats, as the registry renders it", async () => {
    const registry = new SelfRegistry();
    counter(registry, { name: "test_other_total", help: "Other." }).inc(3);
    const lag = readGauge(registry, { ...spec, labelNames: ["site", "stream"] as const });
    lag.add({
      series: (emit) => {
        emit({ site: 'a"b', stream: "php" }, 2);
        emit({ site: "c", stream: "server" }, 0.125);
      },
    });
    const exposition = new Exposition(new MetricStore(METRIC_FAMILIES), registry, 0);
    const text = (await exposition.current("text")).body.toString();
    const lines = (await registry.metrics())
      .split("\n")
      .filter((l) => l.startsWith("test_stream_lag_seconds"));
    expect(lines).toEqual([
      'test_stream_lag_seconds{site="a\\"b",stream="php"} 2',
      'test_stream_lag_seconds{site="c",stream="server"} 0.125',
    ]);
    for (const line of [...lines, "# TYPE test_stream_lag_seconds gauge", "test_other_total 3"])
      expect(text.split("\n").filter((l) => l === line)).toHaveLength(1);
    const om = (await exposition.current("openmetrics")).body.toString();
    for (const line of [...lines, "# TYPE test_stream_lag_seconds gauge", "# TYPE test_other counter"])
      expect(om.split("\n").filter((l) => l === line)).toHaveLength(1);
    expect(om.endsWith("# EOF\n")).toBe(true);
  });
});
