/**
 * Retries: 5xx and network errors are retried (maxRetries) with backoff, then a clear typed error; a
 * 429's Retry-After (seconds or HTTP date, capped by api.maxRetryAfter) holds EVERY caller of the
 * client; a log page of an open scroll is never retried, a fresh-scroll request is.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiAbortedError, ApiHttpError, ApiNetworkError } from "../../../src/api/errors.js";
import { waitFor } from "../../helpers/wait.js";
import {
  domain,
  makeClient,
  metricValue,
  ok,
  site,
  startServer,
  type Reply,
  type TestClient,
  type TestServer,
} from "./helpers.js";

const INTERNAL = "An internal error occurred while processing your request. Please try again.";
const TOO_MANY = { message: "Too Many Requests", data: null, errors: null };

let server: TestServer | undefined;
let tc: TestClient | undefined;
afterEach(async () => {
  await tc?.client.close();
  await server?.close();
  tc = undefined;
  server = undefined;
});

describe("5xx and network errors", () => {
  it("5xx is retried maxRetries times, then ApiHttpError with the status and the envelope's message", async () => {
    server = await startServer(() => ({
      status: 503,
      body: { message: INTERNAL, data: null, errors: ["backend unavailable"] },
    }));
    tc = makeClient(server, { maxRetries: 2 });
    const err = await tc.client.statistics({ id: 42 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiHttpError);
    const e = err as ApiHttpError;
    expect(e.status).toBe(503);
    expect(e.endpoint).toBe("/sites/{id}/statistics");
    expect(e.apiMessage).toBe(INTERNAL);
    expect(e.apiErrors).toEqual(["backend unavailable"]);
    expect(e.message).toBe(
      `GET ${server.apiUrl}/sites/42/statistics: HTTP 503 (${INTERNAL}; backend unavailable)`,
    );
    // 1 first attempt + maxRetries (2) = 3 requests.
    expect(server.api()).toHaveLength(3);
    expect(
      await metricValue(tc.registry, "sitehost_exporter_api_retries_total", {
        endpoint: "/sites/{id}/statistics",
        reason: "server_error",
      }),
    ).toBe(2);
  });

  it("closing the client ends a wait between retries at once", async () => {
    server = await startServer(() => ({
      status: 503,
      body: { message: INTERNAL, data: null, errors: null },
    }));
    // A minute between retries: only the close can end the wait.
    tc = makeClient(server, { maxRetries: 3, backoffBaseMs: 60_000, backoffCapMs: 60_000 });
    const call = tc.client.statistics({ id: 42 }).catch((e: unknown) => e);
    await waitFor("the first attempt", () => server?.api().length === 1);
    const closedAt = performance.now();
    await tc.client.close();
    const err = await call;
    expect(performance.now() - closedAt).toBeLessThan(5_000);
    expect(err).toBeInstanceOf(ApiAbortedError);
    expect((err as ApiAbortedError).reason).toBe("closed");
    expect(server.api()).toHaveLength(1);
  });

  it("token requests follow the same policy: closing ends their wait between retries too", async () => {
    server = await startServer(() => ok(site(5)), {
      token: () => ({ status: 503, body: { message: INTERNAL, data: null, errors: null } }),
    });
    tc = makeClient(server, { maxRetries: 3, backoffBaseMs: 60_000, backoffCapMs: 60_000 });
    const call = tc.client.site({ id: 5 }).catch((e: unknown) => e);
    await waitFor("the first token request", () => server?.tokenRequests().length === 1);
    const closedAt = performance.now();
    await tc.client.close();
    const err = await call;
    expect(performance.now() - closedAt).toBeLessThan(5_000);
    expect(err).toBeInstanceOf(ApiAbortedError);
    expect(server.tokenRequests()).toHaveLength(1);
    expect(
      await metricValue(tc.registry, "sitehost_exporter_api_retries_total", {
        endpoint: "/auth/token",
        reason: "server_error",
      }),
    ).toBe(1);
  });

  it("a 5xx that clears up: two 500s then 200 → success on the third request", async () => {
    server = await startServer((_r, n) =>
      n <= 2 ? { status: 500, body: { message: INTERNAL, data: null, errors: null } } : ok(site(5)),
    );
    tc = makeClient(server, { maxRetries: 2 });
    expect((await tc.client.site({ id: 5 })).id).toBe(5);
    expect(server.api()).toHaveLength(3);
  });

  it("a 4xx other than 401/429 is not retried", async () => {
    server = await startServer(() => ({
      status: 404,
      body: { message: "We could not locate the requested resources.", data: null, errors: null },
    }));
    tc = makeClient(server, { maxRetries: 2 });
    const err = await tc.client.site({ id: 9 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiHttpError);
    expect((err as ApiHttpError).message).toBe(
      `GET ${server.apiUrl}/sites/9: HTTP 404 (We could not locate the requested resources.)`,
    );
    expect(server.api()).toHaveLength(1);
  });

  it("a network reset (server destroys the socket) is retried and then succeeds", async () => {
    server = await startServer((_r, n) => (n === 1 ? { destroy: true } : ok([domain("a.example.test")])));
    tc = makeClient(server, { maxRetries: 2 });
    const got = await tc.client.domains({ id: 7 });
    expect(got.items.map((d) => d.domainName)).toEqual(["a.example.test"]);
    expect(server.api()).toHaveLength(2);
    expect(
      await metricValue(tc.registry, "sitehost_exporter_api_retries_total", {
        endpoint: "/sites/{id}/domains",
        reason: "network",
      }),
    ).toBe(1);
    expect(
      await metricValue(tc.registry, "sitehost_exporter_api_requests_total", {
        endpoint: "/sites/{id}/domains",
        code: "network_error",
      }),
    ).toBe(1);
  });

  it("resets on every attempt → ApiNetworkError after 1 + maxRetries requests", async () => {
    server = await startServer(() => ({ destroy: true }));
    tc = makeClient(server, { maxRetries: 3 });
    const err = await tc.client.domains({ id: 7 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiNetworkError);
    const host = new URL(server.apiUrl).host;
    // Names the request and what happened to the connection, with the code.
    expect((err as ApiNetworkError).message).toMatch(
      new RegExp(
        `^GET ${server.apiUrl}/sites/7/domains: .*${host}.* \\((ECONNRESET|UND_ERR_SOCKET|\\w+)\\)$`,
      ),
    );
    // 1 + maxRetries (3) = 4.
    expect(server.api()).toHaveLength(4);
  });
});

describe("429 holds every caller", () => {
  async function holdsEveryCaller(retryAfter: (now: number) => { header: string; until: number }) {
    let limitedUntil = 0;
    server = await startServer((_r, n): Reply => {
      if (n !== 1) return ok(n === 2 || n === 3 ? site(1) : site(2));
      const { header, until } = retryAfter(Date.now());
      limitedUntil = until;
      return { status: 429, headers: { "retry-after": header }, body: TOO_MANY };
    });
    tc = makeClient(server, { maxConcurrency: 4 });
    const client = tc.client;
    const a = client.site({ id: 1 });
    // Wait until the client has seen the 429 (its budget is paused), then start an independent caller.
    await vi.waitFor(() => expect(client.budget.pausedUntil).toBeGreaterThan(0), {
      timeout: 5_000,
      interval: 2,
    });
    const bStartedAt = Date.now();
    const b = client.domains({ id: 2 }).catch((e: unknown) => e);
    await a;
    await b;
    // Precondition: B really started inside the window.
    expect(bStartedAt).toBeLessThan(limitedUntil);
    const api = server.api();
    // A's 429, then A's retry and B — each exactly once.
    expect(api).toHaveLength(3);
    expect(api.filter((r) => r.path === "/v1/sites/1")).toHaveLength(2);
    expect(api.filter((r) => r.path === "/v1/sites/2/domains")).toHaveLength(1);
    // Nothing (API or token request) reached the server inside the window.
    const first = api[0]?.arrivedAt ?? 0;
    for (const r of server.seen.filter((s) => s.arrivedAt > first)) {
      expect(r.arrivedAt).toBeGreaterThanOrEqual(limitedUntil);
    }
    expect(
      await metricValue(tc.registry, "sitehost_exporter_api_retries_total", {
        endpoint: "/sites/{id}",
        reason: "rate_limited",
      }),
    ).toBe(1);
  }

  it("Retry-After in seconds (1): no caller sends anything until 1 s after the 429", async () => {
    // Window = the server's send time + 1_000 ms; the client measures from its (later) receipt, so it
    // waits at least that long.
    await holdsEveryCaller((now) => ({ header: "1", until: now + 1_000 }));
  });

  it("Retry-After as an HTTP date: no caller sends anything before that date", async () => {
    // A whole second at least 1.5 s ahead, so the HTTP date (1 s resolution) is exact.
    await holdsEveryCaller((now) => {
      const until = Math.ceil((now + 1_500) / 1_000) * 1_000;
      return { header: new Date(until).toUTCString(), until };
    });
  });
});

describe("a Retry-After longer than api.maxRetryAfter", () => {
  it("is cut to the cap, counted, and shown as the pause's end", async () => {
    let n = 0;
    server = await startServer(() =>
      ++n === 1 ? { status: 429, headers: { "retry-after": "999999" }, body: TOO_MANY } : ok(site(1)),
    );
    tc = makeClient(server, { maxRetryAfterMs: 1_500 });
    const client = tc.client;
    const started = Date.now();
    const call = client.site({ id: 1 });
    await vi.waitFor(() => expect(client.budget.pausedUntil).toBeGreaterThan(0), {
      timeout: 5_000,
      interval: 2,
    });
    // While paused, the gauge says until when (the cap, not 11.6 days).
    const until = await metricValue(tc.registry, "sitehost_exporter_api_paused_until_timestamp_seconds", {});
    expect(until * 1000).toBeGreaterThan(started + 1_000);
    expect(until * 1000).toBeLessThan(started + 3_000);
    expect((await call).id).toBe(1);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(1_400);
    expect(elapsed).toBeLessThan(10_000);
    expect(
      await metricValue(tc.registry, "sitehost_exporter_api_retry_after_capped_total", {
        endpoint: "/sites/{id}",
      }),
    ).toBe(1);
    // The pause is over: the gauge reads 0 again.
    expect(await metricValue(tc.registry, "sitehost_exporter_api_paused_until_timestamp_seconds", {})).toBe(
      0,
    );
    expect(tc.logs.some((l) => l.includes("longer than api.maxRetryAfter"))).toBe(true);
  });
});

describe("log pages", () => {
  const entry = {
    message: "PHP Warning: x",
    severity: "Warning",
    timestamp: "2026-11-22T10:00:00.000Z",
    line: 3,
  };

  it("a page WITH a scroll id is not retried on 5xx: exactly one request reaches the server", async () => {
    server = await startServer(() => ({
      status: 502,
      body: { message: INTERNAL, data: null, errors: null },
    }));
    tc = makeClient(server, { maxRetries: 3 });
    const err = await tc.client.phpLogs({ id: 11, scrollId: "scroll-abc" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiHttpError);
    expect((err as ApiHttpError).status).toBe(502);
    expect((err as ApiHttpError).endpoint).toBe("/sites/{id}/logs/php");
    const api = server.api();
    expect(api).toHaveLength(1);
    expect(api[0]?.query.get("scroll_id")).toBe("scroll-abc");
  });

  it("a page WITH a scroll id is not retried on a network reset either", async () => {
    server = await startServer(() => ({ destroy: true }));
    tc = makeClient(server, { maxRetries: 3 });
    const err = await tc.client.serverLogs({ id: 11, scrollId: "scroll-abc" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiNetworkError);
    expect(server.api()).toHaveLength(1);
  });

  it("a fresh-scroll request (no scroll id) is retried on 5xx", async () => {
    server = await startServer((_r, n) =>
      n === 1
        ? { status: 503, body: { message: INTERNAL, data: null, errors: null } }
        : { status: 200, body: { total_results: 1, logs: [entry], scroll_id: "scroll-next" } },
    );
    tc = makeClient(server, { maxRetries: 3 });
    const page = await tc.client.phpLogs({ id: 11, scrollId: null });
    expect(page.records.record(0)).toEqual(entry);
    expect(page.records).toHaveLength(1);
    expect(page.scrollId).toBe("scroll-next");
    expect(page.totalResults).toBe(1);
    const api = server.api();
    expect(api).toHaveLength(2);
    expect(api.every((r) => r.path === "/v1/sites/11/logs/php" && !r.query.has("scroll_id"))).toBe(true);
  });
});
