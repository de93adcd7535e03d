/**
 * The protobuf sink writes each log record straight from its entry (no attribute object per record).
 * Those bytes must be the ones the record object gives through the general encoder, which a test of
 * its own holds to the OpenTelemetry JS serializer: for every kind of stream, for the account's own
 * activity log, for entries with optional fields missing, non-ASCII text and an uncaught exception.
 */
import { describe, expect, it } from "vitest";
import type { ActivityEntry, LogStream, PhpLogEntry, ServerLogEntry } from "../../../../src/api/schemas.js";
import { counterKeyOf } from "../../../../src/logs/counterKeys.js";
import { encodeLogRecord } from "../../../../src/logs/otlp/encode.js";
import { ProtoWriter } from "../../../../src/logs/otlp/protoWriter.js";
import { ProtobufHttpSink } from "../../../../src/logs/otlp/sink.js";
import type { PendingRecord, StreamEntry } from "../../../../src/logs/pending.js";
import { createResource, logScope } from "../../../../src/logs/resource.js";
import { ACCOUNT, encoderFor, outgoingRecord } from "../../../../src/logs/streams.js";

const T = 1_700_000_000_000;
const OBSERVED = T + 1234.5;

const serverEntries: ServerLogEntry[] = [
  {
    timestamp: 1_700_000_000,
    request_type: "GET",
    request_url: "/shop/?q=größe",
    http_version: "HTTP/2.0",
    status: 503,
    body_bytes_sent: 2 ** 33,
    user_ip: "203.0.113.7",
    http_user_agent: "Mozilla/5.0 (東京)",
    http_referer: "https://example.com/",
    http_x_forwarded_for: "198.51.100.2",
    http_host: "shop.example.com",
    scheme: "https",
    request_time: 0.042,
    cached: "HIT",
    renderer: "php",
    request_completion: "OK",
  },
  {
    timestamp: 1_700_000_000,
    request_url: "-",
    status: 200,
    user_ip: "-",
    http_referer: "",
  } as ServerLogEntry,
];
const phpEntries: PhpLogEntry[] = [
  {
    timestamp: "2023-11-14T22:13:20Z",
    severity: "Fatal error",
    message: "PHP Fatal error:  Uncaught RuntimeException: boom in /srv/x.php:12\nStack trace:\n#0 {main}",
    file: "/srv/x.php",
    line: 12,
  },
  { timestamp: "2023-11-14T22:13:20Z", severity: null, message: "" } as PhpLogEntry,
];
const activityEntries: ActivityEntry[] = [
  {
    id: 42,
    name: "site_created",
    message: "Created the site «shop»",
    description: "A site was created",
    accountEmail: "ops@example.com",
    ipAddress: "203.0.113.9",
    userAgent: "cli/1.0",
    source: "api.v1",
    timestamp: "2023-11-14T22:13:20Z",
  },
  { id: "a-43", name: "login", timestamp: 1_700_000_000, message: null },
];

function pending(entry: StreamEntry, i: number): PendingRecord {
  return { entry, timeMs: T + i, fingerprint: `fp${i}`, occurrence: i % 2 };
}

const sink = new ProtobufHttpSink(
  {
    protocol: "http/protobuf",
    url: "http://127.0.0.1:1/v1/logs",
    headers: {},
    compression: "none",
    timeoutMs: 1000,
  },
  createResource({}),
  logScope({}),
);

const cases: Array<[string, { id: number; name: string }, LogStream, StreamEntry[]]> = [
  ["web-server", { id: 7, name: "shop" }, "server", serverEntries],
  ["PHP", { id: 7, name: "shop" }, "php", phpEntries],
  ["site activity", { id: 7, name: "shop" }, "activity", activityEntries],
  ["account activity", ACCOUNT, "activity", activityEntries],
];

describe("records written straight from their entries", () => {
  it.each(cases)(
    "%s: the same bytes as the record object through the general encoder",
    (_, site, stream, entries) => {
      const direct = new ProtoWriter(16);
      const encoder = encoderFor(sink, site, stream, () => OBSERVED);
      entries.forEach((e, i) => encoder.encode(direct, pending(e, i)));

      const general = new ProtoWriter(16);
      entries.forEach((e, i) =>
        encodeLogRecord(general, outgoingRecord(site, stream, pending(e, i), OBSERVED)),
      );

      expect(direct.pos).toBeGreaterThan(0);
      expect(direct.view().equals(general.view())).toBe(true);
    },
  );
});

describe("web-server counting without durations (the benchmark's baseline)", () => {
  it("counts the status alone: one key per record, no bucket, sum or bytes", () => {
    const counted = encoderFor(sink, { id: 7, name: "shop" }, "server", () => OBSERVED, {
      requestTime: "auto",
      durations: false,
    }).counter;
    const full = encoderFor(sink, { id: 7, name: "shop" }, "server", () => OBSERVED).counter;
    expect(full?.slots).toBe(4);
    expect(counted?.slots).toBe(1);
    const ids = new Uint16Array(serverEntries.length);
    const values = new Float64Array(serverEntries.length);
    serverEntries.forEach((e, i) => counted?.write(pending(e, i), ids, values, i));
    expect([...ids].every((id) => /^(\dxx|other)\|(true|false)$/.test(counterKeyOf(id)))).toBe(true);
    expect([...values]).toEqual(serverEntries.map(() => 1));
  });
});
