/**
 * Entries whose values come in another form than documented (a number as text, a time as epoch
 * milliseconds or with an offset, an id as text, a flag as a boolean), entry by entry: what the decoder
 * gives (the schema's types) and their `log.record.uid` (the same as the documented form's, so the
 * entry is not shipped again). A value that cannot be read costs its field when the field is optional
 * (counted as drift), the entry when it is required.
 */
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  ActivityEntrySchema,
  PhpLogEntrySchema,
  ServerLogEntrySchema,
  type LogStream,
} from "../../../src/api/schemas.js";
import { entryTimeMs } from "../../../src/logs/entry.js";
import { recordUid } from "../../../src/logs/recordUid.js";
import { fingerprintOf } from "../../../src/logs/streams.js";
import { decodeBothWays } from "./decodedEntries.js";

/** Documented forms, as the simulator writes them (their fingerprints are pinned in fingerprintGolden). */
const SERVER = {
  body_bytes_sent: 18234,
  cached: "MISS",
  date: "2026-05-01T10:00:00.000Z",
  http2: "on",
  http_host: "shop.example",
  request_time: 0.137,
  request_type: "GET",
  request_url: "/cart?item=12",
  status: 200,
  timestamp: 1777629600,
  user_ip: "203.0.113.17",
};
const PHP = {
  message: "PHP Warning:  Undefined array key",
  severity: "Warning",
  file: "/www/site/public/index.php",
  line: 212,
  timestamp: "2026-05-01T10:00:00.000Z",
  hosted_site_id: 4711,
};
const ACTIVITY = {
  id: 1042,
  timestamp: "2026-05-01T09:58:12.345Z",
  accountEmail: "ops@agency.example",
  name: "plugin_updated",
  source: "ui",
};
/** Flags documented as text. */
const FLAGS = { ...SERVER, cached: "false", http2: "true" };

const SCHEMAS: Record<LogStream, z.ZodType<{ timestamp: unknown }>> = {
  php: PhpLogEntrySchema,
  server: ServerLogEntrySchema,
  activity: ActivityEntrySchema,
};

/** [stream, what, documented entry, the entry in another form, what the decoder gives for it] */
type Row = [LogStream, string, object, object, object];
const rows: Row[] = [
  // Numbers as text: read as numbers.
  ["server", "bytes as text", SERVER, { ...SERVER, body_bytes_sent: "18234" }, SERVER],
  ["server", "bytes as text with blanks", SERVER, { ...SERVER, body_bytes_sent: " 18234 " }, SERVER],
  ["server", "bytes with an exponent", SERVER, { ...SERVER, body_bytes_sent: "1.8234e4" }, SERVER],
  ["server", "status as text", SERVER, { ...SERVER, status: "200" }, SERVER],
  ["server", "request time as text", SERVER, { ...SERVER, request_time: "0.137" }, SERVER],
  ["php", "line as text", PHP, { ...PHP, line: "212" }, PHP],
  // Strings as numbers: read as their text.
  [
    "php",
    "a message as a number",
    { ...PHP, message: "404" },
    { ...PHP, message: 404 },
    { ...PHP, message: "404" },
  ],
  // Times in other forms: kept as they came, fingerprinted as documented.
  ...(
    [
      ["epoch milliseconds", 1777629600000],
      ["epoch microseconds", 1777629600000000],
      ["epoch seconds as text", "1777629600"],
      ["epoch milliseconds as text", "1777629600000"],
      ["ISO with Z", "2026-05-01T10:00:00Z"],
      ["ISO with +02:00", "2026-05-01T12:00:00+02:00"],
      ["ISO with a comma", "2026-05-01T10:00:00,000Z"],
    ] as const
  ).map(([what, t]): Row => [
    "server",
    `time as ${what}`,
    SERVER,
    { ...SERVER, timestamp: t },
    { ...SERVER, timestamp: t },
  ]),
  [
    "server",
    "date with +00:00",
    SERVER,
    { ...SERVER, date: "2026-05-01T10:00:00+00:00" },
    { ...SERVER, date: "2026-05-01T10:00:00+00:00" },
  ],
  [
    "server",
    "date as epoch seconds",
    SERVER,
    { ...SERVER, date: 1777629600 },
    { ...SERVER, date: "1777629600" },
  ],
  ...(
    [
      ["Z without a fraction", "2026-05-01T10:00:00Z"],
      ["+00:00", "2026-05-01T10:00:00.000+00:00"],
      ["+0200", "2026-05-01T12:00:00+0200"],
      ["-05:00", "2026-05-01T05:00:00-05:00"],
      ["microseconds", "2026-05-01T10:00:00.000000Z"],
      ["a comma", "2026-05-01T10:00:00,000Z"],
      ["no zone", "2026-05-01 10:00:00"],
      ["epoch seconds", 1777629600],
      ["epoch milliseconds", 1777629600000],
      ["epoch seconds as text", "1777629600"],
    ] as const
  ).map(([what, t]): Row => [
    "php",
    `time with ${what}`,
    PHP,
    { ...PHP, timestamp: t },
    { ...PHP, timestamp: t },
  ]),
  [
    "php",
    "a leap second",
    { ...PHP, timestamp: "2026-07-01T00:00:00.000Z" },
    { ...PHP, timestamp: "2026-06-30T23:59:60Z" },
    { ...PHP, timestamp: "2026-06-30T23:59:60Z" },
  ],
  [
    "php",
    "a fraction after a comma",
    { ...PHP, timestamp: "2026-05-01T10:00:00.123Z" },
    { ...PHP, timestamp: "2026-05-01T10:00:00,123Z" },
    { ...PHP, timestamp: "2026-05-01T10:00:00,123Z" },
  ],
  [
    "activity",
    "time with +00:00",
    ACTIVITY,
    { ...ACTIVITY, timestamp: "2026-05-01T09:58:12.345+00:00" },
    { ...ACTIVITY, timestamp: "2026-05-01T09:58:12.345+00:00" },
  ],
  [
    "activity",
    "time as epoch milliseconds",
    ACTIVITY,
    { ...ACTIVITY, timestamp: 1777629492345 },
    { ...ACTIVITY, timestamp: 1777629492345 },
  ],
  // Fields of two types: kept as they came, fingerprinted as their first type.
  ["php", "site id as text", PHP, { ...PHP, hosted_site_id: "4711" }, { ...PHP, hosted_site_id: "4711" }],
  ["activity", "id as text", ACTIVITY, { ...ACTIVITY, id: "1042" }, { ...ACTIVITY, id: "1042" }],
  [
    "server",
    "flags as booleans",
    FLAGS,
    { ...FLAGS, cached: false, http2: true },
    { ...FLAGS, cached: false, http2: true },
  ],
  // All at once.
  [
    "server",
    "every value in another form",
    SERVER,
    {
      ...SERVER,
      body_bytes_sent: "18234",
      status: " 200 ",
      request_time: "0.137",
      timestamp: "2026-05-01T10:00:00+00:00",
      date: "2026-05-01T12:00:00+02:00",
    },
    { ...SERVER, timestamp: "2026-05-01T10:00:00+00:00", date: "2026-05-01T12:00:00+02:00" },
  ],
];

describe("entries in other forms", () => {
  it.each(rows)(
    "%s, %s: read as the schema's types, the same uid",
    async (stream, _what, documented, other, read) => {
      const schema = SCHEMAS[stream];
      const { fromBytes, whole, reports } = await decodeBothWays(schema, [documented, other]);
      expect(whole[1]).toEqual(read);
      expect(fromBytes[1]).toEqual(read);
      // Read, not drifted: nothing is reported.
      expect(reports).toEqual({ fromBytes: [], whole: [] });
      const fp = fingerprintOf(stream);
      const uid = (e: unknown) => recordUid(7, stream, fp(e as object), 0);
      expect(uid(whole[1])).toBe(uid(whole[0]));
      expect(uid(fromBytes[1])).toBe(uid(whole[0]));
    },
  );

  it.each([
    ["bytes", { ...SERVER, body_bytes_sent: "lots" }, "body_bytes_sent"],
    ["bytes as a boolean", { ...SERVER, body_bytes_sent: true }, "body_bytes_sent"],
    ["request time as text with a unit", { ...SERVER, request_time: "0.137s" }, "request_time"],
    ["a host as a list", { ...SERVER, http_host: ["a", "b"] }, "http_host"],
  ])(
    "an optional field that cannot be read (%s) is left out and counted, the entry kept",
    async (_what, entry, field) => {
      const { fromBytes, whole, reports } = await decodeBothWays(ServerLogEntrySchema, [entry]);
      const kept = Object.fromEntries(Object.entries(SERVER).filter(([k]) => k !== field));
      expect(whole).toEqual([kept]);
      expect(fromBytes).toEqual([kept]);
      for (const r of [reports.fromBytes, reports.whole]) {
        expect(r).toMatchObject([{ rejected: 0, drift: { [field]: 1 } }]);
      }
    },
  );

  it.each([
    ["server", "a status in words", { ...SERVER, status: "OK" }, "status"],
    ["server", "a status with a fraction", { ...SERVER, status: "200.5" }, "status"],
    ["php", "a message as a boolean", { ...PHP, message: true }, "message"],
    ["activity", "an empty name", { ...ACTIVITY, name: "" }, "name"],
  ] as const)(
    "%s: a required field that cannot be read (%s) costs the entry",
    async (stream, _what, entry, field) => {
      const { fromBytes, whole, reports } = await decodeBothWays(SCHEMAS[stream], [entry]);
      expect(whole).toEqual([]);
      expect(fromBytes).toEqual([undefined]);
      for (const r of [reports.fromBytes, reports.whole]) {
        expect(r).toMatchObject([{ rejected: 1, rejectedFields: { [field]: 1 } }]);
      }
    },
  );

  it("a time with toISOString's punctuation has the uid of the time it reads as (hour 24, second 60 too)", () => {
    const fp = fingerprintOf("php");
    let seed = 12345;
    const below = (n: number) => {
      seed = (seed * 1664525 + 1013904223) >>> 0;
      return Math.floor((seed / 2 ** 32) * n);
    };
    const two = (n: number) => String(below(n)).padStart(2, "0");
    let read = 0;
    let rewritten = 0;
    for (let n = 0; n < 20_000; n++) {
      const text = `20${two(100)}-${two(14)}-${two(33)}T${two(26)}:${two(62)}:${two(62)}.${below(10)}${two(100)}Z`;
      const ms = entryTimeMs(text);
      if (ms === undefined) continue;
      read += 1;
      const iso = new Date(ms).toISOString();
      if (iso !== text) rewritten += 1;
      expect(fp({ message: "m", timestamp: text }), text).toBe(fp({ message: "m", timestamp: iso }));
    }
    expect(read).toBeGreaterThan(5_000);
    expect(rewritten).toBeGreaterThan(100);
  });
});
