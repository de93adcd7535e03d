/**
 * The OTLP endpoint's health: what is wrong said once per cause, naming the endpoint and what to
 * check; a failure that lasts said again every few minutes; the recovery said once.
 */
import pino from "pino";
import { describe, expect, it } from "vitest";
import { describeExportFailure, ExportHealth } from "../../../../src/logs/otlp/exportHealth.js";

function setup(url = "http://otel:secret-pw@127.0.0.1:4318/v1/logs") {
  const clock = { ms: 1_000_000 };
  const lines: Array<{ level: number; msg: string }> = [];
  const logger = pino({ level: "info" }, { write: (l: string) => void lines.push(JSON.parse(l)) });
  const health = new ExportHealth(url, logger, {
    lastingAfterMs: 60_000,
    repeatEveryMs: 5 * 60_000,
    clock: { now: () => clock.ms },
  });
  return { clock, lines, health };
}

const refused = { kind: "retry", reason: "ECONNREFUSED" } as const;

describe("OTLP export health", () => {
  it("a collector down for 10 minutes: one warning for the cause, then one at 1 min and every 5 min after", () => {
    const t = setup();
    expect(t.health.status().state).toBe("unknown");
    // Three streams retry every 2 s for 10 minutes.
    for (let s = 0; s <= 600; s += 2) {
      t.clock.ms = 1_000_000 + s * 1000;
      for (const stream of ["php", "server", "webhook"]) t.health.failed(refused, stream);
    }
    const warnings = t.lines.filter((l) => l.level === 40).map((l) => l.msg);
    expect(warnings).toEqual([
      "OTLP export to http://127.0.0.1:4318/v1/logs failed: connection refused: nothing listens at 127.0.0.1:4318 (ECONNREFUSED); is the collector running and is OTEL_EXPORTER_OTLP_ENDPOINT right?; the records are kept and retried, reading waits meanwhile",
      expect.stringMatching(
        /^OTLP export to http:\/\/127\.0\.0\.1:4318\/v1\/logs has been failing for 60 s: /,
      ),
      expect.stringMatching(/has been failing for 6 min: /),
    ]);
    expect(t.lines.map((l) => l.msg).join("\n")).not.toContain("secret-pw");
    expect(t.health.status()).toMatchObject({ state: "failing", lasting: true, failingSinceMs: 1_000_000 });

    t.clock.ms += 1000;
    t.health.succeeded("php");
    expect(t.lines.at(-1)).toMatchObject({
      level: 30,
      msg: "OTLP export to http://127.0.0.1:4318/v1/logs works again after 10 min",
    });
    expect(t.health.status()).toMatchObject({ state: "ok", lasting: false, lastSuccessMs: t.clock.ms });
  });

  it("a new cause while failing is said once too; after a recovery a cause is said again", () => {
    const t = setup();
    t.health.failed(refused, "php");
    t.health.failed({ kind: "misconfigured", reason: "HTTP 404: Not Found" }, "php");
    t.health.failed({ kind: "misconfigured", reason: "HTTP 404: Not Found" }, "server");
    t.health.succeeded("php");
    t.health.failed(refused, "php");
    expect(t.lines.filter((l) => l.level === 40)).toHaveLength(3);
  });

  it("a 404 on a URL that repeats /v1/logs says so", () => {
    expect(
      describeExportFailure("http://collector:4318/v1/logs/v1/logs", {
        kind: "misconfigured",
        reason: "HTTP 404: 404 page not found",
      }),
    ).toBe(
      "OTLP export to http://collector:4318/v1/logs/v1/logs failed: HTTP 404: 404 page not found; the path repeats /v1/logs: OTEL_EXPORTER_OTLP_ENDPOINT is the collector's base URL (http://collector:4318), the exporter adds /v1/logs; or give the full URL in OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
    );
    expect(
      describeExportFailure("http://collector:4318/otlp/v1/logs", {
        kind: "misconfigured",
        reason: "HTTP 404",
      }),
    ).toContain("check OTEL_EXPORTER_OTLP_ENDPOINT (the collector's base URL; the exporter adds /v1/logs)");
    expect(
      describeExportFailure("https://collector:4318/v1/logs", {
        kind: "misconfigured",
        reason: "HTTP 401: no",
      }),
    ).toContain("check OTEL_EXPORTER_OTLP_HEADERS");
  });

  it("an endpoint refusing every export makes the exporter not ready once it lasts; an outage or a success ends it", () => {
    const t = setup();
    const badRequest = { kind: "refused", reason: "HTTP 400: bad path" } as const;
    t.health.failed(badRequest, "php");
    expect(t.health.status()).toMatchObject({ state: "failing", refusingSinceMs: 1_000_000 });
    expect(t.health.notReadyReason()).toBeUndefined();
    t.clock.ms += 30_000;
    t.health.failed(
      { kind: "invalid", reason: "HTTP 200 with text/html instead of an OTLP response" },
      "server",
    );
    expect(t.health.notReadyReason()).toBeUndefined();
    t.clock.ms += 30_000;
    expect(t.health.notReadyReason()).toBe(
      "the OTLP endpoint has refused every export for 60 s: OTLP export to http://127.0.0.1:4318/v1/logs failed: HTTP 200 with text/html instead of an OTLP response; something other than an OTLP receiver answers at that URL (a proxy's or web server's page, a wrong host, port or path): point OTEL_EXPORTER_OTLP_ENDPOINT at the collector's OTLP port",
    );
    expect(t.health.status().streams.server).toMatchObject({ refused: true });
    // No answer at all: the endpoint is down, which is waited for, not a reason to be unready.
    t.health.failed(refused, "php");
    expect(t.health.notReadyReason()).toBeUndefined();
    expect(t.health.status().refusingSinceMs).toBeUndefined();
    t.health.failed(badRequest, "php");
    t.clock.ms += 120_000;
    expect(t.health.notReadyReason()).toMatch(/^the OTLP endpoint has refused every export for 2 min: /);
    t.health.succeeded("php");
    expect(t.health.notReadyReason()).toBeUndefined();
    expect(t.health.status().state).toBe("ok");
  });

  it.each([
    ["HTTP 400: Bad Request", "refused", "http://c:4318/v1/logs/v1/logs", /the path repeats \/v1\/logs/],
    [
      "HTTP 415: Unsupported Media Type",
      "misconfigured",
      "http://c:4318/v1/logs",
      /OTEL_EXPORTER_OTLP_PROTOCOL/,
    ],
    ["HTTP 301: redirects to https://c/v1/logs", "misconfigured", "http://c/v1/logs", /redirects/],
    ["gRPC status 16: UNAUTHENTICATED", "misconfigured", "http://c:4317", /OTEL_EXPORTER_OTLP_HEADERS/],
    ["gRPC status 12: UNIMPLEMENTED", "misconfigured", "http://c:4317", /does not take OTLP log exports/],
    ["HTTP 413: too large", "refused", "http://c/v1/logs", /size/],
  ])("%s says its likely cause", (reason, kind, url, cause) => {
    expect(describeExportFailure(url, { kind, reason })).toMatch(cause);
  });
});
