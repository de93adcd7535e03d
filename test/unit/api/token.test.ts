/**
 * Auth: the client-credentials token is cached, refreshed ahead of expiry
 * (margin = min(tokenRefreshMargin, lifetime / 2)), fetched once for many concurrent callers,
 * never sent past its usable window, and a 401 costs exactly one re-auth and one retry. Answers that
 * cannot be used are failures with a cool-down, and a rotated secret file is picked up.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiAuthError, ApiHttpError } from "../../../src/api/errors.js";
import { MIN_REFRESH_INTERVAL_MS, TokenManager, type TokenAnswer } from "../../../src/api/token.js";
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
import { statusOf } from "../server/helpers.js";

let server: TestServer | undefined;
let tc: TestClient | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await tc?.client.close();
  await server?.close();
  tc = undefined;
  server = undefined;
});

/** A TokenManager on a hand-driven clock; each fetch issues `tok-N` with the given expires_in. */
function fakeClockManager(
  expiresInS: number,
  marginMs: number,
  fetchTakesMs = 0,
  answer: (n: number) => TokenAnswer | undefined = () => undefined,
) {
  const clock = { ms: 0 };
  const fetchedAt: number[] = [];
  const results: string[] = [];
  const shortLived: Array<[number, number]> = [];
  const tm = new TokenManager(
    async (): Promise<TokenAnswer> => {
      fetchedAt.push(clock.ms);
      clock.ms += fetchTakesMs;
      return (
        answer(fetchedAt.length) ?? {
          status: 200,
          body: JSON.stringify({ access_token: `tok-${fetchedAt.length}`, expires_in: expiresInS }),
        }
      );
    },
    marginMs,
    {
      onResult: (result) => results.push(result),
      onShortLived: (lifetimeS, everyS) => shortLived.push([lifetimeS, everyS]),
    },
    {
      now: () => clock.ms,
      sleep: async (ms) => {
        clock.ms += ms;
      },
    },
  );
  return { tm, clock, fetchedAt, results, shortLived };
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

  it("expires_in 6 s: the token is used, refreshed at 3 s, and reported once", async () => {
    const { tm, clock, fetchedAt, results, shortLived } = fakeClockManager(6, 60_000);
    expect(await tm.get()).toBe("tok-1");
    clock.ms = 2_999;
    expect(await tm.get()).toBe("tok-1");
    clock.ms = 3_000;
    expect(await tm.get()).toBe("tok-2");
    clock.ms = 6_000;
    expect(await tm.get()).toBe("tok-3");
    expect(fetchedAt).toEqual([0, 3_000, 6_000]);
    expect(results).toEqual(["success", "success", "success"]);
    expect(shortLived).toEqual([[6, 3]]);
  });

  it("a token shorter than the refresh floor: requests stay 2 s apart, callers wait for the next", async () => {
    // expires_in 1 s: half-life 0.5 s, but a new token is asked at most every MIN_REFRESH_INTERVAL_MS.
    const { tm, clock, fetchedAt, shortLived } = fakeClockManager(1, 60_000);
    for (let i = 0; i < 40; i++) {
      await tm.get();
      clock.ms += 250;
    }
    const gaps = fetchedAt.slice(1).map((t, i) => t - (fetchedAt[i] as number));
    expect(gaps.every((g) => g >= MIN_REFRESH_INTERVAL_MS)).toBe(true);
    expect(fetchedAt.length).toBeLessThanOrEqual(Math.ceil(clock.ms / MIN_REFRESH_INTERVAL_MS) + 1);
    expect(shortLived).toEqual([[1, 2]]);
  });

  it("a 1-hour token is not reported as short-lived", async () => {
    const { tm, shortLived } = fakeClockManager(3599, 60_000);
    await tm.get();
    expect(shortLived).toEqual([]);
  });

  it("expires_in as a number in a string is read", async () => {
    const { tm, clock, fetchedAt } = fakeClockManager(3599, 60_000, 0, (n) => ({
      status: 200,
      body: JSON.stringify({ access_token: `tok-${n}`, expires_in: "3599" }),
    }));
    expect(await tm.get()).toBe("tok-1");
    clock.ms = 3_538_999;
    expect(await tm.get()).toBe("tok-1");
    expect(fetchedAt).toEqual([0]);
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

describe("unusable token answers (hand-driven clock)", () => {
  const answers: Array<[string, TokenAnswer]> = [
    [
      "an expires_in of 0.001 s",
      { status: 200, body: JSON.stringify({ access_token: "t", expires_in: 0.001 }) },
    ],
    ["an expires_in of 0", { status: 200, body: JSON.stringify({ access_token: "t", expires_in: 0 }) }],
    [
      "an expires_in that is not a number",
      { status: 200, body: JSON.stringify({ access_token: "t", expires_in: "soon" }) },
    ],
    ["no expires_in", { status: 200, body: JSON.stringify({ access_token: "t" }) }],
    ["a negative expires_in", { status: 200, body: JSON.stringify({ access_token: "t", expires_in: -5 }) }],
    ["no access_token", { status: 200, body: JSON.stringify({ expires_in: 3599 }) }],
    ["an empty access_token", { status: 200, body: JSON.stringify({ access_token: "", expires_in: 3599 }) }],
    ["a body that is not JSON", { status: 200, body: "<html>maintenance</html>" }],
  ];
  it.each(answers)("%s is a failure, and no new request is made during the cool-down", async (_name, bad) => {
    const { tm, clock, fetchedAt, results } = fakeClockManager(3599, 60_000, 0, () => bad);
    await expect(tm.get()).rejects.toBeInstanceOf(ApiAuthError);
    // Callers keep asking (every tailer and collector does); the platform is not asked again at once.
    for (let i = 0; i < 50; i++) {
      clock.ms += 50;
      await expect(tm.get()).rejects.toBeInstanceOf(ApiAuthError);
    }
    expect(fetchedAt).toEqual([0]);
    expect(results).toEqual(["failure"]);
    // After the cool-down (at most 5 s for a first failure) it asks again.
    clock.ms = 5_000;
    await expect(tm.get()).rejects.toBeInstanceOf(ApiAuthError);
    expect(fetchedAt).toEqual([0, 5_000]);
    expect(results).toEqual(["failure", "failure"]);
  });

  it("consecutive failures lengthen the cool-down; a good answer ends it", async () => {
    let good = false;
    const { tm, clock, fetchedAt } = fakeClockManager(3599, 60_000, 0, () =>
      good ? undefined : { status: 200, body: "not json" },
    );
    for (let i = 0; i < 4; i++) {
      await expect(tm.get()).rejects.toThrow();
      clock.ms += 60_000;
    }
    const gaps = fetchedAt.slice(1).map((t, i) => t - (fetchedAt[i] as number));
    expect(gaps.every((g) => g >= 60_000)).toBe(true);
    good = true;
    clock.ms += 600_000;
    expect(await tm.get()).toMatch(/^tok-/);
  });
});

describe("token against a server (loopback)", () => {
  it("refreshes ahead of expiry: no request ever reaches the server with an expired token", async () => {
    // Only Date is faked (timers stay real), so the client and the server see the same jumps.
    vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true });
    // expires_in = 10 s → margin = min(60_000, 10_000 / 2) = 5 s → each token is sent for at most 5 s
    // after its request started. The server rejects tokens 10 s or older with 401.
    server = await startServer(() => ok(site(1)), { expiresIn: 10 });
    tc = makeClient(server);
    // 9 calls at least 2 s apart (0, 2, ..., 16 s): a token usable for < 5 s covers at most 3 of them
    // (0, 2, 4), so at least 9 / 3 = 3 tokens are needed.
    for (let i = 0; i < 9; i++) {
      await tc.client.site({ id: 1 });
      if (i < 8) vi.setSystemTime(Date.now() + 2_000);
    }
    expect(server.rejectedTokens).toEqual([]);
    const api = server.api();
    expect(api).toHaveLength(9);
    for (const req of api) {
      expect(req.token).toMatch(new RegExp(`^${TOKEN_PREFIX.replace(/[<>]/g, "\\$&")}-\\d+$`));
      expect(req.tokenAgeMs).toBeLessThan(10_000);
    }
    expect(server.tokenRequests().length).toBeGreaterThanOrEqual(3);
    // Every token request sent the client credentials in the documented form (JSON body).
    expect(JSON.parse(server.tokenRequests()[0]?.body ?? "{}")).toEqual({
      grant_type: "client_credentials",
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    });
  });

  it("a token that aged while the caller waited (429 pause) is replaced before sending", async () => {
    vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true });
    // expires_in 10 s (usable 5 s). The first API request gets 429 Retry-After: 1, and the clock jumps 6 s
    // while it waits: by then token 1 is past its usable window. The retry must fetch token 2 first.
    server = await startServer(
      (_req, n) => {
        if (n !== 1) return ok(site(1));
        vi.setSystemTime(Date.now() + 6_000);
        return {
          status: 429,
          headers: { "retry-after": "1" },
          body: { message: "Too Many Requests", data: null, errors: null },
        };
      },
      { expiresIn: 10 },
    );
    tc = makeClient(server);
    const got = await tc.client.site({ id: 1 });
    expect(got.id).toBe(1);
    expect(server.rejectedTokens).toEqual([]);
    const api = server.api();
    expect(api.map((r) => r.token)).toEqual([`${TOKEN_PREFIX}-1`, `${TOKEN_PREFIX}-2`]);
    expect(server.tokenRequests()).toHaveLength(2);
  });

  it("a token endpoint answering expires_in: 6 is used: calls succeed, one warning names the lifetime", async () => {
    server = await startServer(() => ok(site(1)), { expiresIn: 6 });
    tc = makeClient(server);
    expect((await tc.client.site({ id: 1 })).id).toBe(1);
    expect((await tc.client.site({ id: 1 })).id).toBe(1);
    expect(server.rejectedTokens).toEqual([]);
    const warnings = tc.logs
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ expiresInSeconds: 6, refreshEverySeconds: 3 });
    expect(String(warnings[0]?.tokenUrl)).toBe(`${server.authUrl}/auth/token`);
  });

  it("ten concurrent calls share one token request", async () => {
    server = await startServer((req) => ok(site(Number(req.path.split("/")[3]))), { tokenDelayMs: 50 });
    tc = makeClient(server, { maxConcurrency: 10 });
    const client = tc.client;
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => client.site({ id: i + 1 })));
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
    const got = await tc.client.site({ id: 3 });
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
    const err = await tc.client.site({ id: 3 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiAuthError);
    expect((err as ApiAuthError).message).toBe(
      `GET ${server.apiUrl}/sites/3: HTTP 401 again after re-authenticating; the token was refused: the API application may have been revoked or lost access`,
    );
    expect(server.tokenRequests()).toHaveLength(2);
    expect(server.seen.filter((s) => s.path === "/v1/sites/3")).toHaveLength(2);
  });

  it("tokens the API refuses (a revoked application) show on the status page as such, not as no token requested yet", async () => {
    let revoked = true;
    server = await startServer(() => ok(site(3)), { revoked: () => revoked });
    tc = makeClient(server);
    const before = Date.now();
    await expect(tc.client.site({ id: 3 })).rejects.toBeInstanceOf(ApiAuthError);
    await expect(tc.client.site({ id: 3 })).rejects.toBeInstanceOf(ApiAuthError);
    const status = tc.client.authStatus();
    expect(status).toMatchObject({
      ok: false,
      lastError: expect.stringContaining("HTTP 401 again after re-authenticating"),
    });
    expect(status.at).toBeGreaterThanOrEqual(before);
    const api = statusOf({ auth: status }).api;
    expect(api).toMatchObject({
      health: "critical",
      lastError: expect.stringContaining("may have been revoked"),
    });
    expect(api.summary).not.toBe("no token requested yet");
    // Access restored: the next call that goes through clears it.
    revoked = false;
    await tc.client.site({ id: 3 });
    expect(tc.client.authStatus()).toEqual({ ok: true });
  });

  it("the token endpoint refusing the credentials → ApiAuthError naming the status", async () => {
    server = await startServer(() => ok(site(1)), {
      token: () => ({ status: 401, body: { message: "invalid_client", data: null, errors: null } }),
    });
    tc = makeClient(server);
    const err = await tc.client.site({ id: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiAuthError);
    expect((err as Error).message).toBe(
      `POST ${server.authUrl}/auth/token: the platform rejected the client credentials (HTTP 401); check api.clientId and the client secret (SITEHOST_CLIENT_ID, SITEHOST_CLIENT_SECRET or SITEHOST_CLIENT_SECRET_FILE)`,
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
    const err = await tc.client.site({ id: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiHttpError);
    expect(err).not.toBeInstanceOf(ApiAuthError);
    expect((err as ApiHttpError).message).toBe(`POST ${server.authUrl}/auth/token: HTTP 503 (maintenance)`);
    // 1 + maxRetries (2) = 3 token requests, no API request.
    expect(server.tokenRequests()).toHaveLength(3);
    expect(server.api()).toHaveLength(0);
    expect(
      await metricValue(tc.registry, "sitehost_exporter_auth_token_requests_total", { result: "failure" }),
    ).toBe(1);
  });
});

describe("credential rotation", () => {
  it("a changed client secret file is used at the next token request, without a restart", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sitehost-secret-"));
    const file = join(dir, "client-secret");
    await writeFile(file, `${CLIENT_SECRET}\n`);
    const rotated = "<CLIENT_SECRET>-rotated-Hq2";
    let accepted = CLIENT_SECRET;
    server = await startServer(() => ok(site(1)), {
      acceptSecret: (secret) => secret === accepted,
      // Rotating the secret on the platform also ends the tokens issued with the old one.
      revoked: (token) => accepted === rotated && token === `${TOKEN_PREFIX}-1`,
    });
    tc = makeClient(server, { clientSecretFile: file });
    expect((await tc.client.site({ id: 1 })).id).toBe(1);
    // The operator rotates the secret: the platform accepts only the new one, the file holds it.
    accepted = rotated;
    await writeFile(file, `${rotated}\n`);
    expect((await tc.client.site({ id: 1 })).id).toBe(1);
    const sent = server
      .tokenRequests()
      .map((r) => (JSON.parse(r.body) as { client_secret: string }).client_secret);
    expect(sent).toEqual([CLIENT_SECRET, rotated]);
    // The new secret never shows in the client's logs.
    expect(tc.logs.join("\n")).not.toContain(rotated);
  });
});
