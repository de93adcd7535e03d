/**
 * What one idle log stream costs in memory: `node --expose-gc dist/bench/streams.js [sites=2000] [heap-snapshot-file]`.
 *
 * The log pipeline (in this process, an in-process API whose logs are empty, nothing to ship) runs the
 * PHP, web-server and activity streams of `sites` sites until every stream was read once; the heap
 * after a full collection (with the typed arrays' contents, which live outside it), less the same
 * pipeline's with no sites, divided by the streams, is the figure. Everything a stream keeps between reads counts: its checkpoint, tailer, shipper, encoder,
 * reporter and self-metric series, and the scheduler's entry.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeHeapSnapshot } from "node:v8";
import pino from "pino";
import { Registry } from "prom-client";
import type { Site } from "../src/api/schemas.js";
import type { SitehostApi } from "../src/api/types.js";
import { ConfigSchema } from "../src/config/schema.js";
import { LogPipeline } from "../src/logs/pipeline.js";
import { METRIC_FAMILIES } from "../src/metrics/families.js";
import { MetricStore } from "../src/metrics/store.js";
import { sleep } from "../src/util/time.js";

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc");

const empty = async () => ({ items: [], rejected: 0, rawCount: 0, totalResults: 0, scrollId: null });
const api = {
  phpLogs: empty,
  serverLogs: empty,
  siteActivity: empty,
  accountActivity: empty,
  close: async () => undefined,
} as unknown as SitehostApi;

function sites(n: number): Site[] {
  return Array.from(
    { length: n },
    (_, i) =>
      ({
        id: 1000 + i,
        name: `site-${1000 + i}.example.com`,
        datacenterCode: "AKL",
        accountId: 1,
        staging: false,
        sandbox: false,
        kit: false,
      }) as Site,
  );
}

/** Heap used (after a full collection) with the streams of `n` sites all read once. */
async function heapWith(n: number): Promise<{ heap: number; streams: number }> {
  const dir = await mkdtemp(join(tmpdir(), "bench-streams-"));
  const config = ConfigSchema.parse({ logs: { checkpointDir: dir, ship: false, startFrom: "now" } });
  const registry = new Registry();
  const pipeline = new LogPipeline({
    config,
    api,
    registry,
    logger: pino({ level: "silent" }),
    store: new MetricStore(METRIC_FAMILIES),
    env: {},
  });
  await pipeline.start();
  pipeline.updateSites(sites(n));
  while (pipeline.unreadStreams() > 0) await sleep(200);
  const streams = pipeline.polling()?.streams ?? 0;
  for (let i = 0; i < 3; i++) gc?.();
  // Typed arrays' contents are outside the V8 heap and count too (the scheduler's columns, windows).
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  const heap = heapUsed + arrayBuffers;
  if (n > 0 && snapshot) writeHeapSnapshot(snapshot);
  await pipeline.stop();
  await rm(dir, { recursive: true, force: true });
  return { heap, streams };
}

const n = Number(process.argv[2] ?? 2000);
const snapshot = process.argv[3];
await heapWith(500); // warm up: code (optimised too), shapes, the modules' own state
const base = await heapWith(0);
const full = await heapWith(n);
console.log(
  JSON.stringify({
    phase: "idle streams",
    sites: n,
    streams: full.streams,
    bytesPerStream: Math.round((full.heap - base.heap) / full.streams),
  }),
);
