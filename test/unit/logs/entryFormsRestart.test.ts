/**
 * A platform that changes the form of its entries' values between two reads (a restart in between)
 * ships each entry once: the log pipeline on the same checkpoints, its pages decoded by the API
 * client's decoder. And an upgrade ships nothing twice that an earlier release, which fingerprinted
 * values as they came, delivered in another form than documented.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import type { LogRecordExporter, ReadableLogRecord } from "@opentelemetry/sdk-logs";
import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { z } from "zod";
import { logPage, pagedList, type DecodeContext } from "../../../src/api/decode.js";
import {
  ActivityEntrySchema,
  PhpLogEntrySchema,
  ServerLogEntrySchema,
  type LogEntry,
  type Site,
} from "../../../src/api/schemas.js";
import type { LogPageRef, RequestOptions, SitehostApi } from "../../../src/api/types.js";
import { ConfigSchema } from "../../../src/config/schema.js";
import { fingerprinter } from "../../../src/logs/entry.js";
import { LogPipeline } from "../../../src/logs/pipeline.js";
import { fingerprintOf } from "../../../src/logs/streams.js";
import { METRIC_FAMILIES } from "../../../src/metrics/families.js";
import { MetricStore } from "../../../src/metrics/store.js";
import { fakeApi } from "../../helpers/fakeApi.js";
import { FakeLogApi, makeTailer, silent } from "./fakes.js";

class MemoryExporter implements LogRecordExporter {
  readonly records: ReadableLogRecord[] = [];
  export(records: ReadableLogRecord[], done: (r: ExportResult) => void): void {
    this.records.push(...records);
    setImmediate(() => done({ code: ExportResultCode.SUCCESS }));
  }
  forceFlush = () => Promise.resolve();
  shutdown = () => Promise.resolve();
}

const T0 = Math.floor(Date.now() / 1000) - 600; // ten minutes ago, whole seconds
const SITE = { id: 7, name: "shop" } as unknown as Site;
const iso = (second: number) => new Date((T0 + second) * 1000).toISOString();

/** Entry i of each stream as documented ("documented") or with every value in another form. */
type Form = "documented" | "other";
const server = (i: number, form: Form) =>
  form === "documented"
    ? {
        timestamp: T0 + i,
        date: iso(i),
        status: 200,
        body_bytes_sent: 100 + i,
        cached: "false",
        request_url: `/p${i}`,
      }
    : {
        timestamp: (T0 + i) * 1000,
        date: iso(i).replace(".000Z", "+00:00"),
        status: "200",
        body_bytes_sent: ` ${100 + i} `,
        cached: false,
        request_url: `/p${i}`,
      };
const php = (i: number, form: Form) =>
  form === "documented"
    ? { timestamp: iso(i), message: `warning ${i}`, line: 10 + i, hosted_site_id: 7 }
    : {
        timestamp: iso(i).replace(".000Z", "Z"),
        message: `warning ${i}`,
        line: `${10 + i}`,
        hosted_site_id: "7",
      };
const activity = (i: number, form: Form) =>
  form === "documented"
    ? { id: 500 + i, timestamp: iso(i), name: "plugin_updated", message: `update ${i}` }
    : { id: `${500 + i}`, timestamp: (T0 + i) * 1000, name: "plugin_updated", message: `update ${i}` };

const ctx: DecodeContext = {
  endpoint: "/sites/{id}/logs",
  redact: (t) => t,
  reportRejected: () => undefined,
};

/** A scroll-paged stream whose pages go through the API client's decoder, from their bytes. */
async function decodedPage(
  stream: FakeLogApi,
  schema: z.ZodType<LogEntry>,
  scrollId: string | null,
  opts?: RequestOptions,
) {
  const page = await stream.page(scrollId, opts);
  const raw = Array.from({ length: page.records.length }, (_, i) => page.records.record(i));
  const text = JSON.stringify({ total_results: page.totalResults, logs: raw, scroll_id: page.scrollId });
  const decoded = await logPage(schema).fromBytes?.(
    { bytes: Buffer.from(text), release: () => undefined },
    ctx,
  );
  if (!decoded) throw new Error("log pages are decoded from their bytes");
  return decoded;
}

function platform() {
  const streams = { server: new FakeLogApi(), php: new FakeLogApi() };
  const activityLog: unknown[] = [];
  const api = fakeApi({
    phpLogs: (ref: LogPageRef, opts?: RequestOptions) =>
      decodedPage(streams.php, PhpLogEntrySchema, ref.scrollId, opts) as ReturnType<SitehostApi["phpLogs"]>,
    serverLogs: (ref: LogPageRef, opts?: RequestOptions) =>
      decodedPage(streams.server, ServerLogEntrySchema, ref.scrollId, opts) as ReturnType<
        SitehostApi["serverLogs"]
      >,
    accountActivity: async () => ({ items: [], rejected: 0 }),
    // One page, newest first.
    siteActivity: async ({ page }) =>
      pagedList(ActivityEntrySchema)(
        { data: page === 1 ? [...activityLog].reverse() : [], page: { nextPage: null, lastPage: 1 } },
        ctx,
      ),
  });
  /** The platform's entries 0 to n - 1, all in one form. */
  const write = (n: number, form: Form) => {
    streams.server.log.splice(
      0,
      Infinity,
      ...Array.from({ length: n }, (_, i) => server(i, form) as LogEntry),
    );
    streams.php.log.splice(0, Infinity, ...Array.from({ length: n }, (_, i) => php(i, form) as LogEntry));
    activityLog.splice(0, Infinity, ...Array.from({ length: n }, (_, i) => activity(i, form)));
  };
  return { api, write };
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "entry-forms-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function pipeline(api: SitehostApi, exporter: LogRecordExporter) {
  const config = ConfigSchema.parse({
    logs: { checkpointDir: join(dir, "cp"), pollInterval: "50ms", startFrom: "-1h", shutdownTimeout: "1s" },
  });
  const registry = new Registry();
  const store = new MetricStore(METRIC_FAMILIES);
  return {
    p: new LogPipeline({ config, api, registry, logger: silent, store, exporter, env: {} }),
    registry,
  };
}

async function deduplicated(registry: Registry): Promise<number> {
  const m = await registry.getSingleMetric("sitehost_exporter_log_records_deduplicated_total")?.get();
  return (m?.values ?? []).reduce((sum, v) => sum + v.value, 0);
}

/** What each shipped record is: its stream and the entry's own key. */
const shipped = (records: readonly ReadableLogRecord[]) =>
  records.map((r) => {
    const a = r.attributes;
    return `${String(a["sitehost.log.stream"])} ${String(a["url.path"] ?? a["sitehost.activity.id"] ?? r.body)}`;
  });

describe("entries that change form across a restart", () => {
  it("are shipped once each, under the same uids", async () => {
    const { api, write } = platform();
    write(3, "documented");
    const before = new MemoryExporter();
    const first = pipeline(api, before);
    await first.p.start();
    first.p.updateSites([SITE]);
    await vi.waitFor(() => expect(before.records).toHaveLength(9), { timeout: 10_000, interval: 20 });
    await first.p.stop();

    // The same entries with every value in another form, and one new entry per stream.
    write(4, "other");
    const after = new MemoryExporter();
    const second = pipeline(api, after);
    await second.p.start();
    second.p.updateSites([SITE]);
    await vi.waitFor(() => expect(after.records).toHaveLength(3), { timeout: 10_000, interval: 20 });
    // Every stream has read the nine it had shipped before, again, and shipped none of them.
    await vi.waitFor(async () => expect(await deduplicated(second.registry)).toBeGreaterThanOrEqual(9), {
      timeout: 10_000,
      interval: 20,
    });
    await second.p.stop();

    expect(shipped(after.records).sort()).toEqual(["activity 503", "php warning 3", "server /p3"]);
    const all = shipped([...before.records, ...after.records]);
    expect(new Set(all).size).toBe(12);
    const uids = [...before.records, ...after.records].map((r) => r.attributes["log.record.uid"]);
    expect(new Set(uids).size).toBe(12);
  });

  it("an upgrade ships nothing twice that an earlier release delivered in another form", async () => {
    // What releases before this one gave an entry: the fingerprint of its values as they came.
    const earlier = fingerprinter(Object.keys(ServerLogEntrySchema.shape));
    const odd = (i: number) =>
      ({
        ...server(i, "documented"),
        timestamp: (T0 + i) * 1000,
        cached: false,
        date: `${iso(i)}`.replace("Z", "+00:00"),
      }) as LogEntry;
    const api = new FakeLogApi();
    for (let i = 0; i < 5; i++) api.append(odd(i));
    const old = makeTailer(dir, { api, fingerprint: earlier });
    await old.tailer.read(new AbortController().signal);
    expect(old.sink.paths()).toEqual(["/p0", "/p1", "/p2", "/p3", "/p4"]);
    api.append(odd(5));
    const now = makeTailer(dir, { api, fingerprint: fingerprintOf("server") });
    await now.tailer.read(new AbortController().signal);
    expect(now.sink.paths()).toEqual(["/p5"]);
  });
});
