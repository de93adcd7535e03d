/**
 * Network errors name their likely fix and the setting of the URL, with real servers on 127.0.0.1:
 * a closed port (refused), a plain HTTP server addressed with https://, a TLS server addressed with
 * http://, a server answering bytes that are not HTTP; and a client told to fail fast does not retry
 * what no retry mends.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { createServer as createTcpServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ApiNetworkError, describeNetworkError, networkErrorFix } from "../../../src/api/errors.js";
import { refusedPort } from "../../helpers/ports.js";
import { selfSignedServerCert } from "../../helpers/tls.js";
import {
  makeClient,
  metricValue,
  ok,
  site,
  startServer,
  type TestClient,
  type TestServer,
} from "./helpers.js";

const API = "api.url (SITEHOST_API_URL)";
const TOKEN_ON_API_HOST = "api.url (SITEHOST_API_URL; the token endpoint is on its host)";
const AUTH = "api.authUrl (SITEHOST_AUTH_URL)";

const dir = mkdtempSync(join(tmpdir(), "sitehost-neterr-"));
const servers: { close(cb: () => void): unknown }[] = [];
let tls: Server;
let garbage: ReturnType<typeof createTcpServer>;
let server: TestServer | undefined;
let tc: TestClient | undefined;

const portOf = (s: { address(): unknown }) => (s.address() as AddressInfo).port;
const listen = <S extends { listen(port: number, host: string, cb: () => void): unknown }>(s: S) =>
  new Promise<S>((r) => s.listen(0, "127.0.0.1", () => r(s)));

beforeAll(async () => {
  selfSignedServerCert(dir);
  tls = await listen(
    createHttpsServer(
      { key: readFileSync(join(dir, "server.key")), cert: readFileSync(join(dir, "server.pem")) },
      (_req, res) => res.end("{}"),
    ),
  );
  // What a TLS server sends a client that did not start a handshake: an alert record, no HTTP.
  garbage = await listen(
    createTcpServer((socket) => {
      socket.on("error", () => undefined);
      socket.once("data", () => socket.end(Buffer.from([0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x46])));
    }),
  );
  servers.push(tls, garbage);
});
afterAll(async () => {
  for (const s of servers) await new Promise<void>((r) => s.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await tc?.client.close();
  await server?.close();
  tc = undefined;
  server = undefined;
});

/** The error of one API call by a client at `apiUrl` / `authUrl` (the test server's by default). */
async function failure(
  urls: { apiUrl?: string; authUrl?: string },
  failFast = false,
): Promise<ApiNetworkError> {
  server ??= await startServer(() => ok(site(1)));
  tc = makeClient(server, { ...urls, maxRetries: 0, failFast });
  const err = await tc.client.site({ id: 1 }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ApiNetworkError);
  return err as ApiNetworkError;
}

describe("network errors name the fix and the URL", () => {
  it("a closed port: refused, check the host and port, and that the server is up", async () => {
    const root = `http://127.0.0.1:${await refusedPort()}`;
    const err = await failure({ apiUrl: `${root}/v1`, authUrl: root });
    expect(err.message).toBe(
      `POST ${root}/auth/token: connection refused: nothing listens at ${root.slice(7)} (ECONNREFUSED); check the host and port in ${TOKEN_ON_API_HOST}, and that the server there is up`,
    );
  });

  it("an https:// URL to a plain HTTP server: check the scheme of api.url", async () => {
    server = await startServer(() => ok(site(1)));
    const apiUrl = server.apiUrl.replace("http://", "https://");
    const err = await failure({ apiUrl });
    expect(err.code).toBe("ERR_SSL_WRONG_VERSION_NUMBER");
    expect(err.message).toBe(
      `GET ${apiUrl}/sites/1: ${apiUrl.slice(8, -3)} does not speak TLS (an https:// URL to a plain HTTP port, usually) (ERR_SSL_WRONG_VERSION_NUMBER); check the scheme (https:// or http://) of ${API}`,
    );
  });

  it("the token endpoint's URL with the wrong scheme names api.authUrl when it was set apart", async () => {
    server = await startServer(() => ok(site(1)));
    const authUrl = server.authUrl.replace("http://", "https://");
    const err = await failure({ authUrl });
    expect(err.message).toMatch(/^POST https:\/\/127\.0\.0\.1:\d+\/auth\/token: .* does not speak TLS /);
    expect(err.message).toMatch(
      new RegExp(`; check the scheme \\(https:// or http://\\) of ${escape(AUTH)}$`),
    );
  });

  it("an http:// URL to a TLS port: the server closes without answering; check the scheme", async () => {
    const root = `http://127.0.0.1:${portOf(tls)}`;
    const err = await failure({ apiUrl: `${root}/v1`, authUrl: root });
    expect(err.message).toBe(
      `POST ${root}/auth/token: ${root.slice(7)} closed the connection without answering (a plain http:// request to a TLS port, usually) (UND_ERR_SOCKET); check the scheme (https:// or http://) of ${TOKEN_ON_API_HOST}`,
    );
  });

  it("an http:// URL to a port answering in TLS records: not HTTP; check the scheme", async () => {
    const root = `http://127.0.0.1:${portOf(garbage)}`;
    const err = await failure({ apiUrl: `${root}/v1`, authUrl: root });
    expect(err.code).toMatch(/^(HPE_|HTTPParserError)/);
    expect(err.message).toContain(`${root.slice(7)} answered something that is not HTTP`);
    expect(err.message).toMatch(
      /; check the scheme \(https:\/\/ or http:\/\/\) of api\.url \(SITEHOST_API_URL;/,
    );
  });

  it("DNS: the host name as written, and the machine's DNS when it fails for now", () => {
    const url = "https://api.sitehost.exmaple/v1/sites";
    expect(describeNetworkError("ENOTFOUND", url)).toBe(
      "the host api.sitehost.exmaple could not be resolved (DNS: no such host) (ENOTFOUND)",
    );
    expect(networkErrorFix("ENOTFOUND", url, API)).toBe(
      `check the host name as written in ${API}: "api.sitehost.exmaple"`,
    );
    expect(networkErrorFix("EAI_AGAIN", url, API)).toBe(
      `check this machine's DNS, and the host name as written in ${API}: "api.sitehost.exmaple"`,
    );
    // A reset or a certificate problem: the description says what is wrong; no setting to change.
    expect(networkErrorFix("ECONNRESET", url, API)).toBeUndefined();
    expect(networkErrorFix("CERT_HAS_EXPIRED", url, API)).toBeUndefined();
  });

  it("OTLP endpoints: the scheme fix names the OTLP settings", async () => {
    const { describeExportFailure } = await import("../../../src/logs/otlp/failureText.js");
    expect(
      describeExportFailure("https://127.0.0.1:4318/v1/logs", { reason: "ERR_SSL_WRONG_VERSION_NUMBER" }),
    ).toBe(
      "OTLP export to https://127.0.0.1:4318/v1/logs failed: 127.0.0.1:4318 does not speak TLS (an https:// URL to a plain HTTP port, usually) (ERR_SSL_WRONG_VERSION_NUMBER); check the scheme (https:// or http://) of OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_LOGS_ENDPOINT)",
    );
  });
});

describe("failFast: what no retry mends fails at once", () => {
  it("refused: one attempt, no backoff, where the client would otherwise retry", async () => {
    const root = `http://127.0.0.1:${await refusedPort()}`;
    server = await startServer(() => ok(site(1)));
    tc = makeClient(server, {
      apiUrl: `${root}/v1`,
      authUrl: root,
      maxRetries: 4,
      backoffBaseMs: 2_000,
      backoffCapMs: 2_000,
      failFast: true,
    });
    const started = performance.now();
    await expect(tc.client.site({ id: 1 })).rejects.toBeInstanceOf(ApiNetworkError);
    expect(performance.now() - started).toBeLessThan(1_500);
    expect(
      await metricValue(tc.registry, "sitehost_exporter_api_retries_total", {
        endpoint: "/auth/token",
        reason: "network",
      }),
    ).toBe(0);
  });

  it("a scheme mismatch fails at once too; without failFast, refused is retried", async () => {
    server = await startServer(() => ok(site(1)));
    tc = makeClient(server, {
      apiUrl: server.apiUrl.replace("http://", "https://"),
      maxRetries: 4,
      backoffBaseMs: 2_000,
      backoffCapMs: 2_000,
      failFast: true,
    });
    const started = performance.now();
    await expect(tc.client.site({ id: 1 })).rejects.toBeInstanceOf(ApiNetworkError);
    expect(performance.now() - started).toBeLessThan(1_500);
    await tc.client.close();

    const root = `http://127.0.0.1:${await refusedPort()}`;
    tc = makeClient(server, { apiUrl: `${root}/v1`, authUrl: root, maxRetries: 2 });
    await expect(tc.client.site({ id: 1 })).rejects.toBeInstanceOf(ApiNetworkError);
    expect(
      await metricValue(tc.registry, "sitehost_exporter_api_retries_total", {
        endpoint: "/auth/token",
        reason: "network",
      }),
    ).toBe(2);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
