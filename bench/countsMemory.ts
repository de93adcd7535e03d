/**
 * Memory per site of the log-derived series, and what rendering them costs at thousands of sites, in
 * text format and in OpenMetrics with exemplars: `MetricStore` and `LogCounts` of `sites` sites, each
 * fed the counts and one shipped page of 200 web-server records (every bucket of both cache states
 * and some 5xx hit, so every exemplar is there), heap after a full GC; and a scrape after every
 * site's counts moved, their values written in place against published in full.
 *
 *   npx tsc -p tsconfig.json && node --expose-gc dist/bench/countsMemory.js [sites=5000]
 *   (each variant in a process of its own)
 */
import type { ServerLogEntry } from "../src/api/schemas.js";
import { counterKeyOf } from "../src/logs/counterKeys.js";
import { LogCounts } from "../src/logs/counts.js";
import type { PreparedPage } from "../src/logs/prepared.js";
import { DURATION_BUCKETS } from "../src/config/slos.js";
import { ConfigSchema } from "../src/config/schema.js";
import { HistogramLayout, histogramLayout } from "../src/logs/histogramLayout.js";
import { RequestTimeUnit, SERVER_COUNT_SLOTS, serverCounts } from "../src/logs/requestCounts.js";
import { METRIC_FAMILIES } from "../src/metrics/families.js";
import type { ExpositionFormat } from "../src/metrics/openMetrics.js";
import { MetricStore } from "../src/metrics/store.js";

const sites = Number(process.argv[2] ?? 5000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc");

/** 200 records: every bucket of both cache states, 5xx among them. */
function page(site: number): { page: PreparedPage; counts: Record<string, number> } {
  const n = 200;
  const ids = new Uint16Array(n * SERVER_COUNT_SLOTS);
  const values = new Float64Array(n * SERVER_COUNT_SLOTS);
  const unit = new RequestTimeUnit("seconds");
  const bounds = [...DURATION_BUCKETS, 60];
  for (let i = 0; i < n; i++) {
    const entry: ServerLogEntry = {
      timestamp: 1_764_000_000 + i,
      status: i % 10 === 0 ? 503 : 200,
      cached: i % 2 ? "HIT" : "MISS",
      request_time: (bounds[i % bounds.length] as number) * 0.9,
      body_bytes_sent: 1000 + i,
    };
    serverCounts(entry, unit, ids, values, i * SERVER_COUNT_SLOTS);
  }
  const counts: Record<string, number> = {};
  ids.forEach((id, i) => {
    if (id) counts[counterKeyOf(id)] = (counts[counterKeyOf(id)] ?? 0) + (values[i] as number);
  });
  const fingerprints = Array.from(
    { length: n },
    (_, i) => `${site.toString(16).padStart(8, "0")}${i.toString(16).padStart(24, "0")}`,
  );
  return {
    counts,
    page: {
      count: n,
      bytes: Buffer.alloc(0),
      ends: new Uint32Array(n),
      fingerprints,
      occurrences: new Uint32Array(n),
      times: Float64Array.from({ length: n }, (_, i) => (1_764_000_000 + i) * 1000),
      counts: { slots: SERVER_COUNT_SLOTS, ids, values },
    },
  };
}

function heapMb(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed / 1048576;
}

/** The middle one of an odd number of figures. */
function medianOf(xs: number[]): number {
  return xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
}

/** Median ms of `runs` scrapes in `format` (`store.gzipParts`), each after `move()`. */
function scrapeMs(store: MetricStore, format: ExpositionFormat, runs: number, move: () => void): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    move();
    const t0 = performance.now();
    store.gzipParts(format);
    times.push(performance.now() - t0);
  }
  return medianOf(times);
}

/** Median ms of rendering the histogram family anew (after a site's change) in `format`. */
function renderMs(
  store: MetricStore,
  counts: LogCounts,
  fed: Array<ReturnType<typeof page>>,
  format: ExpositionFormat,
): number {
  return scrapeMs(store, format, 7, () => {
    const { counts: c, page: p } = fed[0] as ReturnType<typeof page>;
    c["2xx|false"] = (c["2xx|false"] ?? 0) + 1;
    counts.update({ id: 1, name: "site-1" }, "server", c, [p]);
  });
}

/**
 * Median ms of a scrape after every site's counts moved (the log-derived counts published, then the
 * families rendered): with the checkpoints' own counts objects, as the pipeline passes them (the
 * series are the same, so their values are written in place), or with a new object each time (every
 * site published in full, as before the in-place update).
 */
function scrapeAllMs(
  store: MetricStore,
  counts: LogCounts,
  fed: Array<ReturnType<typeof page>>,
  format: ExpositionFormat,
  inFull: boolean,
): number {
  return scrapeMs(store, format, 5, () =>
    fed.forEach(({ counts: c, page: p }, i) => {
      c["2xx|false"] = (c["2xx|false"] ?? 0) + 1;
      counts.update({ id: i + 1, name: `site-${i + 1}` }, "server", inFull ? { ...c } : c, [p]);
    }),
  );
}

const fed = Array.from({ length: sites }, (_, i) => page(i + 1));
const rows: Array<Record<string, unknown>> = [];
const VARIANTS = [
  "status only",
  "histogram",
  'histogram, cached="false" only',
  "histogram + exemplars",
  "defaults: origin, 8 buckets, exemplars",
] as const;
const withExemplars = (v: (typeof VARIANTS)[number]) =>
  v === "histogram + exemplars" || v.startsWith("defaults");
// One variant per process (argv[3]: its index), so none inherits another's heap; all three by default.
if (process.argv[3] === undefined) {
  const { spawnSync } = await import("node:child_process");
  for (let v = 0; v < VARIANTS.length; v++) {
    const args = [...process.execArgv, import.meta.filename, String(sites), String(v)];
    spawnSync(process.execPath, args, { stdio: "inherit" });
  }
  process.exit(0);
}
for (const variant of [VARIANTS[Number(process.argv[3])] as (typeof VARIANTS)[number]]) {
  const base = heapMb();
  const store = new MetricStore(METRIC_FAMILIES, {
    exclude:
      variant === "status only"
        ? [
            "sitehost_site_http_request_duration_seconds",
            "sitehost_site_http_response_size_bytes_total",
            "sitehost_site_http_requests_without_duration_total",
          ]
        : [],
  });
  const counts = new LogCounts(store, {
    histogram: variant.startsWith("defaults")
      ? histogramLayout(ConfigSchema.parse({}))
      : new HistogramLayout(DURATION_BUCKETS, variant !== 'histogram, cached="false" only'),
    exemplars: withExemplars(variant),
  });
  for (let i = 0; i < sites; i++) {
    const { counts: c, page: p } = fed[i] as ReturnType<typeof page>;
    counts.update({ id: i + 1, name: `site-${i + 1}` }, "server", c, [p]);
  }
  store.gzipParts("text");
  if (withExemplars(variant)) store.gzipParts("openmetrics");
  const bytesPerSite = ((heapMb() - base) * 1048576) / sites;
  const row = {
    variant,
    series:
      store
        .render()
        .split("\n")
        .filter((l) => l && !l.startsWith("#")).length / sites,
    bytesPerSite: Math.round(bytesPerSite),
    renderTextMs: +renderMs(store, counts, fed, "text").toFixed(1),
    renderOpenMetricsMs: +renderMs(store, counts, fed, "openmetrics").toFixed(1),
  };
  const format: ExpositionFormat = withExemplars(variant) ? "openmetrics" : "text";
  // Side by side, alternating, so the machine's load weighs on both alike.
  const inPlace: number[] = [];
  const inFull: number[] = [];
  for (let i = 0; i < 3; i++) {
    inPlace.push(scrapeAllMs(store, counts, fed, format, false));
    inFull.push(scrapeAllMs(store, counts, fed, format, true));
  }
  rows.push({
    ...row,
    scrapeAllMovedInPlaceMs: Math.round(medianOf(inPlace)),
    scrapeAllMovedInFullMs: Math.round(medianOf(inFull)),
  });
  // Keep both alive until measured.
  void store;
}
for (const row of rows) console.log(JSON.stringify({ sites, ...row }));
