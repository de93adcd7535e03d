/**
 * Test rig: one stream's shipper with a real checkpoint on disk, sending through a real sink to a
 * receiver on loopback, reported as the pipeline reports it (self-metrics, the OTLP endpoint's
 * health), with what the status page, /-/ready and /metrics would show.
 */
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { Registry } from "prom-client";
import { CheckpointStore, type StreamCheckpoint } from "../../../../src/logs/journal.js";
import { logMetrics } from "../../../../src/logs/metrics.js";
import { ExportHealth } from "../../../../src/logs/otlp/exportHealth.js";
import type { LogSink } from "../../../../src/logs/otlp/sink.js";
import type { PendingRecord } from "../../../../src/logs/pending.js";
import { preparePage, type PreparedPage } from "../../../../src/logs/prepared.js";
import { StreamReports } from "../../../../src/logs/reporting.js";
import { CollectorHealth, StreamShipper } from "../../../../src/logs/shipper.js";
import { readinessWithExports, type Readiness } from "../../../../src/scheduling/readiness.js";
import { logsPart } from "../../../../src/server/statusParts.js";
import type { StatusInputs, StatusReport } from "../../../../src/server/statusTypes.js";
import { ThrottledWarnings } from "../../../../src/util/throttledLog.js";
import { systemClock } from "../../../../src/util/time.js";

const silent = pino({ level: "silent" });
export const T = 1_700_000_000_000;

export interface ShipRig {
  shipper: StreamShipper;
  checkpoint: StreamCheckpoint;
  /** The high-water mark at each commit (the checkpoint moved), in order. */
  commits: number[];
  /** The high-water mark a restart would resume from (a copy of the checkpoint directory, opened). */
  durableHighWaterMs(): Promise<number>;
  /** The ExportHealth's clock (ms): moved by hand to pass its thresholds. */
  clock: { ms: number };
  /** Records T+from .. T+from+n-1, each with body "/r<i>" ("/bad<i>" for those `bad` picks). */
  page(from: number, n: number, bad?: (i: number) => boolean): PreparedPage;
  /** Failed export attempts (sitehost_exporter_log_export_failures_total). */
  failures(): Promise<number>;
  /** A counter's value for these labels (0 when absent). */
  counter(name: string, labels?: Record<string, string>): Promise<number>;
  /** The status page's log shipping part, as it would be rendered now. */
  status(): StatusReport["logs"];
  /** What /-/ready would answer for an exporter ready otherwise. */
  ready(): Readiness;
  close(): Promise<void>;
}

export async function shipRig(sink: LogSink, endpoint: string): Promise<ShipRig> {
  const dir = await mkdtemp(join(tmpdir(), "ship-rig-"));
  const store = new CheckpointStore(dir);
  const checkpoint = await store.open(1, "server", () => T - 1, 600_000);
  const registry = new Registry();
  const metrics = logMetrics(registry);
  const clock = { ms: Date.now() };
  const exportHealth = new ExportHealth(endpoint, silent, {
    lastingAfterMs: 60_000,
    repeatEveryMs: 300_000,
    clock: { now: () => clock.ms },
  });
  const reports = new StreamReports({
    metrics,
    log: silent,
    warnings: new ThrottledWarnings(silent, 60_000, systemClock),
    clock: systemClock,
    exportHealth,
  });
  const commits: number[] = [];
  const hooks = reports.shipperHooks(
    {
      site: { id: 1, name: "shop" },
      stream: "server",
      readToEndAtMs: undefined,
      lagSeconds: undefined,
      checkpointMoved: (c) => void commits.push(c.highWaterMs),
    },
    () => undefined,
  );
  const stop = new AbortController();
  const shipper = new StreamShipper(
    sink,
    checkpoint,
    new CollectorHealth(),
    hooks,
    { maxRecords: 100, maxBytes: 1 << 20, depth: 2, backoff: { baseMs: 1, capMs: 20 }, clock: systemClock },
    stop.signal,
  );
  shipper.begin(Date.now());
  const counter = async (name: string, labels: Record<string, string> = {}) => {
    const metric = registry.getSingleMetric(name);
    const values = (await metric?.get())?.values ?? [];
    return values
      .filter((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want))
      .reduce((sum, v) => sum + v.value, 0);
  };
  const inputs: StatusInputs = {
    version: "test",
    telemetryPath: "/metrics",
    apiUrl: "https://api.example.com",
    ready: { ready: true },
    auth: { ok: true },
    logs: { enabled: true, shipping: true, streams: ["server"] },
    shard: { index: 0, count: 1 },
    now: 0,
  };
  return {
    shipper,
    checkpoint,
    commits,
    durableHighWaterMs: async () => {
      const copy = await mkdtemp(join(tmpdir(), "ship-rig-copy-"));
      try {
        await cp(dir, copy, { recursive: true });
        return (await new CheckpointStore(copy).open(1, "server", () => T - 1, 600_000)).state.highWaterMs;
      } finally {
        await rm(copy, { recursive: true, force: true });
      }
    },
    clock,
    page: (from, n, bad = () => false) => {
      const records: PendingRecord[] = Array.from({ length: n }, (_, k) => ({
        entry: { timestamp: (T + (from + k) * 1000) / 1000, status: 200 },
        timeMs: T + (from + k) * 1000,
        fingerprint: String(from + k).padStart(32, "0"),
        occurrence: 0,
      }));
      return preparePage(records, {
        encode: (w, r) => {
          const i = (r.timeMs - T) / 1000;
          sink.encode(w, {
            timeMs: r.timeMs,
            observedMs: r.timeMs,
            severityNumber: 9,
            severityText: "INFO",
            body: bad(i) ? `/bad${i}` : `/r${i}`,
            attributes: {},
          });
        },
      });
    },
    counter,
    failures: () => counter("sitehost_exporter_log_export_failures_total"),
    status: () => logsPart({ ...inputs, export: exportHealth.status(), now: clock.ms }),
    ready: () => readinessWithExports({ ready: true }, exportHealth.notReadyReason()),
    close: async () => {
      stop.abort(new Error("test over"));
      await sink.shutdown();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
