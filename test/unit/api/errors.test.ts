/**
 * Errors name what to fix: the request as sent (full URL, never credentials), what the network error
 * means for which host, and for a 404 on a base without /v1 or on the token endpoint, which setting to
 * check.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ApiHttpError, ApiNetworkError, describeNetworkError } from "../../../src/api/errors.js";
import { displayUrl } from "../../../src/api/redact.js";
import { refusedPort } from "../../helpers/ports.js";
import { makeClient, ok, site, startServer, type TestClient, type TestServer } from "./helpers.js";

let server: TestServer | undefined;
let tc: TestClient | undefined;
afterEach(async () => {
  await tc?.client.close();
  await server?.close();
  tc = undefined;
  server = undefined;
});

describe("API errors name what to fix", () => {
  it("an API URL without /v1: the 404 says to check api.url and shows the URL it should be", async () => {
    server = await startServer(() => ({
      status: 404,
      body: { message: "We could not locate the requested resources.", data: null, errors: null },
    }));
    const base = server.apiUrl.replace(/\/v1$/, "");
    tc = makeClient(server, { apiUrl: base });
    const err = await tc.client.allSites().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiHttpError);
    expect((err as Error).message).toBe(
      `GET ${base}/sites?paginate=true&page=1&per_page=100: HTTP 404 (We could not locate the requested resources.); the API base URL must end in /v1: check api.url (SITEHOST_API_URL), e.g. ${base}/v1`,
    );
  });

  it("a 404 under a base that ends in /v1 has no such hint (a site that has none of that data)", async () => {
    server = await startServer(() => ({
      status: 404,
      body: { message: "Not found", data: null, errors: null },
    }));
    tc = makeClient(server);
    const err = await tc.client.domains({ id: 3 }).catch((e: unknown) => e);
    expect((err as Error).message).toBe(`GET ${server.apiUrl}/sites/3/domains: HTTP 404 (Not found)`);
  });

  it("a token endpoint that is not there (wrong api.authUrl): the 404 says to check api.authUrl", async () => {
    server = await startServer(() => ok(site(1)));
    const nowhere = createServer((_req, res) => {
      res.writeHead(404, { "content-type": "text/html" });
      res.end("<h1>Not Found</h1>");
    });
    await new Promise<void>((r) => nowhere.listen(0, "127.0.0.1", r));
    const authUrl = `http://127.0.0.1:${(nowhere.address() as AddressInfo).port}/v1`;
    try {
      tc = makeClient(server, { authUrl });
      const err = await tc.client.site({ id: 1 }).catch((e: unknown) => e);
      expect((err as Error).message).toBe(
        `POST ${authUrl}/auth/token: token request failed (HTTP 404); check api.authUrl (SITEHOST_AUTH_URL): the host root the token endpoint is under, without /v1`,
      );
    } finally {
      nowhere.closeAllConnections();
      await new Promise((r) => nowhere.close(r));
    }
  });

  it("a 403 says the API application lacks a scope or role", async () => {
    server = await startServer(() => ({
      status: 403,
      body: { message: "Forbidden", data: null, errors: null },
    }));
    tc = makeClient(server);
    const err = await tc.client.pluginAlerts({ id: 5 }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(
      /HTTP 403 \(Forbidden\); the API application lacks a scope or role/,
    );
  });

  it("nothing listening: the URL and the host:port, never the URL's credentials", async () => {
    const port = await refusedPort();
    server = await startServer(() => ok(site(1)));
    const apiUrl = `http://user:hunter2-pass@127.0.0.1:${port}/v1`;
    tc = makeClient(server, { apiUrl, maxRetries: 0 });
    const err = await tc.client.site({ id: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiNetworkError);
    expect((err as Error).message).toBe(
      `GET http://127.0.0.1:${port}/v1/sites/1: connection refused: nothing listens at 127.0.0.1:${port} (ECONNREFUSED); check the host and port in api.url (SITEHOST_API_URL), and that the server there is up`,
    );
    expect((err as Error).message).not.toContain("hunter2");
  });

  it("network codes in words naming the host", () => {
    expect(describeNetworkError("ENOTFOUND", "https://api.sitehost.example/v1/sites")).toBe(
      "the host api.sitehost.example could not be resolved (DNS: no such host) (ENOTFOUND)",
    );
    expect(describeNetworkError("CERT_HAS_EXPIRED", "https://api.sitehost.example/v1")).toBe(
      "the TLS certificate of api.sitehost.example (port 443) has expired (CERT_HAS_EXPIRED)",
    );
    expect(describeNetworkError("EWEIRD", "http://10.0.0.1:8080/x")).toBe(
      "network error (EWEIRD) reaching 10.0.0.1:8080",
    );
  });

  it("URLs as messages show them: no userinfo, token-like query values replaced", () => {
    expect(displayUrl("https://me:pw@api.example/v1/sites?token=abc&page=2")).toBe(
      "https://api.example/v1/sites?token=redacted&page=2",
    );
  });
});
