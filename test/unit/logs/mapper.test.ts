/**
 * Log record mapping (the attributes listed in docs/logs.md), entry times and fingerprints. Every
 * expected value is written out by hand from the platform's documented fields; none is computed by
 * calling the code another way.
 */
import { describe, expect, it } from "vitest";
import type { ActivityEntry, PhpLogEntry, ServerLogEntry } from "../../../src/api/schemas.js";
import { entryTimeMs, fingerprint } from "../../../src/logs/entry.js";
import {
  counterKey,
  mapActivityEntry,
  mapEntry,
  mapPhpEntry,
  mapServerEntry,
  serverMapping,
} from "../../../src/logs/mapper.js";

const T = 1_700_000_000_000; // 2023-11-14T22:13:20Z

function server(over: Partial<ServerLogEntry> = {}): ServerLogEntry {
  return {
    timestamp: 1_700_000_000,
    request_type: "GET",
    request_url: "/shop/?a=1",
    http_version: "HTTP/2.0",
    status: 200,
    body_bytes_sent: 5120,
    user_ip: "203.0.113.7",
    http_user_agent: "Mozilla/5.0 (X11)",
    http_referer: "https://example.com/",
    http_x_forwarded_for: "198.51.100.2",
    http_host: "shop.example.com",
    scheme: "https",
    request_time: 0.042,
    cached: "MISS",
    renderer: "php",
    request_completion: "OK",
    ...over,
  };
}

describe("web-server entry → log record", () => {
  it("maps the request line, URL parts, response and client to semantic-convention attributes", () => {
    const r = mapServerEntry(server(), T);
    expect(r.timeMs).toBe(T);
    expect(r.body).toBe("GET /shop/?a=1 HTTP/2.0");
    expect(r.attributes).toMatchObject({
      "http.request.method": "GET",
      "url.path": "/shop/",
      "url.query": "a=1",
      "url.scheme": "https",
      "server.address": "shop.example.com",
      "server.port": 443,
      "http.response.status_code": 200,
      "http.response.body.size": 5120,
      "client.address": "203.0.113.7",
      "user_agent.original": "Mozilla/5.0 (X11)",
      "network.protocol.version": "2.0",
      "sitehost.http.request_time": 0.042,
      "sitehost.http.cached": "MISS",
      "sitehost.http.renderer": "php",
      "sitehost.http.request_completion": "OK",
    });
    // Request headers are string arrays per the semantic conventions.
    expect(r.attributes["http.request.header.referer"]).toEqual(["https://example.com/"]);
    expect(r.attributes["http.request.header.x-forwarded-for"]).toEqual(["198.51.100.2"]);
  });

  it.each([
    ["shop.example.com:8443", "https", "shop.example.com", 8443],
    ["shop.example.com", "http", "shop.example.com", 80],
    ["shop.example.com", "https", "shop.example.com", 443],
    ["[2001:db8::1]:8080", "https", "2001:db8::1", 8080],
    ["[2001:db8::1]", "https", "2001:db8::1", 443],
    ["2001:db8::1", "http", "2001:db8::1", 80],
    ["203.0.113.9:81", "http", "203.0.113.9", 81],
  ])("Host %s (%s) → server.address %s and server.port %i", (host, scheme, address, port) => {
    const r = mapServerEntry(server({ http_host: host, scheme }), T);
    expect(r.attributes["server.address"]).toBe(address);
    expect(r.attributes["server.port"]).toBe(port);
  });

  it("has no server.port when neither the Host header nor a known scheme gives one", () => {
    const r = mapServerEntry(server({ http_host: "shop.example.com", scheme: null }), T);
    expect(r.attributes["server.address"]).toBe("shop.example.com");
    expect(r.attributes).not.toHaveProperty("server.port");
  });

  it.each(["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "QUERY"])(
    "the known method %s is recorded as it is",
    (method) => {
      const r = mapServerEntry(server({ request_type: method }), T);
      expect(r.attributes["http.request.method"]).toBe(method);
      expect(r.attributes).not.toHaveProperty("http.request.method_original");
    },
  );

  it.each(["PURGE", "get", "PROPFIND"])(
    "the unknown method %s becomes _OTHER, the original kept",
    (method) => {
      const r = mapServerEntry(server({ request_type: method }), T);
      expect(r.attributes["http.request.method"]).toBe("_OTHER");
      expect(r.attributes["http.request.method_original"]).toBe(method);
      // The body keeps the request line as logged.
      expect(r.body).toBe(`${method} /shop/?a=1 HTTP/2.0`);
    },
  );

  it("a list of known methods (OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS) replaces the default one", () => {
    const mapping = serverMapping(new Set(["GET", "PURGE"]));
    const purge = mapEntry(mapping, server({ request_type: "PURGE" }), T);
    expect(purge.attributes["http.request.method"]).toBe("PURGE");
    const post = mapEntry(mapping, server({ request_type: "POST" }), T);
    expect(post.attributes["http.request.method"]).toBe("_OTHER");
    expect(post.attributes["http.request.method_original"]).toBe("POST");
  });

  it("has no url.query without a '?' and leaves '-' values out", () => {
    const r = mapServerEntry(server({ request_url: "/about", http_referer: "-", user_ip: "-" }), T);
    expect(r.attributes["url.path"]).toBe("/about");
    expect(r.attributes).not.toHaveProperty("url.query");
    expect(r.attributes).not.toHaveProperty("http.request.header.referer");
    expect(r.attributes).not.toHaveProperty("client.address");
  });

  it.each([
    [503, 17, "ERROR"],
    [500, 17, "ERROR"],
    [404, 13, "WARN"],
    [400, 13, "WARN"],
    [399, 9, "INFO"],
    [200, 9, "INFO"],
  ])("status %i → severity %i %s", (status, number, text) => {
    const r = mapServerEntry(server({ status }), T);
    expect(r.severityNumber).toBe(number);
    expect(r.severityText).toBe(text);
  });

  it("counter key is status class | cached", () => {
    expect(counterKey("server", server({ status: 502, cached: "HIT" }))).toBe("5xx|true");
    expect(counterKey("server", server({ status: 404, cached: "MISS" }))).toBe("4xx|false");
    expect(counterKey("server", server({ status: 200, cached: null }))).toBe("2xx|false");
    expect(counterKey("server", server({ status: 301, cached: true }))).toBe("3xx|true");
    expect(counterKey("server", server({ status: 999 }))).toBe("other|false");
  });
});

describe("PHP entry → log record", () => {
  const uncaught =
    "PHP Fatal error:  Uncaught RuntimeException: Payment failed in /www/a.php:12\n" +
    "Stack trace:\n#0 /www/b.php(3): f()\n#1 {main}\n  thrown in /www/a.php on line 12";

  function php(over: Partial<PhpLogEntry> = {}): PhpLogEntry {
    return {
      message: uncaught,
      severity: "Fatal error",
      file: "/www/a.php",
      line: 12,
      timestamp: "2023-11-14T22:13:20Z",
      ...over,
    };
  }

  it("extracts the uncaught exception and keeps the message as the body", () => {
    const r = mapPhpEntry(php(), T);
    expect(r.body).toBe(uncaught);
    expect(r.attributes["exception.type"]).toBe("RuntimeException");
    expect(r.attributes["exception.message"]).toBe("Payment failed");
    const stack = r.attributes["exception.stacktrace"] as string;
    expect(stack.startsWith("Stack trace:\n#0 /www/b.php(3): f()")).toBe(true);
    expect(stack).toContain("#1 {main}");
    expect(r.attributes["code.file.path"]).toBe("/www/a.php");
    expect(r.attributes["code.line.number"]).toBe(12);
    expect(r.severityNumber).toBe(21);
    expect(r.severityText).toBe("Fatal error");
  });

  it("a plain warning has no exception attributes", () => {
    const r = mapPhpEntry(
      php({
        message: "PHP Warning:  Undefined variable $x",
        severity: "Warning",
        file: "/www/c.php",
        line: 3,
      }),
      T,
    );
    expect(r.attributes).not.toHaveProperty("exception.type");
    expect(r.attributes["code.file.path"]).toBe("/www/c.php");
    expect(r.attributes["code.line.number"]).toBe(3);
  });

  it.each([
    ["Fatal error", 21, "fatal"],
    ["Parse error", 21, "parse"],
    ["Warning", 13, "warning"],
    ["Notice", 10, "notice"],
    ["Deprecated", 10, "deprecated"],
    ["Foo", 0, "other"],
  ])("severity %s → %i, counter label %s", (severity, number, label) => {
    const entry = php({ message: "x", severity });
    const r = mapPhpEntry(entry, T);
    expect(r.severityNumber).toBe(number);
    expect(r.severityText).toBe(severity); // the original word is kept, "Foo" included
    expect(counterKey("php", entry)).toBe(label);
  });
});

describe("entry time", () => {
  it("reads epoch seconds (number or string), epoch ms and ISO 8601", () => {
    expect(entryTimeMs(1_700_000_000)).toBe(1_700_000_000_000);
    expect(entryTimeMs("1700000000")).toBe(1_700_000_000_000);
    expect(entryTimeMs(1_700_000_000.5)).toBe(1_700_000_000_500);
    expect(entryTimeMs(1_700_000_000_123)).toBe(1_700_000_000_123);
    expect(entryTimeMs("2023-11-14T22:13:20Z")).toBe(1_700_000_000_000);
    expect(entryTimeMs("2023-11-14T22:13:20.250+00:00")).toBe(1_700_000_000_250);
    // 2023-11-15T00:13:20+02:00 is 22:13:20Z
    expect(entryTimeMs("2023-11-15T00:13:20+02:00")).toBe(1_700_000_000_000);
  });

  it("reads a time without a zone as UTC, whatever the host's zone", () => {
    const saved = process.env.TZ;
    process.env.TZ = "America/New_York"; // Node applies a changed TZ at once
    try {
      expect(new Date(2023, 10, 14, 22, 13, 20).getTime()).not.toBe(1_700_000_000_000); // the zone took effect
      expect(entryTimeMs("2023-11-14 22:13:20")).toBe(1_700_000_000_000);
      expect(entryTimeMs("2023-11-14T22:13:20.250")).toBe(1_700_000_000_250);
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });

  it("is undefined for missing or unreadable times", () => {
    expect(entryTimeMs(undefined)).toBeUndefined();
    expect(entryTimeMs(null)).toBeUndefined();
    expect(entryTimeMs("yesterday-ish")).toBeUndefined();
    expect(entryTimeMs(0)).toBeUndefined();
  });
});

describe("fingerprint", () => {
  it("does not depend on key order, and differs when content differs", () => {
    const a = fingerprint({ status: 200, request_url: "/", timestamp: 1, nested: { x: 1, y: 2 } });
    const b = fingerprint({ nested: { y: 2, x: 1 }, timestamp: 1, request_url: "/", status: 200 });
    expect(a).toBe(b);
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(fingerprint({ status: 200, request_url: "/", timestamp: 2, nested: { x: 1, y: 2 } })).not.toBe(a);
  });
});

describe("activity entry → log record", () => {
  const entry: ActivityEntry = {
    id: 9001,
    name: "site.update",
    message: "Site settings updated",
    description: "PHP version changed to 8.3",
    accountEmail: "ops@agency.example",
    ipAddress: "198.51.100.7",
    userAgent: "deploy-bot/2.1",
    source: "api.v1",
    timestamp: 1_700_000_000,
  };

  it("the action is the EventName field, the account e-mail user.email", () => {
    const r = mapActivityEntry(entry, T);
    expect(r.eventName).toBe("site.update");
    expect(r.body).toBe("Site settings updated");
    expect(r.attributes).toMatchObject({
      "user.email": "ops@agency.example",
      "client.address": "198.51.100.7",
      "user_agent.original": "deploy-bot/2.1",
      "sitehost.activity.source": "api.v1",
      "sitehost.activity.description": "PHP version changed to 8.3",
      "sitehost.activity.id": "9001",
    });
    // Deprecated by the semantic conventions: event.name for the EventName field, enduser.id for an e-mail.
    expect(r.attributes).not.toHaveProperty("event.name");
    expect(r.attributes).not.toHaveProperty("enduser.id");
  });
});
