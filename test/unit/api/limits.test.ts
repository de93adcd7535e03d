/**
 * Limits that keep a hostile or broken platform from taking the exporter down: a total deadline per
 * request (a body trickling one byte at a time cannot hold a place in the budget), a response size
 * limit (an endless body costs at most the limit), and validation of huge lists that never holds up
 * the event loop, with one summarised warning per response.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { afterEach, describe, expect, it } from "vitest";
import { ApiResponseTooLargeError, ApiTimeoutError } from "../../../src/api/errors.js";
import { domain, makeClient, metricValue, type TestClient, type TestServer } from "./helpers.js";

let raw: Server | undefined;
let tc: TestClient | undefined;
const timers: NodeJS.Timeout[] = [];
afterEach(async () => {
  for (const t of timers.splice(0)) clearInterval(t);
  await tc?.client.close();
  raw?.closeAllConnections();
  await new Promise<void>((r) => (raw ? raw.close(() => r()) : r()));
  tc = undefined;
  raw = undefined;
});

/** A platform whose token endpoint works and whose API answers with `api`. */
async function rawPlatform(api: (req: IncomingMessage, res: ServerResponse) => void): Promise<TestServer> {
  raw = createServer((req, res) => {
    if (req.url === "/auth/token") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ access_token: "<ACCESS_TOKEN>-limits", expires_in: 3599 }));
      return;
    }
    if (req.url === "/auth/revoke") return void res.end();
    api(req, res);
  });
  await new Promise<void>((r) => raw?.listen(0, "127.0.0.1", () => r()));
  const base = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
  // Only the URLs are used by makeClient.
  return { apiUrl: `${base}/v1`, authUrl: base } as TestServer;
}

describe("api.timeout is a total deadline", () => {
  it("a body trickling one byte every 300 ms fails at the deadline with a timeout, counted with its reason", async () => {
    const server = await rawPlatform((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"message":"Success","data":');
      // Each byte arrives well within undici's idle timeouts: only a total deadline ends this.
      timers.push(setInterval(() => res.write(" "), 300));
    });
    tc = makeClient(server, { timeoutMs: 1_500, maxRetries: 1 });
    const started = Date.now();
    const err = await tc.client.site({ id: 1 }).catch((e: unknown) => e);
    const elapsed = Date.now() - started;
    expect(err).toBeInstanceOf(ApiTimeoutError);
    // Two attempts (one retry), each cut at 1.5 s.
    expect(elapsed).toBeGreaterThanOrEqual(3_000);
    expect(elapsed).toBeLessThan(8_000);
    expect(
      await metricValue(tc.registry, "sitehost_exporter_api_requests_total", {
        endpoint: "/sites/{id}",
        code: "timeout",
      }),
    ).toBe(2);
    expect(
      await metricValue(tc.registry, "sitehost_exporter_api_request_failures_total", {
        endpoint: "/sites/{id}",
        reason: "timeout",
      }),
    ).toBe(1);
    expect(tc.client.budget.active).toBe(0);
  });

  it("a server that never answers at all times out too", async () => {
    const server = await rawPlatform(() => undefined);
    tc = makeClient(server, { timeoutMs: 800, maxRetries: 0 });
    const err = await tc.client.site({ id: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiTimeoutError);
    expect((err as Error).message).toBe(
      `GET ${server.apiUrl}/sites/1: no complete answer within 800 ms (api.timeout): is ${new URL(server.apiUrl).host} reachable from here? if the platform is slow to answer, raise api.timeout`,
    );
  });
});

describe("api.maxResponseSize", () => {
  it("an endless body is cut at the limit: a clear error, counted, memory bounded", async () => {
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const server = await rawPlatform((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"message":"Success","data":[');
      const pump = () => {
        while (res.write(chunk)) sent += chunk.length;
        sent += chunk.length;
      };
      res.on("drain", pump);
      res.on("close", () => res.off("drain", pump));
      pump();
    });
    tc = makeClient(server, { maxResponseBytes: 2 * 1024 * 1024, maxRetries: 3 });
    const rssBefore = process.memoryUsage().rss;
    const err = await tc.client.domains({ id: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiResponseTooLargeError);
    expect((err as Error).message).toContain("larger than 2097152 bytes (api.maxResponseSize)");
    // Not retried: the same request would bring the same body.
    expect(
      await metricValue(tc.registry, "sitehost_exporter_api_requests_total", {
        endpoint: "/sites/{id}/domains",
        code: "too_large",
      }),
    ).toBe(1);
    expect(
      await metricValue(tc.registry, "sitehost_exporter_api_request_failures_total", {
        endpoint: "/sites/{id}/domains",
        reason: "too_large",
      }),
    ).toBe(1);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(64 * 1024 * 1024);
    // The server stopped being read soon after the limit (socket buffers aside).
    expect(sent).toBeLessThan(32 * 1024 * 1024);
  });

  it("a declared Content-Length over the limit is refused before reading the body", async () => {
    const server = await rawPlatform((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": String(50 * 1024 * 1024) });
      res.write("{");
    });
    tc = makeClient(server, { maxResponseBytes: 1024 * 1024 });
    await expect(tc.client.domains({ id: 1 })).rejects.toBeInstanceOf(ApiResponseTooLargeError);
  });
});

describe("a response of 100,000 invalid records", () => {
  it("does not hold up the event loop, and is summarised in one warning line", async () => {
    const records = Array.from({ length: 100_000 }, (_, i) => ({
      ...domain(`d${i}.example.test`),
      domainName: null,
    }));
    const body = JSON.stringify({ message: "Success", data: records, errors: null });
    const server = await rawPlatform((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(body);
    });
    tc = makeClient(server, { maxResponseBytes: 64 * 1024 * 1024 });
    // The one block allowed: parsing the body, timed here on this machine as it is loaded now.
    const parseStarted = performance.now();
    JSON.parse(body);
    const parseMs = performance.now() - parseStarted;
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    const result = await tc.client.domains({ id: 1 });
    delay.disable();
    expect(result.items).toHaveLength(0);
    expect(result.rejected).toBe(100_000);
    expect(
      await metricValue(tc.registry, "sitehost_exporter_api_invalid_records_total", {
        endpoint: "/sites/{id}/domains",
        field: "domainName",
      }),
    ).toBe(100_000);
    const warnings = tc.logs.filter((l) => l.includes("do not fit the expected schema"));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0] as string)).toMatchObject({
      rejected: 100_000,
      field: "data[0].domainName",
    });
    // JSON.parse of the body is one block; validation is sliced, so no block is much longer than the
    // parse. Unsliced, validating 100,000 records held the loop for about 10 s on a quiet machine; the
    // bound leaves room for a loaded CI machine's pauses.
    expect(delay.max / 1e6).toBeLessThan(Math.max(5_000, 4 * parseMs));
  });
});
