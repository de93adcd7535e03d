/**
 * nock 15 intercepts undici's `request` with the client's own Agent (this test would fail with a DNS
 * error for api.example.test otherwise, since net connect is disabled).
 * The rest of the API tests use loopback `node:http` servers anyway: they need real sockets to measure
 * requests in flight, destroy connections and stamp arrival times.
 */
import nock from "nock";
import pino from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createApiClient } from "../../../src/api/client.js";

beforeAll(() => nock.disableNetConnect());
afterAll(() => {
  nock.cleanAll();
  nock.enableNetConnect();
});

it("nock: 401 → one re-auth → retry with the new token → success", async () => {
  const account = {
    maxSites: 10,
    capacity: { sites: { maxBillable: 10, maxStaging: 5, billable: 3, staging: 1, total: 4 } },
  };
  const scope = nock("http://api.example.test")
    .post("/auth/token")
    .reply(200, { access_token: "<ACCESS_TOKEN>-one", expires_in: 3599 })
    .get("/v1/account")
    .matchHeader("authorization", "Bearer <ACCESS_TOKEN>-one")
    .reply(401, { message: "Unauthenticated.", data: null, errors: null })
    .post("/auth/token")
    .reply(200, { access_token: "<ACCESS_TOKEN>-two", expires_in: 3599 })
    .get("/v1/account")
    .matchHeader("authorization", "Bearer <ACCESS_TOKEN>-two")
    .reply(200, { message: "Success", data: account, errors: null })
    .post("/auth/revoke", { token: "<ACCESS_TOKEN>-two", client_id: "id", client_secret: "<CLIENT_SECRET>" })
    .reply(200);
  const client = createApiClient({
    apiUrl: "http://api.example.test/v1",
    authUrl: "http://api.example.test",
    clientId: "id",
    clientSecret: "<CLIENT_SECRET>",
    timeoutMs: 2_000,
    maxResponseBytes: 1024 * 1024,
    maxRetryAfterMs: 60_000,
    maxConcurrency: 2,
    maxRequestsPerSecond: 100,
    maxRetries: 0,
    tokenRefreshMarginMs: 60_000,
    registry: new Registry(),
    logger: pino({ level: "silent" }),
  });
  const got = await client.account();
  expect(got.capacity?.sites.total).toBe(4);
  await client.close();
  expect(scope.pendingMocks()).toEqual([]);
});
