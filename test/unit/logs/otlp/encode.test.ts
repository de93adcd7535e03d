/**
 * The exporter's own OTLP/protobuf encoder writes the same bytes as the OpenTelemetry JS serializer
 * for the same records, so whatever reads one reads the other: short and long strings (one- to
 * three-byte length prefixes), non-ASCII text, integers (also negative and above 2^32), fractions,
 * booleans, string arrays, severities with and without text, fractional-millisecond times, events.
 */
import { SeverityNumber, type Attributes, type HrTime } from "@opentelemetry/api";
import { ProtobufLogsSerializer } from "@opentelemetry/otlp-transformer";
import type { ReadableLogRecord } from "@opentelemetry/sdk-logs";
import { describe, expect, it } from "vitest";
import { createResource } from "../../../../src/logs/resource.js";
import { encodeLogRecord, RequestFrame, type OutgoingRecord } from "../../../../src/logs/otlp/encode.js";
import { ProtoWriter } from "../../../../src/logs/otlp/protoWriter.js";

const SCOPE = {
  name: "sitehost-exporter",
  version: "9.9.9",
  attributes: { "k8s.pod.name": "exporter-0", "sitehost.shard.index": "0" },
};

function hr(ms: number): HrTime {
  const s = Math.floor(ms / 1000);
  return [s, Math.round((ms - s * 1000) * 1e6)];
}

function records(): OutgoingRecord[] {
  const base = Date.parse("2026-11-23T10:00:00.000Z");
  const attrs = (i: number): Attributes => ({
    "sitehost.site.id": String(i),
    "http.response.status_code": 200 + i,
    "http.response.body.size": 2 ** 33 + i,
    "sitehost.http.request_time": 0.125 * i,
    "sitehost.delta": -5 - i,
    "sitehost.http.cached": i % 2 === 0,
    "http.request.header.referer": [`https://shop.example/${i}`, "x"],
    "user_agent.original": "Mozilla/5.0 (Ärger; 東京) ✓",
  });
  return [
    {
      timeMs: base,
      observedMs: base + 1500,
      severityNumber: SeverityNumber.INFO,
      severityText: "INFO",
      body: "GET / HTTP/2.0",
      attributes: attrs(1),
    },
    {
      timeMs: base + 0.5,
      observedMs: base + 2001.25,
      severityNumber: 0,
      severityText: "",
      body: "",
      attributes: {},
    },
    {
      timeMs: 1,
      observedMs: 4102444800123,
      severityNumber: SeverityNumber.FATAL,
      severityText: "Fatal error",
      body: `PHP Fatal error:  ${"x".repeat(300)} ${"é".repeat(20_000)}`,
      attributes: { ...attrs(2), "exception.stacktrace": "#0 ".repeat(50_000) },
      eventName: "site_hacked",
    },
    // Text around the encoder's ASCII copy and its limits: length prefixes of one and two bytes, the
    // longest text copied as ASCII and one past it, and non-ASCII met after a long ASCII prefix.
    ...[42, 43, 127, 128, 1024, 1025, 16_384].map((n, i) => ({
      timeMs: base + i,
      observedMs: base + i,
      severityNumber: SeverityNumber.WARN,
      severityText: "W",
      body: "a".repeat(n),
      attributes: {
        ["k".repeat(n)]: "v".repeat(n),
        tail: `${"b".repeat(n)}ü`,
        mid: `${"c".repeat(n >> 1)}✓c`,
      },
    })),
  ];
}

describe("OTLP/protobuf encoding", () => {
  it("is byte-identical to the OpenTelemetry JS serializer, scope attributes included", () => {
    const resource = createResource({
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=prod",
      OTEL_SERVICE_NAME: "edge-logs",
    });
    const recs = records();
    const readable: ReadableLogRecord[] = recs.map((r) => ({
      hrTime: hr(r.timeMs),
      hrTimeObserved: hr(r.observedMs),
      severityNumber: r.severityNumber,
      severityText: r.severityText,
      body: r.body,
      resource,
      instrumentationScope: SCOPE,
      attributes: r.attributes,
      droppedAttributesCount: 0,
      ...(r.eventName ? { eventName: r.eventName } : {}),
    }));
    const expected = Buffer.from(ProtobufLogsSerializer.serializeRequest(readable) as Uint8Array);

    const w = new ProtoWriter(16);
    for (const r of recs) encodeLogRecord(w, r);
    const frame = new RequestFrame({
      resource: resource.attributes,
      resourceSchemaUrl: resource.schemaUrl,
      scopeName: SCOPE.name,
      scopeVersion: SCOPE.version,
      scopeAttributes: SCOPE.attributes,
    });
    const got = frame.wrap(w.view());
    expect(got.length).toBe(expected.length);
    expect(got.equals(expected)).toBe(true);
  });

  it("writes times as exact nanoseconds, also for fractional milliseconds", () => {
    for (const ms of [0, 1, 999.999, 1_700_000_000_123, 4_102_444_800_000.5, 2 ** 41 + 0.25]) {
      const w = new ProtoWriter(8);
      w.fixed64TimeMs(ms);
      const ns = w.view().readBigUInt64LE(0);
      const s = Math.floor(ms / 1000);
      const expected = BigInt(s) * 1_000_000_000n + BigInt(Math.round((ms - s * 1000) * 1e6));
      expect(ns, String(ms)).toBe(expected);
    }
  });
});

describe("fingerprints", () => {
  it("the fast path gives the same fingerprint as the general canonical form, for any flat entry", async () => {
    const { fingerprint, fingerprinter } = await import("../../../../src/logs/entry.js");
    const keys = [
      "timestamp",
      "status",
      "request_url",
      "cached",
      "request_time",
      "http2",
      "user_ip",
      "zz",
      "a",
    ];
    const fast = fingerprinter(keys);
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const values = [
      "x",
      "",
      'quote " and \\ back\nslash',
      "ünïcödé ✓ 東京",
      "\u0000\u001f",
      0,
      -0,
      1.5,
      1e21,
      -7,
      true,
      false,
      null,
      undefined,
      12345678901234,
    ];
    for (let n = 0; n < 2000; n++) {
      const entry: Record<string, unknown> = {};
      for (const k of [...keys].sort(() => rnd() - 0.5))
        if (rnd() < 0.7) entry[k] = values[Math.floor(rnd() * values.length)];
      expect(fast(entry)).toBe(fingerprint(entry));
    }
    // Shapes the fast path does not cover fall back to the general form.
    expect(fast({ status: 200, nested: { b: 1, a: 2 } })).toBe(
      fingerprint({ status: 200, nested: { b: 1, a: 2 } }),
    );
    expect(fast({ status: Number.NaN })).toBe(fingerprint({ status: Number.NaN }));
    // A key the schema does not know, in sorted order or not, is hashed with the rest.
    expect(fast({ a: 1, b_other: 2, status: 3 })).toBe(fingerprint({ a: 1, b_other: 2, status: 3 }));
    expect(fast({ status: 3, b_other: 2 })).toBe(fingerprint({ status: 3, b_other: 2 }));
  });
});

describe("fingerprint values", () => {
  it("are those existing checkpoints hold (sha256 of the canonical form, first 128 bits)", async () => {
    const { fingerprint, fingerprinter } = await import("../../../../src/logs/entry.js");
    const { ServerLogEntrySchema } = await import("../../../../src/api/schemas.js");
    const entry = {
      timestamp: 1700000000,
      status: 200,
      request_url: "/shop/?a=1",
      cached: "HIT",
      request_time: 0.002,
      user_ip: "203.0.113.7",
    };
    // Computed with the first release's fingerprint code.
    expect(fingerprint(entry)).toBe("0ac73b904139f7620be71b082e8921ae");
    expect(fingerprinter(Object.keys(ServerLogEntrySchema.shape))(entry)).toBe(
      "0ac73b904139f7620be71b082e8921ae",
    );
  });
});
