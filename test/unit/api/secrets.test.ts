/**
 * The client secret and access tokens never appear in an error (message, fields, stack), a
 * rejected-record report, a pino log line or a metric. The server here is hostile on purpose: it echoes the
 * secret and the bearer token back in error envelopes and in record values (as debug proxies and some
 * upstreams do), so a client that merely passes server text through would fail these tests.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ApiAuthError, ApiHttpError, ApiNetworkError, ApiSchemaError } from "../../../src/api/errors.js";
import {
  CLIENT_SECRET,
  domain,
  makeClient,
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

/** Every string a user could see from an error. */
function errorText(err: unknown): string {
  const e = err as Error & Record<string, unknown>;
  return [String(e), e.message, e.stack ?? "", JSON.stringify(e), JSON.stringify({ ...e })].join("\n");
}

/** The secret, every issued token, and any 12-character piece of them (a truncated leak counts too). */
function assertNoSecrets(text: string, issuedTokens: string[]): void {
  const needles = [CLIENT_SECRET, ...issuedTokens];
  for (const n of needles) {
    expect(text).not.toContain(n);
    for (let i = 0; i + 12 <= n.length; i++) {
      const piece = n.slice(i, i + 12);
      // The placeholder's own word also names the variables messages point to; that is no leak.
      if (!"SITEHOST_CLIENT_SECRET_FILE".includes(piece)) expect(text).not.toContain(piece);
    }
  }
  // The distinctive placeholder stems, in any form.
  expect(text).not.toContain("q7Zk3vX9");
  expect(text).not.toContain("m4Rt8");
}

describe("secrets stay out of errors, logs and metrics", () => {
  it("auth failure: the token endpoint echoes the secret in its error body", async () => {
    server = await startServer(() => ok(site(1)), {
      token: (req) => ({
        status: 401,
        body: {
          message: `invalid client: ${req.body}`,
          data: null,
          errors: [`client_secret=${CLIENT_SECRET}`],
        },
      }),
    });
    tc = makeClient(server);
    const err = await tc.client.site({ id: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiAuthError);
    assertNoSecrets(errorText(err), []);
    assertNoSecrets(tc.logs.join("\n"), []);
    assertNoSecrets(await tc.registry.metrics(), []);
  });

  it("5xx whose envelope echoes the Authorization header and the secret", async () => {
    server = await startServer((req) => ({
      status: 500,
      body: {
        message: `upstream failed for Authorization: Bearer ${req.token ?? ""}`,
        data: null,
        errors: [`debug: client_secret=${CLIENT_SECRET}`, `token=${req.token ?? ""}`],
      },
    }));
    tc = makeClient(server, { maxRetries: 1 });
    const err = await tc.client.statistics({ id: 4 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiHttpError);
    const issued = server.issued.map((t) => t.token);
    expect(issued).toHaveLength(1);
    assertNoSecrets(errorText(err), issued);
    assertNoSecrets(
      [(err as ApiHttpError).apiMessage ?? "", ...(err as ApiHttpError).apiErrors].join("\n"),
      issued,
    );
    // The rest of the platform's message survives, so the error is still useful.
    expect((err as ApiHttpError).message).toContain(
      `GET ${server.apiUrl}/sites/4/statistics: HTTP 500 (upstream failed for Authorization: Bearer `,
    );
    assertNoSecrets(tc.logs.join("\n"), issued);
    assertNoSecrets(await tc.registry.metrics(), issued);
  });

  it("network errors (socket destroyed) on the API and on the token endpoint", async () => {
    server = await startServer(() => ({ destroy: true }));
    tc = makeClient(server, { maxRetries: 1 });
    const err = await tc.client.domains({ id: 4 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiNetworkError);
    const issued = server.issued.map((t) => t.token);
    assertNoSecrets(errorText(err), issued);
    await tc.client.close();
    await server.close();

    server = await startServer(() => ok(site(1)), { token: () => ({ destroy: true }) });
    tc = makeClient(server, { maxRetries: 1 });
    const err2 = await tc.client.site({ id: 1 }).catch((e: unknown) => e);
    expect(err2).toBeInstanceOf(ApiNetworkError);
    assertNoSecrets(errorText(err2), []);
    assertNoSecrets(tc.logs.join("\n"), []);
  });

  it("schema errors: a record or an object whose bad field holds the token or the secret", async () => {
    server = await startServer((req) => {
      if (req.path.endsWith("/domains")) {
        // Record [1]: domainName must be a string; it holds a list with a long string that ends with the
        // token, so a client that abbreviates before redacting would leak a prefix of it.
        return ok([
          domain("a.example.test"),
          { ...domain("b.example.test"), domainName: [`${"x".repeat(40)}${req.token ?? ""}`] },
        ]);
      }
      return ok({ ...site(2), state: { leaked: CLIENT_SECRET } });
    });
    tc = makeClient(server);
    const list = await tc.client.domains({ id: 2 });
    expect(list.items).toHaveLength(1);
    expect(list.rejected).toBe(1);
    const err = await tc.client.site({ id: 2 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiSchemaError);
    const issued = server.issued.map((t) => t.token);
    expect(issued.length).toBeGreaterThan(0);
    assertNoSecrets(JSON.stringify(list.firstRejected), issued);
    assertNoSecrets(errorText(err), issued);
    assertNoSecrets(tc.logs.join("\n"), issued);
    // The report still says where and what.
    expect(list.firstRejected).toMatchObject({
      endpoint: "/sites/{id}/domains",
      field: "data[1].domainName",
    });
    expect((err as ApiSchemaError).field).toBe("data.state");
  });

  it("a full trace-level log of a normal run (token, 429, retries, revoke) holds no secret", async () => {
    server = await startServer((_r, n) =>
      n === 1
        ? {
            status: 429,
            headers: { "retry-after": "0" },
            body: { message: "Too Many Requests", data: null, errors: null },
          }
        : n === 2
          ? { status: 503, body: { message: "busy", data: null, errors: null } }
          : ok(site(1)),
    );
    tc = makeClient(server);
    await tc.client.site({ id: 1 });
    await tc.client.close();
    const issued = server.issued.map((t) => t.token);
    expect(issued).toEqual([`${TOKEN_PREFIX}-1`]);
    expect(tc.logs.length).toBeGreaterThan(0);
    assertNoSecrets(tc.logs.join("\n"), issued);
    // The revocation did carry the token to the server (where it belongs).
    const revoke = server.seen.find((s) => s.path === "/auth/revoke");
    expect(JSON.parse(revoke?.body ?? "{}")).toMatchObject({
      token: issued[0],
      client_secret: CLIENT_SECRET,
    });
  });
});
