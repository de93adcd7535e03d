/**
 * Over gRPC (the OpenTelemetry gRPC exporter, to a gRPC server on loopback): an endpoint that answers
 * INVALID_ARGUMENT to every export holds the records, counted and shown, until it takes them; a
 * partial success in its answer is read and counted.
 */
import * as grpc from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { createSdkExporter, SdkSink } from "../../../../src/logs/otlp/sdkSink.js";
import { createResource, logScope } from "../../../../src/logs/resource.js";
import { decodeExportRequest, partialSuccess, type ReceivedRecord } from "../../../helpers/otlp-receiver.js";
import { waitFor } from "../../../helpers/wait.js";
import { shipRig, T } from "./shipRig.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

type Answer = (records: ReceivedRecord[]) => { error: grpc.ServiceError } | { reply: Uint8Array };

/** A gRPC LogsService that stores what it is sent, unless `answer` says otherwise. */
async function grpcReceiver() {
  const records: ReceivedRecord[] = [];
  const state: { answer: Answer | null } = { answer: null };
  const server = new grpc.Server();
  const bytes = (b: Buffer) => b;
  server.addService(
    {
      export: {
        path: "/opentelemetry.proto.collector.logs.v1.LogsService/Export",
        requestStream: false,
        responseStream: false,
        requestSerialize: bytes,
        requestDeserialize: bytes,
        responseSerialize: bytes,
        responseDeserialize: bytes,
      },
    },
    {
      export: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
        const sent = decodeExportRequest(call.request);
        const a = state.answer?.(sent);
        if (a && "error" in a) return callback(a.error);
        if (a) return callback(null, Buffer.from(a.reply));
        records.push(...sent);
        callback(null, Buffer.alloc(0));
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  cleanups.push(() => new Promise<void>((resolve) => server.tryShutdown(() => resolve())));
  return { url: `http://127.0.0.1:${port}`, records, state };
}

async function setup() {
  const receiver = await grpcReceiver();
  const settings = {
    protocol: "grpc",
    url: receiver.url,
    headers: {},
    compression: "none",
    timeoutMs: 5000,
  } as const;
  const sink = new SdkSink(await createSdkExporter(settings), createResource({}), logScope({}), true);
  const rig = await shipRig(sink, receiver.url);
  cleanups.push(() => rig.close());
  return { receiver, rig };
}

const invalidArgument = (): { error: grpc.ServiceError } => ({
  error: Object.assign(new Error("3 INVALID_ARGUMENT: unknown tenant"), {
    code: grpc.status.INVALID_ARGUMENT,
    details: "unknown tenant",
    metadata: new grpc.Metadata(),
  }),
});

describe("gRPC", () => {
  it("INVALID_ARGUMENT to every export: kept and retried, checkpoint held, counted and shown", async () => {
    const { receiver, rig } = await setup();
    receiver.state.answer = invalidArgument;
    await rig.shipper.add(rig.page(0, 12));
    const flushing = rig.shipper.flush();
    await waitFor("three refused attempts", async () => (await rig.failures()) >= 3);
    expect(receiver.records).toHaveLength(0);
    expect(rig.commits).toEqual([]);
    expect(await rig.counter("sitehost_exporter_log_records_rejected_total")).toBe(0);
    expect(await rig.counter("sitehost_exporter_log_exports_refused_total", { reason: "status" })).toBe(
      await rig.failures(),
    );
    const status = rig.status();
    expect(status).toMatchObject({ health: "warning", refusing: true });
    expect(status.lastError).toMatch(/gRPC status 3: .*unknown tenant; the endpoint refused every record/);
    rig.clock.ms += 61_000;
    expect(rig.ready().ready).toBe(false);

    receiver.state.answer = null;
    await flushing;
    expect(receiver.records.map((r) => String(r.body)).sort()).toEqual(
      Array.from({ length: 12 }, (_, i) => `/r${i}`).sort(),
    );
    expect(await rig.durableHighWaterMs()).toBe(T + 11_000);
    expect(rig.ready()).toEqual({ ready: true });
  });

  it("a partial success in the answer is read: the rejected records are counted", async () => {
    const { receiver, rig } = await setup();
    receiver.state.answer = (records) => ({
      reply: partialSuccess(1, `${records.length} sent, 1 too large`),
    });
    await rig.shipper.add(rig.page(0, 5));
    await rig.shipper.flush();
    expect(await rig.counter("sitehost_exporter_log_records_rejected_total")).toBe(1);
    expect(await rig.counter("sitehost_exporter_log_records_shipped_total")).toBe(4);
    expect(rig.status().lastError).toBe("1 record rejected: 5 sent, 1 too large");
  });
});
