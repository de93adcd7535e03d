/**
 * An OTLP endpoint that answers but refuses everything never looks healthy, and loses nothing: a 400
 * to every export (a wrong path or protocol), a 200 with a proxy's HTML page, a partial success that
 * rejects every record. The records are kept and retried, the checkpoint holds, the failures are
 * counted with their reason, the status page names the endpoint and the likely cause, and /-/ready
 * answers 503 once it has lasted; when the endpoint takes them, every record arrives once. A partial
 * success that rejects only some records drops those (counted, shown), and the checkpoint moves on.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ProtobufHttpSink, type LogSink } from "../../../../src/logs/otlp/sink.js";
import { createSdkExporter, SdkSink } from "../../../../src/logs/otlp/sdkSink.js";
import { createResource, logScope } from "../../../../src/logs/resource.js";
import {
  partialSuccess,
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceiverAnswer,
  type ReceivedRecord,
} from "../../../helpers/otlp-receiver.js";
import { waitFor } from "../../../helpers/wait.js";
import { shipRig, T, type ShipRig } from "./shipRig.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const resource = createResource({ OTEL_SERVICE_NAME: "edge-logs" });
const scope = logScope({});

async function setup(protocol: "http/protobuf" | "http/json" = "http/protobuf") {
  const receiver = await startOtlpReceiver();
  cleanups.push(() => receiver.close());
  const settings = {
    protocol,
    url: receiver.logsEndpoint,
    headers: {},
    compression: "none",
    timeoutMs: 5000,
  } as const;
  const sink: LogSink =
    protocol === "http/protobuf"
      ? new ProtobufHttpSink(settings, resource, scope)
      : new SdkSink(await createSdkExporter(settings), resource, scope, false);
  const rig = await shipRig(sink, receiver.logsEndpoint);
  cleanups.push(() => rig.close());
  return { receiver, rig };
}

/** What arrived, sorted (records refused while others were taken may arrive after those). */
const bodies = (records: readonly ReceivedRecord[]) => records.map((r) => String(r.body)).sort();
const range = (n: number) => Array.from({ length: n }, (_, i) => `/r${i}`).sort();

/** Ship `n` records while the receiver refuses, check what shows meanwhile; then let it take them. */
async function refusedThenTaken(
  receiver: OtlpReceiver,
  rig: ShipRig,
  answer: (records: ReceivedRecord[]) => ReceiverAnswer,
  n = 30,
) {
  receiver.setAnswer(answer);
  const startedAt = rig.clock.ms;
  const highWaterBefore = await rig.durableHighWaterMs();
  await rig.shipper.add(rig.page(0, n));
  let flushed = false;
  const flushing = rig.shipper.flush().then(() => (flushed = true));
  await waitFor("three refused attempts counted", async () => (await rig.failures()) >= 3);
  const during = {
    stored: receiver.records.length,
    flushed,
    commits: rig.commits.length,
    durableHighWaterMs: await rig.durableHighWaterMs(),
    highWaterBefore,
    rejected: await rig.counter("sitehost_exporter_log_records_rejected_total"),
    shipped: await rig.counter("sitehost_exporter_log_records_shipped_total"),
    status: rig.status(),
    readyAtFirst: rig.ready(),
  };
  rig.clock.ms = startedAt + 61_000;
  const readyAfterAMinute = rig.ready();
  const statusAfterAMinute = rig.status();
  receiver.setAnswer(null);
  await flushing;
  return { during, readyAfterAMinute, statusAfterAMinute };
}

describe("an endpoint that refuses every export", () => {
  it.each([
    {
      what: "HTTP 400 to every export (a backend's wrong path)",
      reason: "status",
      answer: (): ReceiverAnswer => ({ status: 400, contentType: "text/plain", body: "unknown path" }),
      says: [/HTTP 400: unknown path/, /wrong path/, /OTEL_EXPORTER_OTLP_PROTOCOL/],
    },
    {
      what: "HTTP 200 with a proxy's HTML page",
      reason: "not_otlp",
      answer: (): ReceiverAnswer => ({
        status: 200,
        contentType: "text/html; charset=utf-8",
        body: "<!doctype html><html><head><title>Sign in - Corporate Proxy</title></head><body>Login</body></html>",
      }),
      says: [/HTTP 200 with text\/html instead of an OTLP response \("Sign in - Corporate Proxy"\)/, /proxy/],
    },
    {
      what: "a partial success that rejects every record",
      reason: "partial_success",
      answer: (records: ReceivedRecord[]): ReceiverAnswer => ({
        status: 200,
        contentType: "application/x-protobuf",
        body: partialSuccess(records.length, "unknown tenant"),
      }),
      says: [/a partial success rejected all 30 records: unknown tenant/, /rejected every record/],
    },
  ])("$what: kept and retried, checkpoint held, counted, shown, not ready after a minute", async (c) => {
    const { receiver, rig } = await setup();
    const r = await refusedThenTaken(receiver, rig, c.answer);

    // Nothing stored, nothing dropped, nothing committed while refused.
    expect(r.during.stored).toBe(0);
    expect(r.during.flushed).toBe(false);
    expect(r.during.commits).toBe(0);
    expect(r.during.durableHighWaterMs).toBe(r.during.highWaterBefore);
    expect(r.during.rejected).toBe(0);
    expect(r.during.shipped).toBe(0);
    expect(await rig.counter("sitehost_exporter_log_exports_refused_total", { reason: c.reason })).toBe(
      await rig.failures(),
    );

    // The status page names the endpoint and the likely cause; the stream's row says it is refused.
    expect(r.during.status).toMatchObject({ health: "warning", refusing: true });
    expect(r.during.status.summary).toContain("refuses every export");
    for (const said of c.says) expect(r.during.status.lastError).toMatch(said);
    expect(r.during.status.lastError).toContain(`OTLP export to ${receiver.logsEndpoint} failed`);
    expect(r.during.status.streams[0]?.summary).toContain("refused");
    // Ready at first (a refusal may pass), not ready once it has lasted a minute, saying why.
    expect(r.during.readyAtFirst.ready).toBe(true);
    expect(r.readyAfterAMinute.ready).toBe(false);
    expect(r.readyAfterAMinute.reason).toMatch(/^the OTLP endpoint has refused every export for 61 s: /);
    expect(r.statusAfterAMinute.health).toBe("critical");

    // Once the endpoint takes them, every record arrives, once; the checkpoint moves.
    expect(bodies(receiver.records)).toEqual(range(30));
    expect(await rig.counter("sitehost_exporter_log_records_shipped_total")).toBe(30);
    expect(await rig.counter("sitehost_exporter_log_records_rejected_total")).toBe(0);
    expect(await rig.durableHighWaterMs()).toBe(T + 29_000);
    expect(rig.status()).toMatchObject({ health: "ok", summary: "the OTLP collector takes exports" });
    expect(rig.ready()).toEqual({ ready: true });
  });

  it("http/json: a 200 with an HTML page holds the records too (the OpenTelemetry exporter's answer is read)", async () => {
    const { receiver, rig } = await setup("http/json");
    const r = await refusedThenTaken(receiver, rig, () => ({
      status: 200,
      contentType: "text/html",
      body: "<html><body><h1>It works!</h1></body></html>",
    }));
    expect(r.during.stored).toBe(0);
    expect(r.during.commits).toBe(0);
    expect(await rig.counter("sitehost_exporter_log_exports_refused_total", { reason: "not_otlp" })).toBe(
      await rig.failures(),
    );
    expect(r.during.status.lastError).toMatch(
      /HTTP 2xx with a body that is not an OTLP response .*It works!/,
    );
    expect(bodies(receiver.records)).toEqual(range(30));
    expect(receiver.requests.json).toBeGreaterThan(0);
  });
});

describe("a partial success that rejects some records", () => {
  it("drops those (retrying cannot help), counts and shows them; the checkpoint moves on", async () => {
    const { receiver, rig } = await setup();
    receiver.setAnswer((records) => {
      const bad = records.filter((r) => String(r.body).startsWith("/bad"));
      return {
        status: 200,
        contentType: "application/x-protobuf",
        body: partialSuccess(bad.length, "log line too long"),
        keep: records.filter((r) => !bad.includes(r)),
      };
    });
    await rig.shipper.add(rig.page(0, 30, (i) => i === 4 || i === 17));
    await rig.shipper.flush();
    expect(receiver.records).toHaveLength(28);
    expect(await rig.counter("sitehost_exporter_log_records_rejected_total")).toBe(2);
    expect(await rig.counter("sitehost_exporter_log_records_shipped_total")).toBe(28);
    expect(await rig.counter("sitehost_exporter_log_export_failures_total")).toBe(0);
    expect(await rig.counter("sitehost_exporter_log_exports_refused_total")).toBe(0);
    expect(await rig.durableHighWaterMs()).toBe(T + 29_000);
    // Shown (records were dropped), but the exporter works and is ready.
    expect(rig.status()).toMatchObject({
      health: "warning",
      refusing: true,
      lastError: "2 records rejected: log line too long",
    });
    expect(rig.ready()).toEqual({ ready: true });
    // Ten minutes on, with nothing rejected since, the part is well again.
    rig.clock.ms += 11 * 60_000;
    expect(rig.status().health).toBe("ok");
  });
});
