/**
 * The log pipeline with an injected in-memory OTLP exporter: log-derived counters in the MetricStore,
 * their restoration from checkpoints across restarts, lag series, logs.ship false and shutdown.
 * Expected counts are worked out by hand from the entries each test writes.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import type { LogRecordExporter, ReadableLogRecord } from "@opentelemetry/sdk-logs";
import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type {
  ScrollStream as LogStream,
  PhpLogEntry,
  ServerLogEntry,
  Site,
} from "../../../src/api/schemas.js";
import type { LogPageRef, SitehostApi } from "../../../src/api/types.js";
import { ConfigSchema } from "../../../src/config/schema.js";
import { LogPipeline } from "../../../src/logs/pipeline.js";
import type { LogScope } from "../../../src/logs/resource.js";
import { METRIC_FAMILIES } from "../../../src/metrics/families.js";
import { MetricStore } from "../../../src/metrics/store.js";
import { FakeLogApi, silent } from "./fakes.js";
import { fakeApi } from "../../helpers/fakeApi.js";
import { waitFor } from "../../helpers/wait.js";

class MemoryExporter implements LogRecordExporter {
  readonly records: ReadableLogRecord[] = [];
  failing = false;
  attempts = 0;
  shutdownCalled = false;
  export(records: ReadableLogRecord[], done: (r: ExportResult) => void): void {
    this.attempts += 1;
    if (this.failing) {
      setImmediate(() => done({ code: ExportResultCode.FAILED, error: new Error("collector refused: 503") }));
      return;
    }
    this.records.push(...records);
    setImmediate(() => done({ code: ExportResultCode.SUCCESS }));
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    this.shutdownCalled = true;
    return Promise.resolve();
  }
}

const T0 = Math.floor(Date.now() / 1000) - 600; // ten minutes ago, whole seconds
const SITE = { id: 7, name: "shop" } as unknown as Site;

function server(second: number, status: number, cached: string): ServerLogEntry {
  return { timestamp: T0 + second, request_type: "GET", request_url: `/p${second}`, status, cached };
}
function php(second: number, severity: string): PhpLogEntry {
  return {
    timestamp: new Date((T0 + second) * 1000).toISOString(),
    severity,
    message: `${severity} ${second}`,
  };
}

/** One FakeLogApi per stream behind one SitehostApi. */
function twoStreams(): { api: SitehostApi; streams: Record<LogStream, FakeLogApi> } {
  const streams = { server: new FakeLogApi(), php: new FakeLogApi() };
  const empty = async () => ({ items: [], rejected: 0 });
  const api = fakeApi({
    phpLogs: (ref: LogPageRef) => streams.php.page(ref.scrollId) as ReturnType<SitehostApi["phpLogs"]>,
    serverLogs: (ref: LogPageRef) =>
      streams.server.page(ref.scrollId) as ReturnType<SitehostApi["serverLogs"]>,
    accountActivity: empty,
    siteActivity: empty,
  });
  return { api, streams };
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "pipeline-test-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function pipeline(
  api: SitehostApi,
  exporter: LogRecordExporter,
  ship = true,
  shard = { index: 0, count: 1 },
  logs: Record<string, unknown> = {},
  env: NodeJS.ProcessEnv = {},
) {
  const config = ConfigSchema.parse({
    sites: { shard },
    logs: {
      checkpointDir: join(dir, "cp"),
      pollInterval: "50ms",
      startFrom: "-1h",
      shutdownTimeout: "1s",
      maxExportBackoff: "100ms",
      ship,
      ...logs,
    },
  });
  const registry = new Registry();
  const store = new MetricStore(METRIC_FAMILIES);
  const p = new LogPipeline({ config, api, registry, logger: silent, store, exporter, env });
  return { p, registry, store };
}

/** The value of one sample line of the store's exposition, found by its labels in any order. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) {
      return Number(line.slice(line.lastIndexOf(" ") + 1));
    }
  }
  return undefined;
}

async function metricValue(registry: Registry, name: string, labels: Record<string, string>) {
  const m = await registry.getSingleMetric(name)?.get();
  return m?.values.find((v) => Object.entries(labels).every(([k, val]) => String(v.labels[k]) === val))
    ?.value;
}

function write(streams: Record<LogStream, FakeLogApi>): void {
  // server: 2xx miss, 2xx hit, 2xx miss, 5xx miss, 4xx miss → 2xx|false 2, 2xx|true 1, 5xx|false 1, 4xx|false 1
  streams.server.append(
    server(0, 200, "MISS"),
    server(1, 200, "HIT"),
    server(2, 204, "MISS"),
    server(3, 503, "MISS"),
    server(4, 404, "MISS"),
  );
  // php: fatal 1, warning 2
  streams.php.append(php(0, "Fatal error"), php(1, "Warning"), php(2, "Warning"));
}

describe("LogPipeline", () => {
  it.each([
    { index: 0, reads: true },
    { index: 1, reads: false },
  ])("shard $index of 2 reads the account's activity log: $reads", async ({ index, reads }) => {
    let accountReads = 0;
    let siteReads = 0;
    const api = fakeApi({
      phpLogs: async () => ({ items: [], rejected: 0, rawCount: 0, totalResults: 0, scrollId: null }),
      serverLogs: async () => ({ items: [], rejected: 0, rawCount: 0, totalResults: 0, scrollId: null }),
      accountActivity: async () => {
        accountReads += 1;
        return { items: [], rejected: 0 };
      },
      siteActivity: async () => {
        siteReads += 1;
        return { items: [], rejected: 0 };
      },
    } as unknown as Partial<SitehostApi>);
    const { p } = pipeline(api, new MemoryExporter(), true, { index, count: 2 });
    await p.start();
    p.updateSites([SITE]);
    // Every stream's first read starts within one poll interval: once the site's activity log has
    // been read twice, the account's would have been read too.
    await waitFor("two reads of the site's activity log", () => siteReads >= 2, { timeoutMs: 5000 });
    await p.stop();
    expect(accountReads > 0).toBe(reads);
  });

  it("a renamed site's records, counters and stream series carry the new name", async () => {
    const { api, streams } = twoStreams();
    write(streams);
    const exporter = new MemoryExporter();
    const { p, store, registry } = pipeline(api, exporter);
    await p.start();
    p.updateSites([SITE]);
    await vi.waitFor(() => expect(exporter.records).toHaveLength(8), { timeout: 10_000, interval: 20 });
    p.updateSites([{ ...SITE, name: "boutique" } as unknown as Site]);
    streams.server.append(server(5, 200, "MISS"));
    await vi.waitFor(() => expect(exporter.records).toHaveLength(9), { timeout: 10_000, interval: 20 });
    // Read before the stop: a stopped pipeline's stream series go with it.
    await vi.waitFor(
      async () => {
        const lastRead = await registry
          .getSingleMetric("sitehost_exporter_log_last_read_timestamp_seconds")
          ?.get();
        const ofSite = lastRead?.values.filter((v) => v.labels.site_id === "7") ?? [];
        expect(ofSite.map((v) => `${v.labels.stream}:${v.labels.site}`).sort()).toEqual([
          "activity:boutique",
          "php:boutique",
          "server:boutique",
        ]);
      },
      { timeout: 10_000, interval: 20 },
    );
    await p.stop();
    expect(exporter.records[8]?.attributes["sitehost.site.name"]).toBe("boutique");
    expect(exporter.records[8]?.resource.attributes["service.name"]).toBe("boutique");
    expect(exporter.records[0]?.resource.attributes["service.name"]).toBe("shop");
    const text = store.render();
    const renamed = { site_id: "7", site: "boutique", status_class: "2xx", cached: "false" };
    expect(sample(text, "sitehost_site_http_responses_total", renamed)).toBe(3);
    expect(text).not.toContain('site="shop"');
  });

  it("ships records, publishes log-derived counters and restores them after a restart", async () => {
    const { api, streams } = twoStreams();
    write(streams);
    const exporter = new MemoryExporter();
    const first = pipeline(api, exporter);
    await first.p.start();
    first.p.updateSites([SITE]);
    await vi.waitFor(() => expect(exporter.records).toHaveLength(8), { timeout: 10_000, interval: 20 });

    const uids = exporter.records.map((r) => r.attributes["log.record.uid"] as string);
    expect(new Set(uids).size).toBe(8);
    const rec503 = exporter.records.find((r) => r.attributes["http.response.status_code"] === 503);
    expect(rec503?.attributes["sitehost.site.id"]).toBe("7");
    expect(rec503?.attributes["sitehost.site.name"]).toBe("shop");
    expect(rec503?.attributes["sitehost.log.stream"]).toBe("server");
    expect(rec503?.severityNumber).toBe(17);
    expect(rec503?.hrTime).toEqual([T0 + 3, 0]);
    // Each site is a service of its own; the exporter is the scope and the telemetry distribution.
    expect(rec503?.resource.attributes).toMatchObject({
      "service.name": "shop",
      "service.namespace": "sitehost",
      "service.instance.id": "7",
      "sitehost.site.id": "7",
      "cloud.provider": "sitehost",
      "telemetry.distro.name": "sitehost-exporter",
    });
    expect(rec503?.instrumentationScope.name).toBe("sitehost-exporter");

    await vi.waitFor(() => {
      const text = first.store.render();
      const l = { site_id: "7", site: "shop" };
      expect(
        sample(text, "sitehost_site_http_responses_total", { ...l, status_class: "2xx", cached: "false" }),
      ).toBe(2);
      expect(
        sample(text, "sitehost_site_http_responses_total", { ...l, status_class: "2xx", cached: "true" }),
      ).toBe(1);
      expect(
        sample(text, "sitehost_site_http_responses_total", { ...l, status_class: "5xx", cached: "false" }),
      ).toBe(1);
      expect(
        sample(text, "sitehost_site_http_responses_total", { ...l, status_class: "4xx", cached: "false" }),
      ).toBe(1);
      expect(sample(text, "sitehost_site_php_log_entries_total", { ...l, severity: "fatal" })).toBe(1);
      expect(sample(text, "sitehost_site_php_log_entries_total", { ...l, severity: "warning" })).toBe(2);
    });
    expect(
      await metricValue(first.registry, "sitehost_exporter_log_records_shipped_total", { stream: "server" }),
    ).toBe(5);
    expect(
      await metricValue(first.registry, "sitehost_exporter_log_records_shipped_total", { stream: "php" }),
    ).toBe(3);
    const lag = await metricValue(first.registry, "sitehost_exporter_log_lag_seconds", {
      site_id: "7",
      site: "shop",
      stream: "server",
    });
    expect(lag).toBeGreaterThan(0);
    await first.p.stop();
    expect(exporter.shutdownCalled).toBe(true);

    // Restart: a new pipeline on the same checkpoints. One more 2xx miss arrives.
    streams.server.append(server(5, 200, "MISS"));
    const exporter2 = new MemoryExporter();
    const second = pipeline(api, exporter2);
    await second.p.start();
    second.p.updateSites([SITE]);
    await vi.waitFor(() => expect(exporter2.records).toHaveLength(1), { timeout: 10_000, interval: 20 });
    await vi.waitFor(() => {
      const text = second.store.render();
      const l = { site_id: "7", site: "shop" };
      // restored 2 + 1 new = 3; the others are restored unchanged
      expect(
        sample(text, "sitehost_site_http_responses_total", { ...l, status_class: "2xx", cached: "false" }),
      ).toBe(3);
      expect(
        sample(text, "sitehost_site_http_responses_total", { ...l, status_class: "5xx", cached: "false" }),
      ).toBe(1);
      expect(sample(text, "sitehost_site_php_log_entries_total", { ...l, severity: "warning" })).toBe(2);
    });
    // Nothing was shipped twice: the replayed entries were deduplicated.
    expect((exporter2.records[0]?.attributes["url.path"] as string) ?? "").toBe("/p5");
    await second.p.stop();
  });

  it("the duration histogram and response bytes resume from the checkpoints after a restart", async () => {
    const { api, streams } = twoStreams();
    const timed = (second: number, requestTime: number, bytes: number): ServerLogEntry => ({
      ...server(second, 200, "MISS"),
      request_time: requestTime,
      body_bytes_sent: bytes,
    });
    streams.server.append(timed(0, 0.02, 100), timed(1, 0.3, 200), timed(2, 1.7, 300));
    const l = { site_id: "7", site: "shop", cached: "false" };
    const duration = "sitehost_site_http_request_duration_seconds";
    const first = pipeline(api, new MemoryExporter());
    await first.p.start();
    first.p.updateSites([SITE]);
    await vi.waitFor(() => expect(sample(first.store.render(), `${duration}_count`, l)).toBe(3), {
      timeout: 10_000,
      interval: 20,
    });
    await first.p.stop();

    streams.server.append(timed(3, 0.4, 50));
    const second = pipeline(api, new MemoryExporter());
    await second.p.start();
    second.p.updateSites([SITE]);
    await vi.waitFor(() => expect(sample(second.store.render(), `${duration}_count`, l)).toBe(4), {
      timeout: 10_000,
      interval: 20,
    });
    const text = second.store.render();
    // The published bounds (0.1 s and up by default): 0.02 → le 0.1; 0.3 and 0.4 → le 0.5; 1.7 → le 2.5
    expect(sample(text, `${duration}_bucket`, { ...l, le: "0.025" })).toBeUndefined();
    expect(sample(text, `${duration}_bucket`, { ...l, le: "0.1" })).toBe(1);
    expect(sample(text, `${duration}_bucket`, { ...l, le: "0.25" })).toBe(1);
    expect(sample(text, `${duration}_bucket`, { ...l, le: "0.5" })).toBe(3);
    expect(sample(text, `${duration}_bucket`, { ...l, le: "2.5" })).toBe(4);
    expect(sample(text, `${duration}_sum`, l)).toBeCloseTo(2.42, 9);
    expect(sample(text, "sitehost_site_http_response_size_bytes_total", l)).toBe(650);
    await second.p.stop();
  });

  it("a platform sending milliseconds: the first page's values decide, none of them counted in seconds; the decision is counted", async () => {
    const { api, streams } = twoStreams();
    const timed = (second: number, ms: number): ServerLogEntry => ({
      ...server(second, 200, "MISS"),
      request_time: ms,
    });
    // 45 ms first: a rule that waits for a whole number too large for seconds read it as 45 s.
    streams.server.append(timed(0, 45), timed(1, 20), timed(2, 300));
    const l = { site_id: "7", site: "shop", cached: "false" };
    const duration = "sitehost_site_http_request_duration_seconds";
    const { p, store, registry } = pipeline(api, new MemoryExporter());
    await p.start();
    p.updateSites([SITE]);
    await vi.waitFor(() => expect(sample(store.render(), `${duration}_count`, l)).toBe(3), {
      timeout: 10_000,
      interval: 20,
    });
    const text = store.render();
    expect(sample(text, `${duration}_sum`, l)).toBeCloseTo(0.365, 9);
    expect(sample(text, `${duration}_bucket`, { ...l, le: "0.5" })).toBe(3);
    const self = await registry.metrics();
    expect(self).toContain('sitehost_exporter_log_request_time_units_total{unit="milliseconds"} 1');
    expect(self).toContain('sitehost_exporter_log_request_time_units_total{unit="seconds"} 0');
    await p.stop();
  });

  it("each site's records carry its resource, the account's its own; OTEL_RESOURCE_ATTRIBUTES adds to both; resourcePerSite false keeps the exporter's", async () => {
    const records = async (logs: Record<string, unknown>) => {
      const { api, streams } = twoStreams();
      streams.server.append(server(0, 200, "MISS"));
      const accountEntry = {
        id: 1,
        name: "user_login",
        message: "login",
        timestamp: T0,
      };
      const apiWithActivity = {
        ...api,
        accountActivity: async () => ({ items: [accountEntry], rejected: 0 }),
      };
      const exporter = new MemoryExporter();
      const env = {
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=prod,service.name=ignored",
        SITEHOST_LOG_SCOPE_ATTRIBUTES: "k8s.pod.name=exporter-0",
      };
      const { p } = pipeline(
        apiWithActivity as unknown as SitehostApi,
        exporter,
        true,
        { index: 0, count: 1 },
        logs,
        env,
      );
      await p.start();
      p.updateSites([
        { ...SITE, datacenterCode: "eu-west", accountId: 42, staging: true } as unknown as Site,
      ]);
      await vi.waitFor(() => expect(exporter.records.length).toBeGreaterThanOrEqual(2), {
        timeout: 10_000,
        interval: 20,
      });
      await p.stop();
      return exporter.records;
    };
    const perSite = await records({ streams: ["server", "activity"] });
    const site = perSite.find((r) => r.attributes["sitehost.log.stream"] === "server");
    expect(site?.resource.attributes).toMatchObject({
      "service.name": "shop",
      "service.namespace": "sitehost",
      "cloud.region": "eu-west",
      "cloud.account.id": "42",
      "sitehost.site.kind": "staging",
      "deployment.environment.name": "prod",
    });
    const account = perSite.find((r) => r.attributes["sitehost.site.id"] === undefined);
    expect(account?.resource.attributes).toMatchObject({
      "service.name": "sitehost-account",
      "cloud.account.id": "42",
      "deployment.environment.name": "prod",
    });
    expect(account?.resource.attributes["sitehost.site.id"]).toBeUndefined();
    // The pod is the scope's, on every record, never a resource's (Loki would index it).
    for (const r of perSite) {
      expect((r.instrumentationScope as LogScope).attributes).toEqual({ "k8s.pod.name": "exporter-0" });
      expect(r.resource.attributes["k8s.pod.name"]).toBeUndefined();
    }

    const single = await records({
      streams: ["server", "activity"],
      resourcePerSite: false,
      checkpointDir: join(dir, "single"),
    });
    for (const r of single) {
      expect(r.resource.attributes["service.name"]).toBe("ignored");
      expect((r.instrumentationScope as LogScope).attributes).toEqual({ "k8s.pod.name": "exporter-0" });
    }
  });

  it("sites given before start() are read once it has started", async () => {
    const { api, streams } = twoStreams();
    write(streams);
    const exporter = new MemoryExporter();
    const { p } = pipeline(api, exporter);
    p.updateSites([SITE]);
    await p.start();
    await vi.waitFor(() => expect(exporter.records).toHaveLength(8), { timeout: 10_000, interval: 20 });
    await p.stop();
  });

  it("updateSites without a site removes its lag series", async () => {
    const { api, streams } = twoStreams();
    write(streams);
    const exporter = new MemoryExporter();
    const { p, registry } = pipeline(api, exporter);
    await p.start();
    p.updateSites([SITE]);
    await vi.waitFor(
      async () =>
        expect(
          await metricValue(registry, "sitehost_exporter_log_lag_seconds", { site_id: "7", stream: "php" }),
        ).toBeDefined(),
      { timeout: 10_000, interval: 20 },
    );
    p.updateSites([]);
    const lag = await registry.getSingleMetric("sitehost_exporter_log_lag_seconds")?.get();
    expect(lag?.values.filter((v) => v.labels.site_id === "7")).toEqual([]);
    await p.stop();
  });

  it("a pipeline started after another stopped on the same registry publishes each stream's series once", async () => {
    const { api, streams } = twoStreams();
    write(streams);
    const { p, registry } = pipeline(api, new MemoryExporter());
    const lagOf7 = async () =>
      ((await registry.getSingleMetric("sitehost_exporter_log_lag_seconds")?.get())?.values ?? []).filter(
        (v) => v.labels.site_id === "7" && v.labels.stream === "php",
      );
    await p.start();
    p.updateSites([SITE]);
    await vi.waitFor(async () => expect(await lagOf7()).toHaveLength(1), { timeout: 10_000, interval: 20 });
    await p.stop();
    expect(await lagOf7()).toEqual([]);
    // As after a lost and regained checkpoint lock: a new pipeline, the same registry.
    const config = ConfigSchema.parse({
      logs: { checkpointDir: join(dir, "cp"), pollInterval: "50ms", startFrom: "-1h", shutdownTimeout: "1s" },
    });
    const store = new MetricStore(METRIC_FAMILIES);
    const again = new LogPipeline({
      config,
      api,
      registry,
      logger: silent,
      store,
      exporter: new MemoryExporter(),
    });
    await again.start();
    again.updateSites([SITE]);
    await vi.waitFor(async () => expect(await lagOf7()).toHaveLength(1), { timeout: 10_000, interval: 20 });
    await again.stop();
  });

  it("with logs.ship false counts without exporting", async () => {
    const { api, streams } = twoStreams();
    write(streams);
    const exporter = new MemoryExporter();
    const { p, registry, store } = pipeline(api, exporter, false);
    await p.start();
    p.updateSites([SITE]);
    await vi.waitFor(
      async () =>
        expect(
          await metricValue(registry, "sitehost_exporter_log_records_shipped_total", { stream: "server" }),
        ).toBe(5),
      { timeout: 10_000, interval: 20 },
    );
    expect(
      sample(store.render(), "sitehost_site_http_responses_total", { status_class: "2xx", cached: "false" }),
    ).toBe(2);
    expect(exporter.attempts).toBe(0);
    await p.stop();
  });

  it("keeps retrying while the collector refuses, then stop() returns within the shutdown deadline", async () => {
    const { api, streams } = twoStreams();
    write(streams);
    const exporter = new MemoryExporter();
    exporter.failing = true;
    const { p, registry } = pipeline(api, exporter);
    await p.start();
    p.updateSites([SITE]);
    await vi.waitFor(
      async () =>
        // Both streams' failures together: either may be the one retrying (each is exposed from 0).
        expect(
          ((await metricValue(registry, "sitehost_exporter_log_export_failures_total", {
            stream: "server",
          })) ?? 0) +
            ((await metricValue(registry, "sitehost_exporter_log_export_failures_total", {
              stream: "php",
            })) ?? 0),
        ).toBeGreaterThanOrEqual(3),
      { timeout: 10_000, interval: 20 },
    );
    expect(exporter.records).toHaveLength(0);
    await p.stop(); // resolves: the retrying export is abandoned at the 1s deadline
    expect(exporter.shutdownCalled).toBe(true);
  });
});
