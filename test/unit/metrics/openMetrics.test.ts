import { afterEach, describe, expect, it } from "vitest";
import { Counter, Registry } from "prom-client";
import { Exposition } from "../../../src/metrics/exposition.js";
import { METRIC_FAMILIES } from "../../../src/metrics/families.js";
import { negotiateFormat, renderExemplar } from "../../../src/metrics/openMetrics.js";
import type { ChunkWriter } from "../../../src/metrics/gzipMembers.js";
import type { MetricFamily, Sample } from "../../../src/metrics/sample.js";
import { MetricStore } from "../../../src/metrics/store.js";
import { startHttpServer, type RunningHttpServer } from "../../../src/server/http.js";
import { send, silentLogger, statusOf } from "../server/helpers.js";

/** What Prometheus 2.x sends by default, and Prometheus 3's default scrape_protocols. */
const PROMETHEUS_2 =
  "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
const PROMETHEUS_3 =
  "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1";

describe("negotiateFormat", () => {
  it.each([
    [undefined, "text"],
    ["", "text"],
    ["*/*", "text"],
    ["text/plain;version=0.0.4", "text"],
    [PROMETHEUS_2, "openmetrics"],
    [PROMETHEUS_3, "openmetrics"],
    ["application/openmetrics-text", "openmetrics"],
    ["Application/OpenMetrics-Text; version=0.0.1", "openmetrics"],
    // A version this exporter does not write, or not wanted at all.
    ["application/openmetrics-text;version=2.0.0", "text"],
    ["application/openmetrics-text;q=0", "text"],
    // Text preferred by quality, or equal and listed first.
    ["application/openmetrics-text;q=0.3,text/plain;q=0.5", "text"],
    ["text/plain,application/openmetrics-text", "text"],
    ["application/openmetrics-text,text/plain", "openmetrics"],
  ] as const)("Accept %j → %s", (accept, format) => {
    expect(negotiateFormat(accept)).toBe(format);
  });
});

const ERRORS: MetricFamily = {
  name: "sitehost_test_errors_total",
  help: 'Errors "seen" (test family).',
  type: "counter",
  labels: ["class"],
  perSite: true,
  collector: "logs",
  source: "logs",
};
const DURATION: MetricFamily = {
  name: "sitehost_test_duration_seconds",
  help: "Durations (test family).",
  type: "histogram",
  labels: ["le"],
  perSite: true,
  collector: "logs",
  source: "logs",
};
const SITES: MetricFamily = {
  name: "sitehost_test_sites",
  help: "Sites (test family).",
  type: "gauge",
  labels: [],
  perSite: false,
  collector: "inventory",
  source: "GET /account",
};

const site = { site_id: "7", site: "shop" };
const uid = (n: number) => ({
  labels: { log_record_uid: `7-server-abc-${n}` },
  value: 0.3,
  timestampMs: 1_700_000_000_123,
});

function siteSamples(exemplarOf = 1): Sample<string>[] {
  return [
    {
      name: "sitehost_test_errors_total",
      labels: { ...site, class: "5xx" },
      value: 2,
      exemplar: { ...uid(exemplarOf), value: 1 },
    },
    { name: "sitehost_test_duration_seconds", suffix: "_bucket", labels: { ...site, le: "0.25" }, value: 1 },
    {
      name: "sitehost_test_duration_seconds",
      suffix: "_bucket",
      labels: { ...site, le: "0.5" },
      value: 3,
      exemplar: uid(exemplarOf),
    },
    { name: "sitehost_test_duration_seconds", suffix: "_bucket", labels: { ...site, le: "+Inf" }, value: 3 },
    // Where OpenMetrics has no exemplars: left out.
    { name: "sitehost_test_duration_seconds", suffix: "_sum", labels: site, value: 0.9, exemplar: uid(9) },
    { name: "sitehost_test_duration_seconds", suffix: "_count", labels: site, value: 3 },
  ];
}

function makeStore() {
  const store = new MetricStore<string>([ERRORS, DURATION, SITES]);
  store.replaceSite("logs", "7", siteSamples());
  store.replaceGlobal("inventory", [{ name: "sitehost_test_sites", labels: {}, value: 1, exemplar: uid(8) }]);
  const registry = new Registry();
  new Counter({ name: "sitehost_test_self_total", help: "Self counter (test).", registers: [registry] }).inc(
    3,
  );
  return { store, registry, exposition: new Exposition(store as MetricStore, registry) };
}

const TEXT = [
  "# HELP sitehost_test_duration_seconds Durations (test family).",
  "# TYPE sitehost_test_duration_seconds histogram",
  'sitehost_test_duration_seconds_bucket{site_id="7",site="shop",le="0.25"} 1',
  'sitehost_test_duration_seconds_bucket{site_id="7",site="shop",le="0.5"} 3',
  'sitehost_test_duration_seconds_bucket{site_id="7",site="shop",le="+Inf"} 3',
  'sitehost_test_duration_seconds_sum{site_id="7",site="shop"} 0.9',
  'sitehost_test_duration_seconds_count{site_id="7",site="shop"} 3',
  '# HELP sitehost_test_errors_total Errors "seen" (test family).',
  "# TYPE sitehost_test_errors_total counter",
  'sitehost_test_errors_total{site_id="7",site="shop",class="5xx"} 2',
  "# HELP sitehost_test_sites Sites (test family).",
  "# TYPE sitehost_test_sites gauge",
  "sitehost_test_sites 1",
  "# HELP sitehost_test_self_total Self counter (test).",
  "# TYPE sitehost_test_self_total counter",
  "sitehost_test_self_total 3",
];

const OPENMETRICS = [
  "# HELP sitehost_test_duration_seconds Durations (test family).",
  "# TYPE sitehost_test_duration_seconds histogram",
  'sitehost_test_duration_seconds_bucket{site_id="7",site="shop",le="0.25"} 1',
  'sitehost_test_duration_seconds_bucket{site_id="7",site="shop",le="0.5"} 3 # {log_record_uid="7-server-abc-1"} 0.3 1700000000.123',
  'sitehost_test_duration_seconds_bucket{site_id="7",site="shop",le="+Inf"} 3',
  'sitehost_test_duration_seconds_sum{site_id="7",site="shop"} 0.9',
  'sitehost_test_duration_seconds_count{site_id="7",site="shop"} 3',
  '# HELP sitehost_test_errors Errors \\"seen\\" (test family).',
  "# TYPE sitehost_test_errors counter",
  'sitehost_test_errors_total{site_id="7",site="shop",class="5xx"} 2 # {log_record_uid="7-server-abc-1"} 1 1700000000.123',
  "# HELP sitehost_test_sites Sites (test family).",
  "# TYPE sitehost_test_sites gauge",
  "sitehost_test_sites 1",
  "# HELP sitehost_test_self Self counter (test).",
  "# TYPE sitehost_test_self counter",
  "sitehost_test_self_total 3",
  "# EOF",
];

let server: RunningHttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("/metrics in OpenMetrics", () => {
  it("answers Prometheus's Accept with OpenMetrics and exemplars, anything else with text format 0.0.4 unchanged", async () => {
    const { exposition } = makeStore();
    server = await startHttpServer({
      listenAddress: "127.0.0.1:0",
      telemetryPath: "/metrics",
      exposition,
      readiness: () => ({ ready: true }),
      status: () => statusOf(),
      logger: silentLogger,
    });
    const text = await send(`${server.url}/metrics`);
    expect(text.headers["content-type"]).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(text.body.toString("utf8").trimEnd().split("\n")).toEqual(TEXT);

    const om = await send(`${server.url}/metrics`, { headers: { accept: PROMETHEUS_2 } });
    expect(om.headers["content-type"]).toBe("application/openmetrics-text; version=1.0.0; charset=utf-8");
    expect(om.headers.vary).toBe("Accept, Accept-Encoding");
    expect(om.body.toString("utf8").endsWith("# EOF\n")).toBe(true);
    expect(om.body.toString("utf8").trimEnd().split("\n")).toEqual(OPENMETRICS);

    // prom-client's counters keep their names in text after an OpenMetrics scrape.
    const again = await send(`${server.url}/metrics`, { headers: { accept: "text/plain" } });
    expect(again.body.toString("utf8").trimEnd().split("\n")).toEqual(TEXT);
  });

  it("a new exemplar alone changes the OpenMetrics body, not the text", async () => {
    const { store, exposition } = makeStore();
    const text = (await exposition.current("text")).body.toString();
    const before = (await exposition.current("openmetrics")).body.toString();
    const version = store.version;
    store.replaceSite("logs", "7", siteSamples(2));
    expect(store.version).toBeGreaterThan(version);
    const after = (await exposition.current("openmetrics")).body.toString();
    expect(after).toContain('le="0.5"} 3 # {log_record_uid="7-server-abc-2"} 0.3 1700000000.123\n');
    expect(after).not.toContain("abc-1");
    expect(after.replaceAll("abc-2", "abc-1")).toBe(before);
    expect((await exposition.current("text")).body.toString()).toBe(text);
  });

  it("leaves out an exemplar whose labels pass 128 characters, and drops exemplars with their site", async () => {
    const { store } = makeStore();
    const long = { labels: { log_record_uid: "x".repeat(115) }, value: 1 };
    store.replaceSite("logs", "8", [
      {
        name: "sitehost_test_errors_total",
        labels: { site_id: "8", site: "b", class: "5xx" },
        value: 1,
        exemplar: long,
      },
    ]);
    expect(store.render("openmetrics")).toContain(
      'sitehost_test_errors_total{site_id="8",site="b",class="5xx"} 1\n',
    );
    store.removeSite("7");
    expect(store.render("openmetrics")).not.toContain("# {");
  });

  it("writes live exemplars on a counter's lines and a histogram's buckets only, and again once they moved", () => {
    const store = new MetricStore(METRIC_FAMILIES);
    let generation = 1;
    const live = (family: MetricFamily) => ({
      write: (out: ChunkWriter, line: number) =>
        out.text(` # {n="${family.name.slice(-6)}-${line}-${generation}"} 1`),
    });
    const site = { site_id: "4", site: "d" };
    const duration = "sitehost_site_http_request_duration_seconds";
    store.replaceSite(
      "logs",
      "4",
      [
        {
          name: "sitehost_site_http_responses_total",
          labels: { ...site, status_class: "5xx", cached: "false" },
          value: 2,
        },
        { name: duration, suffix: "_bucket", labels: { ...site, cached: "false", le: "0.5" }, value: 1 },
        { name: duration, suffix: "_bucket", labels: { ...site, cached: "false", le: "+Inf" }, value: 1 },
        { name: duration, suffix: "_sum", labels: { ...site, cached: "false" }, value: 0.3 },
        { name: duration, suffix: "_count", labels: { ...site, cached: "false" }, value: 1 },
        { name: "sitehost_site_storage_used_bytes", labels: { ...site, store: "db" }, value: 1 },
      ],
      (family) => live(family),
    );
    const marked = () =>
      store
        .render("openmetrics")
        .split("\n")
        .filter((l) => l.includes(" # {"));
    expect(marked()).toEqual([
      'sitehost_site_http_request_duration_seconds_bucket{site_id="4",site="d",cached="false",le="0.5"} 1 # {n="econds-0-1"} 1',
      'sitehost_site_http_request_duration_seconds_bucket{site_id="4",site="d",cached="false",le="+Inf"} 1 # {n="econds-1-1"} 1',
      'sitehost_site_http_responses_total{site_id="4",site="d",status_class="5xx",cached="false"} 2 # {n="_total-0-1"} 1',
    ]);
    expect(store.render("text")).not.toContain(" # {");
    generation = 2;
    const version = store.version;
    expect(store.updateSiteValues("logs", "4", [2, 1, 1, 0.3, 1, 1], false)).toBe(true);
    expect(store.version).toBe(version);
    expect(store.updateSiteValues("logs", "4", [2, 1, 1, 0.3, 1, 1], true)).toBe(true);
    expect(store.version).toBeGreaterThan(version);
    expect(marked().every((l) => l.endsWith('-2"} 1'))).toBe(true);
  });

  it("counts an exemplar's label characters as code points, not UTF-16 units", () => {
    // log_record_uid is 14 characters: 114 more is the most (128).
    const of = (value: string) => renderExemplar({ labels: { log_record_uid: value }, value: 1 });
    expect(of("😀".repeat(114))).toBe(` # {log_record_uid="${"😀".repeat(114)}"} 1`);
    expect(of("😀".repeat(115))).toBe("");
    expect(of(`${"é".repeat(113)}"`)).toBe(` # {log_record_uid="${"é".repeat(113)}\\""} 1`);
  });

  it("every counter family is named *_total, so OpenMetrics keeps its type", () => {
    const counters = METRIC_FAMILIES.filter((f) => f.type === "counter");
    expect(counters.length).toBeGreaterThan(5);
    expect(counters.filter((f) => !f.name.endsWith("_total")).map((f) => f.name)).toEqual([]);
  });
});
