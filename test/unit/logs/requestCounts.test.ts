/**
 * What web-server entries add to the log-derived counts: duration buckets (and their unit), the sum,
 * entries without a duration, response bytes; read back as cumulative histogram series; rendered by
 * the store as an exposition promtool accepts, and dropped by metrics.exclude.
 */
import { execFileSync } from "node:child_process";
import { Registry } from "prom-client";
import { describe, expect, it, vi } from "vitest";
import type { ServerLogEntry } from "../../../src/api/schemas.js";
import { DURATION_BUCKETS } from "../../../src/config/slos.js";
import { LogCounts } from "../../../src/logs/counts.js";
import {
  bucketIndex,
  RecentRecords,
  RequestTimeUnit,
  unitOfValues,
} from "../../../src/logs/requestCounts.js";
import { recordUid } from "../../../src/logs/recordUid.js";
import { writtenText } from "../../../src/metrics/gzipMembers.js";
import { renderExemplar } from "../../../src/metrics/openMetrics.js";

import { countsOf, entry, shippedPage } from "./serverEntries.js";
import { eachPhpSeries, eachServerSeries } from "../../../src/logs/countSeries.js";
import { FULL_HISTOGRAM, HistogramLayout } from "../../../src/logs/histogramLayout.js";
import { addCounts, deserializePage, serializePage, type PreparedPage } from "../../../src/logs/prepared.js";
import { METRIC_FAMILIES } from "../../../src/metrics/families.js";
import { Exposition } from "../../../src/metrics/exposition.js";
import { MetricStore } from "../../../src/metrics/store.js";

const BUCKET_LE = [...DURATION_BUCKETS.map(String), "+Inf"];

describe("duration buckets", () => {
  it.each([
    [0, "0.005"],
    [0.005, "0.005"],
    [0.0051, "0.01"],
    [0.3, "0.5"],
    [1, "1"],
    [29.9, "30"],
    [31, "+Inf"],
  ])("%s s falls in le=%s", (seconds, le) => {
    const i = bucketIndex(seconds);
    expect(i === DURATION_BUCKETS.length ? "+Inf" : String(DURATION_BUCKETS[i])).toBe(le);
  });
});

describe("request_time's unit", () => {
  it.each<[string, number[], string | undefined]>([
    ["nginx's seconds with millisecond resolution", [0.123, 0.045, 1.2], "seconds"],
    ["one value with a fraction", [0.2], "seconds"],
    [
      "a slow page in seconds among fast ones (a whole number, not the first sign of milliseconds)",
      [61, 0.2, 0.3],
      "seconds",
    ],
    ["whole numbers with a median of 10 or more", [120, 45, 300], "milliseconds"],
    ["milliseconds with fractions: the median is no site's in seconds", [123.4, 88.2, 301.9], "milliseconds"],
    ["one whole number above 60: not yet", [61], undefined],
    ["two: not yet", [250, 1500], undefined],
    ["small whole numbers: either unit", [0, 1, 2, 1], undefined],
    [
      "32 small whole numbers: milliseconds (seconds have fractions)",
      Array.from({ length: 32 }, (_, i) => i % 4),
      "milliseconds",
    ],
    ["32 zeros: nothing to tell", Array.from({ length: 32 }, () => 0), undefined],
  ])("%s", (_name, values, unit) => {
    expect(unitOfValues(values)).toBe(unit);
  });

  it("auto: a page's values decide before any of them is counted, and the decision is kept", () => {
    const decided: string[] = [];
    const unit = new RequestTimeUnit("auto", (u) => decided.push(u));
    unit.observe([120, 45, 300]);
    expect([120, 0.5].map((v) => unit.seconds(v))).toEqual([0.12, 0.0005]);
    unit.observe([0.1, 0.2, 0.3, 0.4]);
    expect(unit.unit).toBe("milliseconds");
    expect(decided).toEqual(["milliseconds"]);
  });

  it("auto, undecided: fractions and 0 read as seconds, whole numbers above 0 as no duration (never guessed)", () => {
    const unit = new RequestTimeUnit("auto");
    unit.observe([250]);
    expect([0.5, 0, 250, 3].map((v) => unit.seconds(v))).toEqual([0.5, 0, undefined, undefined]);
    unit.observe([0.1, 0.2]); // 250, 0.1, 0.2: mostly fractions
    expect(unit.unit).toBe("seconds");
    expect(unit.seconds(250)).toBe(250);
  });

  it("a fixed setting is not second-guessed", () => {
    const ms = new RequestTimeUnit("milliseconds");
    ms.observe([0.1, 0.2]);
    expect(ms.seconds(0.5)).toBe(0.0005);
    expect(new RequestTimeUnit("seconds").seconds(250)).toBe(250);
  });

  it.each([[undefined], [null], [-1], ["0.2"], [Number.NaN]])("%s is no duration", (v) => {
    const unit = new RequestTimeUnit("auto");
    unit.observe([v, 0.1]);
    expect(unit.seconds(v)).toBeUndefined();
  });
});

interface Series {
  name: string;
  labels: Readonly<Record<string, string>>;
  value: number;
}

/** The series a stream's counts publish, as one line each: `<family><suffix>{labels} value`. */
/** Every bucket counted, with or without the cached="true" half. */
const layoutOf = (keepCached: boolean) =>
  keepCached ? FULL_HISTOGRAM : new HistogramLayout(DURATION_BUCKETS, false);

function published(counts: Record<string, number>, keepCached = true, php = false): string[] {
  const out: string[] = [];
  const emit = (
    name: string,
    suffix: string | undefined,
    labels: Readonly<Record<string, string>>,
    value: number,
  ) => out.push(`${name}${suffix ?? ""}${JSON.stringify(labels)} ${value}`);
  if (php) eachPhpSeries(counts, emit);
  else eachServerSeries(counts, layoutOf(keepCached), emit);
  return out;
}

function series(counts: Record<string, number>, keepCached = true): Series[] {
  const out: Series[] = [];
  eachServerSeries(counts, layoutOf(keepCached), (name, suffix, labels, value) =>
    out.push({ name: `${name}${suffix ?? ""}`, labels, value }),
  );
  return out;
}

describe("the web server's series", () => {
  const entries = [
    entry(0.004, 200, "MISS", 1000),
    entry(0.2, 200, "MISS", 500),
    entry(0.2, 503, "MISS"),
    entry(3, 200, "MISS", 10),
    entry(0.001, 200, "HIT", 2000),
    entry(undefined, 200, "MISS", 7),
    entry(-2, 404, "MISS"),
  ];
  const value = (list: Series[], name: string, labels: Record<string, string>) =>
    list.find((s) => s.name === name && JSON.stringify(s.labels) === JSON.stringify(labels))?.value;
  const duration = "sitehost_site_http_request_duration_seconds";

  it("cumulative buckets, sum and count per cache state; untimed entries counted apart; bytes summed", () => {
    const list = series(countsOf(entries));
    const bucket = (le: string) => value(list, `${duration}_bucket`, { cached: "false", le });
    expect([
      bucket("0.005"),
      bucket("0.1"),
      bucket("0.25"),
      bucket("2.5"),
      bucket("5"),
      bucket("+Inf"),
    ]).toEqual([1, 1, 3, 3, 4, 4]);
    expect(value(list, `${duration}_count`, { cached: "false" })).toBe(4);
    expect(value(list, `${duration}_sum`, { cached: "false" })).toBeCloseTo(3.404, 9);
    expect(value(list, `${duration}_count`, { cached: "true" })).toBe(1);
    const untimed = "sitehost_site_http_requests_without_duration_total";
    expect([value(list, untimed, { cached: "false" }), value(list, untimed, { cached: "true" })]).toEqual([
      2, 0,
    ]);
    const bytes = "sitehost_site_http_response_size_bytes_total";
    expect([value(list, bytes, { cached: "false" }), value(list, bytes, { cached: "true" })]).toEqual([
      1517, 2000,
    ]);
    const responses = list.filter((s) => s.name === "sitehost_site_http_responses_total");
    expect(responses.reduce((n, r) => n + r.value, 0)).toBe(entries.length);
    expect(value(list, "sitehost_site_http_responses_total", { status_class: "4xx", cached: "false" })).toBe(
      1,
    );
  });

  it('without cache hits, only the cached="false" histogram', () => {
    const cached = series(countsOf(entries), false)
      .filter((s) => s.name === `${duration}_count`)
      .map((s) => s.labels.cached);
    expect(cached).toEqual(["false"]);
  });

  it("a bound from other buckets counts in the next one up", () => {
    const list = series({ "d|false|0.3": 2, "d|false|+Inf": 1 });
    const bucket = (le: string) => value(list, `${duration}_bucket`, { cached: "false", le });
    expect([bucket("0.25"), bucket("0.5"), bucket("+Inf")]).toEqual([0, 2, 3]);
  });

  it("from the first read: 5xx, untimed and bytes of uncached responses, at 0", () => {
    expect(published({})).toEqual([
      'sitehost_site_http_responses_total{"status_class":"5xx","cached":"false"} 0',
      'sitehost_site_http_requests_without_duration_total{"cached":"false"} 0',
      'sitehost_site_http_response_size_bytes_total{"cached":"false"} 0',
    ]);
  });

  it("once an uncached entry is counted, every class from 2xx to 5xx and its histogram, at 0 until counted", () => {
    const one = published(countsOf([entry(0.3, 301)]));
    const classes = one.filter((l) => l.startsWith("sitehost_site_http_responses_total"));
    expect(classes).toEqual(
      ["2xx", "3xx", "4xx", "5xx"].map(
        (c) =>
          `sitehost_site_http_responses_total{"status_class":"${c}","cached":"false"} ${c === "3xx" ? 1 : 0}`,
      ),
    );
    expect(one.filter((l) => l.includes("_bucket"))).toHaveLength(DURATION_BUCKETS.length + 1);
    expect(one.some((l) => l.includes('"cached":"true"'))).toBe(false);
  });

  it("a first cache hit brings its 5xx and bytes at 0, its histogram and untimed count only with cache hits kept", () => {
    const hit = countsOf([entry(0.3, 301), entry(0.001, 200, "HIT")]);
    // Without the histogram's cached="true" half (the default): 2xx (counted), 5xx and bytes.
    expect(published(hit, false).filter((l) => l.includes('"cached":"true"'))).toEqual([
      'sitehost_site_http_responses_total{"status_class":"2xx","cached":"true"} 1',
      'sitehost_site_http_responses_total{"status_class":"5xx","cached":"true"} 0',
      'sitehost_site_http_response_size_bytes_total{"cached":"true"} 0',
    ]);
    // With it: the histogram and the untimed count beside it, at 0 until counted.
    const kept = published(hit);
    expect(kept.filter((l) => l.includes('"cached":"true"') && l.includes("_bucket"))).toHaveLength(
      DURATION_BUCKETS.length + 1,
    );
    expect(kept).toContain('sitehost_site_http_requests_without_duration_total{"cached":"true"} 0');
    // An untimed cache hit is published once counted, histogram or not.
    const untimed = countsOf([entry(0.3), entry(undefined, 200, "HIT")]);
    expect(published(untimed, false)).toContain(
      'sitehost_site_http_requests_without_duration_total{"cached":"true"} 1',
    );
  });

  it("1xx and other statuses appear when counted, after the seeded classes", () => {
    const lines = published(countsOf([entry(0.3, 101), entry(0.3, 700), entry(0.3, 200)]));
    const classes = lines
      .filter((l) => l.startsWith("sitehost_site_http_responses_total"))
      .map((l) => /"status_class":"([^"]+)"/.exec(l)?.[1]);
    expect(classes).toEqual(["2xx", "3xx", "4xx", "5xx", "1xx", "other"]);
  });

  it("counts that gain keys of series already published keep their series and order (written in place)", () => {
    const counts = countsOf([entry(0.3, 200)]);
    const names = () => published(counts).map((l) => l.slice(0, l.lastIndexOf(" ")));
    const before = names();
    for (const [key, n] of Object.entries(
      countsOf([entry(7, 404), entry(undefined, 503, "MISS", 5), entry(0.001, 304)]),
    ))
      counts[key] = (counts[key] ?? 0) + n;
    expect(names()).toEqual(before);
  });
});

describe("PHP's series", () => {
  const severities = (counts: Record<string, number>) =>
    published(counts, true, true).map((l) => /"severity":"(\w+)"\} (\d+)/.exec(l)?.slice(1).join("="));

  it("fatal and parse from the first read; error and warning once one is counted; the others when counted", () => {
    expect(published({}, true, true)).toEqual([
      'sitehost_site_php_log_entries_total{"severity":"fatal"} 0',
      'sitehost_site_php_log_entries_total{"severity":"parse"} 0',
    ]);
    expect(severities({ notice: 2 })).toEqual(["fatal=0", "parse=0", "error=0", "warning=0", "notice=2"]);
    expect(severities({ warning: 1, other: 3, deprecated: 4 })).toEqual([
      "fatal=0",
      "parse=0",
      "error=0",
      "warning=1",
      "deprecated=4",
      "other=3",
    ]);
  });

  it("a severity of another release is published after them", () => {
    expect(published({ alert: 1 }, true, true).at(-1)).toBe(
      'sitehost_site_php_log_entries_total{"severity":"alert"} 1',
    );
  });
});

describe("the published histogram", () => {
  const site = { id: 3, name: "shop" };
  const counts = () => countsOf([entry(0.02), entry(0.7), entry(0.001, 200, "HIT", 4)]);

  it("passes promtool check metrics, with every bucket of a cache state", () => {
    const store = new MetricStore(METRIC_FAMILIES);
    new LogCounts(store).update(site, "server", counts());
    const text = store.render();
    expect(text).toContain("# TYPE sitehost_site_http_request_duration_seconds histogram");
    expect(text).toContain(
      'sitehost_site_http_request_duration_seconds_bucket{site_id="3",site="shop",cached="false",le="1"} 2',
    );
    expect(text).toContain(
      'sitehost_site_http_request_duration_seconds_count{site_id="3",site="shop",cached="true"} 1',
    );
    expect(text.match(/_bucket\{/g)).toHaveLength(2 * (DURATION_BUCKETS.length + 1));
    const out = execFileSync("/usr/bin/promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    expect(out).not.toMatch(/error/i);
  });

  it("metrics.exclude drops it; the status counts stay", () => {
    const store = new MetricStore(METRIC_FAMILIES, {
      exclude: ["sitehost_site_http_request_duration_seconds"],
    });
    new LogCounts(store).update(site, "server", counts());
    const text = store.render();
    expect(text).not.toContain("duration_seconds");
    expect(text).toContain("sitehost_site_http_responses_total");
  });

  it("a rename moves every histogram line to the new name", () => {
    const store = new MetricStore(METRIC_FAMILIES);
    const logCounts = new LogCounts(store);
    logCounts.update(site, "server", counts());
    logCounts.rename({ id: 3, name: "boutique" });
    const text = store.render();
    expect(text).not.toContain('site="shop"');
    expect(text.match(/site="boutique"/g)?.length).toBeGreaterThan(2 * (DURATION_BUCKETS.length + 3));
  });
});

/** One shipped page of these entries, as the pipeline prepares it (fingerprint `fp<i>`, time i s). */
describe("exemplars", () => {
  it("are written as renderExemplar writes the record's uid, for any fingerprint, occurrence, value and time", () => {
    let seed = 7;
    const random = () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32;
    for (let round = 0; round < 200; round++) {
      const hexFp = Array.from(
        { length: 32 },
        () => "0123456789abcdef"[Math.floor(random() * (round % 3 ? 16 : 2))],
      ).join("");
      const fp = round % 10 === 9 ? `legacy-${round}` : hexFp;
      const duration = round % 4 === 0 ? Math.floor(random() * 40) : random() * 40;
      const page = shippedPage([entry(duration, round % 5 ? 200 : 503)]);
      page.fingerprints = [fp];
      page.occurrences = Uint32Array.of(Math.floor(random() * 5));
      page.times = Float64Array.of(1_700_000_000_000 + random() * 1e9);
      const recent = new RecentRecords(FULL_HISTOGRAM);
      recent.take([page]);
      const siteId = round % 7 === 0 ? 0 : Math.floor(random() * 1e6);
      for (const key of [`d|false|${BUCKET_LE[bucketIndex(duration)]}`, "5xx|false"]) {
        const expected = recent.get(key);
        const written = writtenText((out) =>
          recent.writeExemplar(out, FULL_HISTOGRAM.exemplarSlot(key), siteId),
        );
        const uid = expected && recordUid(siteId, "server", expected.fingerprint, expected.occurrence);
        expect(written).toBe(
          expected
            ? renderExemplar({
                labels: { log_record_uid: uid as string },
                value: expected.value,
                timestampMs: expected.timeMs,
              })
            : "",
        );
        if (expected) expect(expected.fingerprint).toBe(fp);
      }
    }
  });

  const site = { id: 3, name: "shop" };
  const bucket = (le: string, cached = "false") =>
    `sitehost_site_http_request_duration_seconds_bucket{site_id="3",site="shop",cached="${cached}",le="${le}"}`;
  const older = [entry(0.3), entry(0.02, 503), entry(0.4)];
  const newer = [entry(0.02), entry(2, 502), entry(0.001, 200, "HIT")];

  function published(exemplars: boolean) {
    const store = new MetricStore(METRIC_FAMILIES);
    const logCounts = new LogCounts(store, { histogram: FULL_HISTOGRAM, exemplars });
    const all = [...older, ...newer];
    logCounts.update(site, "server", countsOf(all), [shippedPage(older), shippedPage(newer, 3)]);
    return store;
  }

  it("each bucket and 5xx count names the newest shipped record it counted, in OpenMetrics only", () => {
    const store = published(true);
    const om = store.render("openmetrics");
    // 0.4 s (record 2) is the newest in le=0.5; 2 s (record 4) the newest 5xx, in le=2.5.
    expect(om).toContain(`${bucket("0.5")} 4 # {log_record_uid="3-server-fp2-0"} 0.4 2.000\n`);
    expect(om).toContain(`${bucket("2.5")} 5 # {log_record_uid="3-server-fp4-0"} 2 4.000\n`);
    expect(om).toContain(`${bucket("0.025")} 2 # {log_record_uid="3-server-fp3-0"} 0.02 3.000\n`);
    expect(om).toContain(`${bucket("0.005", "true")} 1 # {log_record_uid="3-server-fp5-0"} 0.001 5.000\n`);
    expect(om).toContain(
      'sitehost_site_http_responses_total{site_id="3",site="shop",status_class="5xx",cached="false"} 2 # {log_record_uid="3-server-fp4-0"} 1 4.000\n',
    );
    // No exemplar where nothing fell: le=1 holds no record of its own.
    expect(om).toContain(`${bucket("1")} 4\n`);
    expect(om).toContain('status_class="2xx",cached="false"} 3\n');
    expect(store.render("text")).not.toContain("log_record_uid");
  });

  it("names a record by its whole fingerprint, leading zeros included", () => {
    const store = new MetricStore(METRIC_FAMILIES);
    const logCounts = new LogCounts(store, { histogram: FULL_HISTOGRAM, exemplars: true });
    const page = shippedPage([entry(0.3), entry(2, 503)]);
    page.fingerprints = ["00000000ffffffff0000000a9b8c7d6e", "0123456789abcdef0123456789abcdef"];
    logCounts.update(site, "server", countsOf([entry(0.3), entry(2, 503)]), [page]);
    const om = store.render("openmetrics");
    expect(om).toContain(
      `${bucket("0.5")} 1 # {log_record_uid="3-server-00000000ffffffff0000000a9b8c7d6e-0"} 0.3`,
    );
    expect(om).toContain(
      'cached="false"} 1 # {log_record_uid="3-server-0123456789abcdef0123456789abcdef-0"} 1',
    );
  });

  it("a later export's records replace older exemplars; metrics.exemplars: false shows none", () => {
    const store = new MetricStore(METRIC_FAMILIES);
    const logCounts = new LogCounts(store, { histogram: FULL_HISTOGRAM, exemplars: true });
    logCounts.update(site, "server", countsOf(older), [shippedPage(older)]);
    expect(store.render("openmetrics")).toContain('log_record_uid="3-server-fp2-0"} 0.4');
    logCounts.update(site, "server", countsOf([...older, entry(0.45)]), [shippedPage([entry(0.45)], 9)]);
    expect(store.render("openmetrics")).toContain(
      `${bucket("0.5")} 4 # {log_record_uid="3-server-fp9-0"} 0.45 9.000\n`,
    );
    expect(published(false).render("openmetrics")).not.toContain("log_record_uid");
  });
});

describe("publishing the counts", () => {
  const site = { id: 3, name: "shop" };
  const responses = (text: string) =>
    /sitehost_site_http_responses_total\{site_id="3",site="shop",status_class="2xx",cached="false"\} (\d+)/.exec(
      text,
    )?.[1];

  it("a burst of exports renders the site's series once, when the store is next read, with the newest counts", () => {
    const store = new MetricStore(METRIC_FAMILIES);
    const replaced = vi.spyOn(store, "replaceSite");
    const logCounts = new LogCounts(store, { histogram: FULL_HISTOGRAM, exemplars: true });
    const shipped: ServerLogEntry[] = [];
    for (let i = 0; i < 50; i++) {
      shipped.push(entry(0.1));
      logCounts.update(site, "server", countsOf(shipped), [shippedPage([entry(0.1)], i)]);
    }
    expect(replaced).not.toHaveBeenCalled();
    expect(responses(store.render())).toBe("50");
    expect(replaced).toHaveBeenCalledTimes(1);
    store.render("openmetrics");
    expect(replaced).toHaveBeenCalledTimes(1);
  });

  it("a scrape through the cached exposition sees counts that moved since the last one", async () => {
    const store = new MetricStore(METRIC_FAMILIES);
    const exposition = new Exposition(store, new Registry(), 60_000);
    const logCounts = new LogCounts(store, { histogram: FULL_HISTOGRAM, exemplars: false });
    logCounts.update(site, "server", countsOf([entry(0.1)]));
    const first = (await exposition.current()).body.toString();
    expect(responses(first)).toBe("1");
    // Nothing moved: the cached body, not a new render.
    expect((await exposition.current()).body.toString()).toBe(first);
    expect(exposition.renders).toBe(1);
    logCounts.update(site, "server", countsOf([entry(0.1), entry(0.2)]));
    const second = (await exposition.current()).body.toString();
    expect(responses(second)).toBe("2");
  });

  it("a removed site's series go at once, and nothing held back for it comes back", () => {
    const store = new MetricStore(METRIC_FAMILIES);
    const logCounts = new LogCounts(store, { histogram: FULL_HISTOGRAM, exemplars: false });
    logCounts.update(site, "server", countsOf([entry(0.1)]));
    expect(responses(store.render())).toBe("1");
    logCounts.update(site, "server", countsOf([entry(0.1), entry(0.2)]));
    logCounts.remove(site.id);
    expect(store.render()).not.toContain('site_id="3"');
  });
});

describe("a spooled page", () => {
  it("reads back as the same page: records, fingerprints, occurrences, times, counter keys and increments", () => {
    const page = shippedPage([entry(0.3, 200, "MISS", 512), entry("x", 503), entry(31, 200, "HIT")], 4);
    page.occurrences[1] = 2;
    page.bytes = Buffer.from("abcdef");
    page.ends = Uint32Array.from([2, 3, 6]);
    const frame = Buffer.concat([Buffer.from("pad"), ...serializePage(page)]).subarray(3);
    const back = deserializePage(frame);
    expect({ ...back, bytes: back.bytes.toString() }).toEqual({ ...page, bytes: "abcdef" });
    expect(addCounts([back])).toEqual(addCounts([page]));
    const plain = deserializePage(
      Buffer.concat(serializePage({ ...page, counts: undefined } as PreparedPage)),
    );
    expect(plain.counts).toBeUndefined();
    expect([...plain.times]).toEqual([4000, 5000, 6000]);
  });

  it("written by another release (its own key names, a bucket bound this one lacks) counts under those names", () => {
    const page = shippedPage([entry(0.3), entry(0.4, 503), entry(0.02)]);
    const [head, ...rest] = serializePage(page);
    const headerLength = (head as Buffer).readUInt32LE(0);
    const header = JSON.parse((head as Buffer).subarray(4, 4 + headerLength).toString()) as [
      string[],
      [number, string[]],
    ];
    // The other release named the 0.5 s bucket 0.3 s and listed its keys in another order.
    const [slots, dictionary] = header[1];
    const renamed = dictionary.map((k) => (k === "d|false|0.5" ? "d|false|0.3" : k));
    header[1] = [slots, renamed];
    const json = Buffer.from(JSON.stringify(header));
    const length = Buffer.alloc(4);
    length.writeUInt32LE(json.length);
    const frame = Buffer.concat([length, json, (head as Buffer).subarray(4 + headerLength), ...rest]);
    const counts = addCounts([deserializePage(frame)]);
    expect(counts["d|false|0.3"]).toBe(2);
    expect(counts["d|false|0.5"]).toBeUndefined();
    expect(counts["d|false|0.025"]).toBe(1);
    expect(counts["5xx|false"]).toBe(1);
    expect(counts["2xx|false"]).toBe(2);
  });
});

describe("counts published again at every read of the store", () => {
  const site = { id: 3, name: "shop" };

  /** The checkpoint's counts object, which the pipeline adds to in place. */
  function addInto(counts: Record<string, number>, entries: ServerLogEntry[]): void {
    for (const [key, n] of Object.entries(countsOf(entries))) counts[key] = (counts[key] ?? 0) + n;
  }

  /** A store given the same counts and pages afresh, in one publication. */
  function fresh(counts: Record<string, number>, pages: PreparedPage[], php?: Record<string, number>) {
    const store = new MetricStore(METRIC_FAMILIES);
    const logCounts = new LogCounts(store, { histogram: FULL_HISTOGRAM, exemplars: true });
    logCounts.update(site, "server", { ...counts }, pages);
    if (php) logCounts.update(site, "php", { ...php });
    return store;
  }

  it("writes new values and exemplars in place while the series stay, in full when they change", () => {
    const store = new MetricStore(METRIC_FAMILIES);
    const replaced = vi.spyOn(store, "replaceSite");
    const logCounts = new LogCounts(store, { histogram: FULL_HISTOGRAM, exemplars: true });
    const counts: Record<string, number> = {};
    const php: Record<string, number> = { warning: 1 };
    const pages: PreparedPage[] = [];
    const step = (entries: ServerLogEntry[]) => {
      addInto(counts, entries);
      const page = shippedPage(entries, pages.length * 10);
      pages.push(page);
      logCounts.update(site, "server", counts, [page]);
    };
    const same = () => {
      for (const format of ["text", "openmetrics"] as const)
        expect(store.render(format)).toBe(fresh(counts, pages, php).render(format));
    };

    step([entry(0.3), entry(0.02, 503)]);
    logCounts.update(site, "php", php);
    same();
    expect(replaced).toHaveBeenCalledTimes(1);

    // New values of the same series, newer records behind some exemplars, a PHP count moved.
    step([entry(0.31), entry(0.021, 502), entry(0.4)]);
    php.warning = 4;
    logCounts.update(site, "php", php);
    same();
    expect(replaced).toHaveBeenCalledTimes(1);

    // New series (the first cache hit brings the cached="true" set): published in full.
    step([entry(0.001, 200, "HIT", 10)]);
    php.fatal = 1;
    logCounts.update(site, "php", php);
    same();
    expect(replaced).toHaveBeenCalledTimes(2);

    // And in place again after it.
    step([entry(0.002, 200, "HIT", 10)]);
    same();
    expect(replaced).toHaveBeenCalledTimes(2);

    // New counter keys that add no series (a first entry in another duration bucket, whose line is
    // published from the histogram's start; a first 4xx and a first PHP parse error, published at 0
    // since their stream's first count): in place too.
    const keys = Object.keys(counts).length;
    step([entry(7.5), entry(0.0001), entry(0.3, 404)]);
    expect(Object.keys(counts).length).toBe(keys + 3);
    php.parse = 2;
    logCounts.update(site, "php", php);
    same();
    expect(replaced).toHaveBeenCalledTimes(2);

    // A new key that adds a series (the first 1xx) is published in full, and the lines line up.
    step([entry(0.3, 101)]);
    same();
    expect(replaced).toHaveBeenCalledTimes(3);

    // So does a series that takes its place among the others: a first 4xx of a cache hit (between
    // 2xx and 5xx), a first PHP notice (between warning and deprecated).
    step([entry(0.002, 404, "HIT")]);
    php.notice = 1;
    logCounts.update(site, "php", php);
    same();
    expect(store.render()).toContain('status_class="4xx",cached="true"} 1\n');
    expect(store.render()).toContain('severity="notice"} 1\n');
    expect(replaced).toHaveBeenCalledTimes(4);
  });

  it("with a family excluded, publishes in full each time (the stored lines are fewer than the series)", () => {
    const exclude = ["sitehost_site_http_request_duration_seconds"];
    const store = new MetricStore(METRIC_FAMILIES, { exclude });
    const replaced = vi.spyOn(store, "replaceSite");
    const logCounts = new LogCounts(store);
    const counts = countsOf([entry(0.3), entry(0.02, 503)]);
    for (let i = 1; i <= 3; i++) {
      counts["2xx|false"] = (counts["2xx|false"] ?? 0) + 1;
      logCounts.update(site, "server", counts);
      const text = store.render();
      expect(text).toContain(`status_class="2xx",cached="false"} ${1 + i}\n`);
      expect(text).not.toContain("duration_seconds");
      expect(replaced).toHaveBeenCalledTimes(i);
    }
  });

  it("the store refuses an in-place update it cannot line up, and changes nothing", () => {
    const store = new MetricStore(METRIC_FAMILIES);
    expect(store.updateSiteValues("logs", "3", [1, 2, 3])).toBe(false);
    new LogCounts(store).update(site, "server", countsOf([entry(0.3)]));
    const before = store.render("openmetrics");
    const version = store.version;
    expect(store.updateSiteValues("logs", "3", [1, 2, 3])).toBe(false);
    expect(store.render("openmetrics")).toBe(before);
    expect(store.version).toBe(version);
  });
});
