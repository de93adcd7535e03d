/**
 * What the http/protobuf sink puts on the wire: a batch of several pages, sent as its parts, arrives
 * as one well-formed request (the declared length, the bytes of the whole frame), plain or gzipped;
 * and how it reads a collector's Retry-After.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { Batch } from "../../../../src/logs/otlp/batch.js";
import { encodeLogRecord, RequestFrame } from "../../../../src/logs/otlp/encode.js";
import { ProtobufHttpSink } from "../../../../src/logs/otlp/sink.js";
import { preparePage } from "../../../../src/logs/prepared.js";
import type { PendingRecord } from "../../../../src/logs/pending.js";
import { createResource, logScope } from "../../../../src/logs/resource.js";

interface Received {
  headers: IncomingMessage["headers"];
  body: Buffer;
}

let server: Server | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function receiver(
  answer: { status: number; headers?: () => Record<string, string> } = { status: 200 },
): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(answer.status, { "content-type": "application/x-protobuf", ...answer.headers?.() }).end();
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1/logs`, received };
}

/** Three pages of records, each with text long enough that the frame's lengths take several bytes. */
function batchOfPages(): Batch {
  const batch = new Batch();
  for (let p = 0; p < 3; p++) {
    const records: PendingRecord[] = [];
    for (let i = 0; i < 40; i++) {
      records.push({
        entry: { timestamp: 1_700_000_000 + i, status: 200 },
        timeMs: 1_700_000_000_000 + i,
        fingerprint: `fp${p}-${i}`,
        occurrence: 0,
      });
    }
    const page = preparePage(records, {
      encode: (w, r) =>
        encodeLogRecord(w, {
          timeMs: r.timeMs,
          observedMs: r.timeMs + 1,
          severityNumber: 9,
          severityText: "INFO",
          body: `page ${p} record ${r.fingerprint} ${"x".repeat(200)}`,
          attributes: { "sitehost.log.stream": "server" },
        }),
    });
    batch.add(page);
  }
  return batch;
}

const resource = createResource({ OTEL_SERVICE_NAME: "edge-logs" });
const scope = logScope({ SITEHOST_LOG_SCOPE_ATTRIBUTES: "k8s.pod.name=exporter-0" });
const expectedFrame = (batch: Batch) =>
  new RequestFrame({
    resource: resource.attributes,
    resourceSchemaUrl: resource.schemaUrl,
    scopeName: scope.name,
    scopeVersion: scope.version,
    scopeAttributes: scope.attributes,
  }).wrap(batch.concat());

describe("ProtobufHttpSink on the wire", () => {
  it.each(["none", "gzip"] as const)(
    "compression %s: one request with the whole frame and its length",
    async (compression) => {
      const { url, received } = await receiver();
      const sink = new ProtobufHttpSink(
        { protocol: "http/protobuf", url, headers: {}, compression, timeoutMs: 5000 },
        resource,
        scope,
      );
      const batch = batchOfPages();
      const outcome = await sink.send(batch, new AbortController().signal);
      await sink.shutdown();
      expect(outcome.kind).toBe("accepted");
      expect(received).toHaveLength(1);
      const [request] = received as [Received];
      expect(Number(request.headers["content-length"])).toBe(request.body.length);
      expect(request.headers["transfer-encoding"]).toBeUndefined();
      expect(request.headers["content-encoding"]).toBe(compression === "gzip" ? "gzip" : undefined);
      const body = compression === "gzip" ? gunzipSync(request.body) : request.body;
      expect(body.equals(expectedFrame(batch))).toBe(true);
    },
  );

  it.each([
    ["delta seconds", () => "120", 120_000],
    ["an HTTP date", () => new Date(Date.now() + 90_000).toUTCString(), 90_000],
  ])("a 503 with Retry-After as %s is retried after it", async (_, header, waitMs) => {
    // The header is written when the request arrives, as a collector would.
    const { url } = await receiver({ status: 503, headers: () => ({ "retry-after": header() }) });
    const sink = new ProtobufHttpSink(
      { protocol: "http/protobuf", url, headers: {}, compression: "none", timeoutMs: 5000 },
      resource,
      scope,
    );
    const outcome = await sink.send(batchOfPages(), new AbortController().signal);
    await sink.shutdown();
    expect(outcome.kind).toBe("retry");
    // An HTTP date has whole seconds: the wait is within a second (and the test's run time) of it.
    expect(outcome.kind === "retry" ? outcome.retryAfterMs : undefined).toBeGreaterThan(waitMs - 2_000);
    expect(outcome.kind === "retry" ? outcome.retryAfterMs : undefined).toBeLessThanOrEqual(waitMs);
  });
});
