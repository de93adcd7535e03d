/**
 * Issue #2 — auth: the client-credentials token is cached, refreshed ahead of expiry
 * (margin = min(tokenRefreshMargin, lifetime / 2)), fetched once for many concurrent callers,
 * never sent past its usable window, and a 401 costs exactly one re-auth and one retry.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ApiAuthError, ApiHttpError } from "../../../src/api/errors.js";
import { TokenManager, type TokenFetchResult } from "../../../src/api/token.js";
import {
  CLIENT_ID,
  CLIENT_SECRET,
  makeClient,
  metricValue,
  ok,
  site,
  startServer,
  TOKEN_PREFIX,
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

/** A TokenManager on a hand-driven clock; each fetch issues `tok-N` with the given expires_in. */
function fakeClockManager(expiresInS: number, marginMs: number, fetchTakesMs = 0) {
  const clock = { ms: 0 };
  const fetchedAt: number[] = [];
  const tm = new TokenManager(
    async (): Promise<TokenFetchResult> => {
      fetchedAt.push(clock.ms);
      clock.ms += fetchTakesMs;
      return { status: 200, body: { access_token: `tok-${fetchedAt.length}`, expires_in: expiresInS } };
    },
    marginMs,
    () => clock.ms,
  );
  return { tm, clock, fetchedAt };
}

describe("TokenManager refresh window (hand-driven clock)", () => {
  it("1-hour token, 60 s margin: reused until 3539 s, refreshed at 3539 s", async () => {
    // lifetime = 3599 s = 3_599_000 ms; margin = min(60_000, 3_599_000 / 2) = 60_000;
    // usable until 0 + 3_599_000 - 60_000 = 3_539_000 ms.
    const { tm, clock, fetchedAt } = fakeClockManager(3599, 60_000);
    expect(await tm.get()).toBe("tok-1");
    clock.ms = 3_538_999;
    expect(await tm.get()).toBe("tok-1");
    expect(tm.isUsable("tok-1")).toBe(true);
    clock.ms = 3_539_000;
    expect(tm.isUsable("tok-1")).toBe(false);
    expect(await tm.get()).toBe("tok-2");
    expect(fetchedAt).toEqual([0, 3_539_000]);
  });

  it("short-lived token: the margin shrinks to half the lifetime", async () => {
    // lifetime = 10 s; margin = min(60_000, 10_000 / 2) = 5_000; usable until 5_000 ms.
    const { tm, clock, fetchedAt } = fakeClockManager(10, 60_000);
    expect(await tm.get()).toBe("tok-1");
    clock.ms = 4_999;
    expect(await tm.get()).toBe("tok-1");
    clock.ms = 5_000;
    expect(await tm.get()).toBe("tok-2");
    expect(fetchedAt).toEqual([0, 5_000]);
  });

  it("the lifetime counts from when the request started, not when the answer came", async () => {
    // The fetch takes 2_000 ms. lifetime 10 s, margin 5 s, start 0 → usable until 0 + 10_000 - 5_000 = 5_000
    // (not 7_000, which counting from the answer would give).
    const { tm, clock, fetchedAt } = fakeClockManager(10, 60_000, 2_000);
    expect(await tm.get()).toBe("tok-1");
    expect(clock.ms).toBe(2_000);
    clock.ms = 4_999;
    expect(await tm.get()).toBe("tok-1");
    clock.ms = 5_000;
    expect(await tm.get()).toBe("tok-2");
    expect(fetchedAt).toEqual([0, 5_000]);
  });

  it("invalidate() forgets only the token that got the 401", async () => {
    const { tm } = fakeClockManager(3599, 60_000);
    expect(await tm.get()).toBe("tok-1");
    tm.invalidate("some-older-token");
    expect(await tm.get()).toBe("tok-1");
    tm.invalidate("tok-1");
    expect(tm.isUsable("tok-1")).toBe(false);
    expect(await tm.get()).toBe("tok-2");
  });
});

describe("token against a server (loopback)", () => {
  it("refreshes ahead of expiry: no request ever reaches the server with an expired token", async () => {
    // expires_in = 1 s → margin = min(60_000, 1_000 / 2) = 500 ms → each token is sent for at most 500 ms
    // after its request started. The server rejects tokens 1_000 ms or older with 401.
    server = await startServer(() => ok(site(1)), { expiresIn: 1 });
    tc = makeClient(server);
    // 9 calls at least 200 ms apart (0, 200, ..., 1_600 ms): a token usable for < 500 ms covers at most
    // 3 of them (0, 200, 400), so at least 9 / 3 = 3 tokens are needed.
    for (let i = 0; i < 9; i++) {
      await tc.client.getSite(1);
      if (i < 8) await new Promise((r) => setTimeout(r, 200));
    }
    expect(server.rejectedTokens).toEqual([]);
    const api = server.api();
    expect(api).toHaveLength(9);
    for (const req of api) {
      expect(req.token).toMatch(new RegExp(`^${TOKEN_PREFIX.replace(/[<>]/g, "\\$&")}-\\d+$`));
      expect(req.tokenAgeMs).toBeLessThan(1_000);
    }
    expect(server.tokenRequests().length).toBeGreaterThanOrEqual(3);
    // Every token request sent the client credentials as the spec's form (JSON body).
    expect(JSON.parse(server.tokenRequests()[0]?.body ?? "{}")).toEqual({
      grant_type: "client_credentials",
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    });
  });

  it("a token that aged while the caller waited (429 pause) is replaced before sending", async () => {
    // expires_in 1 s (usable 500 ms). The first API request gets 429 Retry-After: 1, so the retry waits
    // ≥ 1_000 ms: by then token 1 is expired on the server. The retry must fetch token 2 first.
    server = await startServer(
      (_req, n) =>
        n === 1
          ? {
              status: 429,
              headers: { "retry-after": "1" },
              body: { message: "Too Many Requests", data: null, errors: null },
            }
          : ok(site(1)),
      { expiresIn: 1 },
    );
    tc = makeClient(server);
    const got = await tc.client.getSite(1);
    expect(got.id).toBe(1);
    expect(server.rejectedTokens).toEqual([]);
    const api = server.api();
    expect(api.map((r) => r.token)).toEqual([`${TOKEN_PREFIX}-1`, `${TOKEN_PREFIX}-2`]);
    expect(server.tokenRequests()).toHaveLength(2);
  });

  it("ten concurrent calls share one token request", async () => {
    server = await startServer((req) => ok(site(Number(req.path.split("/")[3]))), { tokenDelayMs: 50 });
    tc = makeClient(server, { maxConcurrency: 10 });
    const client = tc.client;
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => client.getSite(i + 1)));
    expect(results.map((s) => s.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(server.tokenRequests()).toHaveLength(1);
    expect(new Set(server.api().map((r) => r.token))).toEqual(new Set([`${TOKEN_PREFIX}-1`]));
    expect(
      await metricValue(tc.registry, "sitehost_exporter_auth_token_requests_total", { result: "success" }),
    ).toBe(1);
  });

  it("401 → one re-authentication and one retry → success", async () => {
    // Token 1 is revoked on the server (valid by its clock, refused anyway); token 2 works.
    server = await startServer(() => ok(site(3)), { revoked: (t) => t === `${TOKEN_PREFIX}-1` });
    tc = makeClient(server);
    const got = await tc.client.getSite(3);
    expect(got.name).toBe("site-3");
    expect(server.tokenRequests()).toHaveLength(2);
    // The server saw two API requests: the refused one with token 1, the retry with token 2.
    const api = server.seen.filter((s) => s.path === "/v1/sites/3");
    expect(api.map((r) => r.token)).toEqual([`${TOKEN_PREFIX}-1`, `${TOKEN_PREFIX}-2`]);
    expect(
      await metricValue(tc.registry, "sitehost_exporter_api_retries_total", {
        endpoint: "/sites/{id}",
        reason: "auth",
      }),
    ).toBe(1);
  });

  it("a second 401 after re-authenticating → ApiAuthError, no third attempt", async () => {
    server = await startServer(() => ok(site(3)), { revoked: () => true });
    tc = makeClient(server);
    const err = await tc.client.getSite(3).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiAuthError);
    expect((err as ApiAuthError).message).toBe("/sites/{id}: HTTP 401 again after re-authenticating");
    expect(server.tokenRequests()).toHaveLength(2);
    expect(server.seen.filter((s) => s.path === "/v1/sites/3")).toHaveLength(2);
  });

  it("the token endpoint refusing the credentials → ApiAuthError naming the status", async () => {
    server = await startServer(() => ok(site(1)), {
      token: () => ({ status: 401, body: { message: "invalid_client", data: null, errors: null } }),
    });
    tc = makeClient(server);
    const err = await tc.client.getSite(1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiAuthError);
    expect((err as Error).message).toBe(
      "/auth/token: the platform rejected the client credentials (HTTP 401)",
    );
    expect(server.api()).toHaveLength(0);
    expect(
      await metricValue(tc.registry, "sitehost_exporter_auth_token_requests_total", { result: "failure" }),
    ).toBe(1);
  });

  it("the token endpoint failing with 5xx is retried, then an ApiHttpError — not an auth error", async () => {
    // The credentials may be fine: `once` must say the platform failed, not "authentication failed".
    server = await startServer(() => ok(site(1)), {
      token: () => ({ status: 503, body: { message: "maintenance", data: null, errors: null } }),
    });
    tc = makeClient(server, { maxRetries: 2 });
    const err = await tc.client.getSite(1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiHttpError);
    expect(err).not.toBeInstanceOf(ApiAuthError);
    expect((err as ApiHttpError).message).toBe("/auth/token: HTTP 503 (maintenance)");
    // 1 + maxRetries (2) = 3 token requests, no API request.
    expect(server.tokenRequests()).toHaveLength(3);
    expect(server.api()).toHaveLength(0);
    expect(
      await metricValue(tc.registry, "sitehost_exporter_auth_token_requests_total", { result: "failure" }),
    ).toBe(1);
  });
});
