/**
 * The fingerprints (and so the `log.record.uid`s) of entries in the forms the platform documents and the
 * simulator writes, pinned: checkpoints in the field hold these, and a release that fingerprinted such
 * an entry differently would ship it again after an upgrade. The entries go through the API decoder
 * (from the page's bytes, as the client reads a page, and parsed whole) and the stream's fingerprint.
 */
import { hash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  ActivityEntrySchema,
  PhpLogEntrySchema,
  ServerLogEntrySchema,
  type LogStream,
} from "../../../src/api/schemas.js";
import { fingerprinter } from "../../../src/logs/entry.js";
import { recordUid } from "../../../src/logs/recordUid.js";
import { fingerprintOf } from "../../../src/logs/streams.js";
import { healthCheck, phpEntry, serverEntry } from "../../../src/simulator/logEntries.js";
import { decodeBothWays } from "./decodedEntries.js";

const php = [
  {
    message:
      'PHP Warning:  Undefined array key "page" in /www/site/public/wp-content/themes/shop/functions.php on line 212',
    severity: "Warning",
    kind: "php",
    name: "php-fpm",
    file: "/www/site/public/wp-content/themes/shop/functions.php",
    line: 212,
    timestamp: "2026-05-01T10:00:00.000Z",
    hosted_site_id: 4711,
  },
  {
    message:
      "PHP Fatal error:  Uncaught RuntimeException: Payment gateway timed out after 30 seconds in /www/site/public/wp-content/plugins/shop-engine/gateway.php:88\nStack trace:\n#0 {main}\n  thrown in /www/site/public/wp-content/plugins/shop-engine/gateway.php on line 88",
    severity: "Fatal error",
    kind: "php",
    name: "php-fpm",
    file: "/www/site/public/wp-content/plugins/shop-engine/gateway.php",
    line: 88,
    timestamp: "2026-05-01T10:00:07.250Z",
    hosted_site_id: 4711,
  },
  { message: "PHP Notice:  something", timestamp: "2026-05-01T10:00:09.000Z" },
];

const server = [
  {
    body_bytes_sent: 18234,
    cached: "MISS",
    date: "2026-05-01T10:00:00.000Z",
    http2: "on",
    http_host: "shop.example",
    http_referer: "https://shop.example/",
    http_user_agent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36",
    http_version: "HTTP/2.0",
    http_x_forwarded_for: "-",
    renderer: "php",
    request_completion: "OK",
    request_time: 0.137,
    request_type: "GET",
    request_url: "/cart?item=12",
    scheme: "https",
    status: 200,
    timestamp: 1777629600,
    type: "access",
    user_ip: "203.0.113.17",
  },
  {
    body_bytes_sent: 2,
    cached: "BYPASS",
    date: "2026-05-01T10:00:01.000Z",
    http2: "off",
    http_host: "shop.example",
    http_referer: "-",
    http_user_agent: "HealthCheck/1.0",
    http_version: "HTTP/1.1",
    http_x_forwarded_for: "-",
    renderer: "php",
    request_completion: "OK",
    request_time: 0.004,
    request_type: "GET",
    request_url: "/healthz",
    scheme: "https",
    status: 200,
    timestamp: 1777629601,
    type: "access",
    user_ip: "10.1.2.3",
  },
  { status: 503, timestamp: 1777629602, request_type: "POST", request_url: "/checkout", cached: "BYPASS" },
];

const activity = [
  {
    id: 1042,
    timestamp: "2026-05-01T09:58:12.345Z",
    accountEmail: "ops@agency.example",
    ipAddress: "198.51.100.20",
    userAgent: "Mozilla/5.0",
    name: "plugin_updated",
    description: "Plugin updated",
    source: "ui",
    message: "Plugin updated on site shop",
  },
  {
    id: 1043,
    timestamp: "2026-05-01T09:59:00.000Z",
    accountEmail: "system@platform.example",
    ipAddress: null,
    userAgent: "platform-automation",
    name: "edge_cache_purged",
    description: "Edge cache purged",
    source: "systems",
    message: "Edge cache purged on site shop",
  },
];

/** Today's fingerprints of the entries above, in order: these must never change. */
const GOLDEN: Record<LogStream, string[]> = {
  php: [
    "0c54c1930536b448d677a12341307fc8",
    "2c4003125265f6bebcc545a1b9b14f4c",
    "3e5edd0e0ac8a6f29f21aa96e13b1001",
  ],
  server: [
    "d1e70870a6003a8e89277f38e0859244",
    "d4daf792e17a7404520488cf2c22e4fe",
    "3d110865a390e2e42883604d859c029e",
  ],
  activity: ["5f622f976cd8fbe837c9bab980d07297", "2385598077e204b7eaa50ca2f081794e"],
};

const cases: Array<[LogStream, z.ZodType<{ timestamp: unknown }>, object[]]> = [
  ["php", PhpLogEntrySchema, php],
  ["server", ServerLogEntrySchema, server],
  ["activity", ActivityEntrySchema, activity],
];

describe("fingerprints of entries in their documented forms", () => {
  it.each(cases)(
    "%s entries keep the fingerprints earlier releases gave them",
    async (stream, schema, entries) => {
      const fp = fingerprintOf(stream);
      const { whole, fromBytes } = await decodeBothWays(schema, entries);
      const fingerprints = whole.map((e) => fp(e as object));
      expect(fingerprints).toEqual(GOLDEN[stream]);
      expect(fromBytes.map((e) => fp(e as object))).toEqual(GOLDEN[stream]);
      // Nothing in them was read differently: each entry is what came (less what no schema knows).
      expect(whole).toEqual(entries);
      // What they are: 128 bits of sha256 of the entry's text, keys sorted, nulls left out.
      const text = (e: object) =>
        JSON.stringify(
          Object.fromEntries(
            Object.entries(e)
              .filter(([, v]) => v !== null)
              .sort(),
          ),
        );
      expect(entries.map((e) => hash("sha256", text(e), "hex").slice(0, 32))).toEqual(GOLDEN[stream]);
      expect(recordUid(7, stream, fingerprints[0] as string, 0)).toBe(`7-${stream}-${GOLDEN[stream][0]}-0`);
    },
  );

  it("every entry the simulator writes is in the documented forms: fingerprinted as earlier releases did", async () => {
    const src = { siteId: 4711, siteName: "shop", host: "shop.example", seed: 99 };
    const second = 1777629600;
    const streams: Array<[LogStream, z.ZodObject<{ timestamp: z.ZodType }>, object[]]> = [
      ["php", PhpLogEntrySchema, Array.from({ length: 300 }, (_, i) => phpEntry(src, second + i, i % 3))],
      [
        "server",
        ServerLogEntrySchema,
        Array.from({ length: 300 }, (_, i) =>
          i % 10 === 0 ? healthCheck(src, second + i) : serverEntry(src, second + i, i % 3),
        ),
      ],
    ];
    for (const [stream, schema, entries] of streams) {
      const asTheyCame = fingerprinter(Object.keys(schema.shape));
      const { whole } = await decodeBothWays(schema, entries);
      expect(whole).toHaveLength(entries.length);
      for (const e of whole) expect(fingerprintOf(stream)(e)).toBe(asTheyCame(e));
    }
  });
});
