/**
 * self-metrics under their contract names and labels (docs/metrics.md): requests by route template and code,
 * the duration histogram, retries by reason, token requests by result; never a raw site id in a label.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  makeClient,
  metricValue,
  ok,
  domain,
  site,
  startServer,
  type TestClient,
  type TestServer,
} from "./helpers.js";

let server: TestServer | undefined;
let tc: TestClient | undefined;
afterEach(async () => {
  await tc?.client.close();
  await server?.close();
  tc = undefined;
  server = undefined;
});

describe("self-metrics", () => {
  it("names, labels and counts after a scripted run", async () => {
    // Script: GET /sites/7/domains → 200. GET /sites/7 → 503, 503, 200 (maxRetries 2).
    // GET /sites/8 → 429 Retry-After 0, then 200. GET /sites/9 → socket destroyed, then 200.
    const perPath = new Map<string, number>();
    server = await startServer((req) => {
      const n = (perPath.get(req.path) ?? 0) + 1;
      perPath.set(req.path, n);
      if (req.path === "/v1/sites/7/domains") return ok([domain("a.example.test")]);
      if (req.path === "/v1/sites/7")
        return n <= 2 ? { status: 503, body: { message: "busy", data: null, errors: null } } : ok(site(7));
      if (req.path === "/v1/sites/8")
        return n === 1
          ? {
              status: 429,
              headers: { "retry-after": "0" },
              body: { message: "slow down", data: null, errors: null },
            }
          : ok(site(8));
      if (req.path === "/v1/sites/9") return n === 1 ? { destroy: true } : ok(site(9));
      return { status: 404 };
    });
    tc = makeClient(server, { maxRetries: 2 });
    await tc.client.domains({ id: 7 });
    await tc.client.site({ id: 7 });
    await tc.client.site({ id: 8 });
    await tc.client.site({ id: 9 });
    const text = await tc.registry.metrics();
    const lines = text.split("\n");
    const has = (line: string) => expect(lines).toContain(line);

    has("# TYPE sitehost_exporter_api_requests_total counter");
    has('sitehost_exporter_api_requests_total{endpoint="/auth/token",code="200"} 1');
    has('sitehost_exporter_api_requests_total{endpoint="/sites/{id}/domains",code="200"} 1');
    // /sites/{id}: 7 → 503, 503, 200; 8 → 429, 200; 9 → network_error, 200. 200s: 3.
    has('sitehost_exporter_api_requests_total{endpoint="/sites/{id}",code="503"} 2');
    has('sitehost_exporter_api_requests_total{endpoint="/sites/{id}",code="429"} 1');
    has('sitehost_exporter_api_requests_total{endpoint="/sites/{id}",code="network_error"} 1');
    has('sitehost_exporter_api_requests_total{endpoint="/sites/{id}",code="200"} 3');

    has("# TYPE sitehost_exporter_api_request_duration_seconds histogram");
    // Every attempt is observed: /sites/{id} = 3 + 2 + 2 = 7; /sites/{id}/domains = 1; /auth/token = 1.
    has('sitehost_exporter_api_request_duration_seconds_count{endpoint="/sites/{id}"} 7');
    has('sitehost_exporter_api_request_duration_seconds_count{endpoint="/sites/{id}/domains"} 1');
    has('sitehost_exporter_api_request_duration_seconds_count{endpoint="/auth/token"} 1');
    has('sitehost_exporter_api_request_duration_seconds_bucket{le="+Inf",endpoint="/sites/{id}"} 7');

    has("# TYPE sitehost_exporter_api_retries_total counter");
    has('sitehost_exporter_api_retries_total{endpoint="/sites/{id}",reason="server_error"} 2');
    has('sitehost_exporter_api_retries_total{endpoint="/sites/{id}",reason="rate_limited"} 1');
    has('sitehost_exporter_api_retries_total{endpoint="/sites/{id}",reason="network"} 1');

    has("# TYPE sitehost_exporter_auth_token_requests_total counter");
    has('sitehost_exporter_auth_token_requests_total{result="success"} 1');

    has("# TYPE sitehost_exporter_api_invalid_records_total counter");
    has("sitehost_exporter_api_in_flight_requests 0");

    // Route templates only: no raw ids in any label.
    expect(text).not.toMatch(/endpoint="\/sites\/\d/);
  });

  it("token request failures are counted under result=failure", async () => {
    server = await startServer(() => ok(site(1)), {
      token: () => ({ status: 403, body: { message: "no" } }),
    });
    tc = makeClient(server);
    await expect(tc.client.site({ id: 1 })).rejects.toThrow(
      `POST ${server.authUrl}/auth/token: the platform rejected the client credentials (HTTP 403)`,
    );
    const lines = (await tc.registry.metrics()).split("\n");
    expect(lines).toContain('sitehost_exporter_auth_token_requests_total{result="failure"} 1');
    expect(lines).toContain('sitehost_exporter_api_requests_total{endpoint="/auth/token",code="403"} 1');
  });

  it("two clients on one registry share the metric families (no duplicate-registration crash)", async () => {
    server = await startServer(() => ok(site(1)));
    tc = makeClient(server);
    const { createApiClient } = await import("../../../src/api/client.js");
    const second = createApiClient({
      apiUrl: server.apiUrl,
      authUrl: server.authUrl,
      clientId: "x",
      clientSecret: "y",
      timeoutMs: 1_000,
      maxResponseBytes: 1024 * 1024,
      maxRetryAfterMs: 60_000,
      maxConcurrency: 1,
      maxRequestsPerSecond: 10,
      maxRetries: 0,
      tokenRefreshMarginMs: 60_000,
      registry: tc.registry,
      logger: (await import("pino")).default({ level: "silent" }),
    });
    await tc.client.site({ id: 1 });
    await second.site({ id: 1 });
    await second.close();
    expect((await tc.registry.metrics()).split("\n")).toContain(
      'sitehost_exporter_api_requests_total{endpoint="/sites/{id}",code="200"} 2',
    );
  });

  it("a log page's records that do not fit are counted when first needed, or all at once for a backlog", async () => {
    const good = { timestamp: "2026-11-24T10:00:01Z", message: "ok" };
    const bad = { timestamp: "2026-11-24T10:00:00Z", message: false };
    server = await startServer(() => ({ status: 200, body: { logs: [good, bad, bad], scroll_id: "s" } }));
    const client = makeClient(server);
    tc = client;
    const invalid = () =>
      metricValue(client.registry, "sitehost_exporter_api_invalid_records_total", {
        endpoint: "/sites/{id}/logs/php",
        field: "message",
      });
    // A quiet stream's page: nothing checked until a read asks for a record.
    const page = await client.client.phpLogs({ id: 1, scrollId: null });
    expect(await invalid()).toBe(0);
    expect(page.records.record(0)).toEqual(good);
    expect(page.records.record(1)).toBeUndefined();
    expect(page.records.record(1)).toBeUndefined();
    expect(await invalid()).toBe(1);
    // A backlog's page: decoded whole, every record checked at once.
    const whole = await client.client.phpLogs({ id: 1, scrollId: null }, { recordsMostlyNew: true });
    expect(whole.records).toHaveLength(1);
    expect(whole.rejected).toBe(2);
    expect(await invalid()).toBe(3);
  });
});
