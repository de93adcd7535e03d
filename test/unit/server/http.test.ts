import { gunzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { startHttpServer, type RunningHttpServer } from "../../../src/server/http.js";
import { EXPECTED_METRICS, makeExposition, send, silentLogger, statusOf } from "./helpers.js";

let server: RunningHttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const landing = statusOf({
  version: "9.9.9",
  active: {
    sitesDiscovered: 42,
    collectors: [
      {
        name: "traffic",
        enabled: true,
        schedule: "0 * * * * *",
        running: false,
        completedRuns: 1,
        lastRun: {
          startedAt: new Date(Date.UTC(2026, 0, 31, 12, 0, 0)),
          durationSeconds: 1.5,
          result: "partial",
        },
      },
      {
        name: "backups<script>alert(1)</script>" as never,
        enabled: false,
        schedule: '7 * * * * & "q"',
        running: false,
        completedRuns: 0,
      },
    ],
  },
});

async function start(
  ready: { ready: boolean; reason?: string } = { ready: true },
  telemetryPath = "/metrics",
) {
  const { exposition } = makeExposition();
  const state = { ...ready };
  server = await startHttpServer({
    listenAddress: "127.0.0.1:0",
    telemetryPath,
    exposition,
    readiness: () => state,
    status: () => landing,
    logger: silentLogger,
  });
  return { url: server.url, state };
}

describe("routes", () => {
  it("GET /metrics: the exposition text, uncompressed when gzip is not asked for", async () => {
    const { url } = await start();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const r = await send(`${url}/metrics`);
    expect(r.status).toBe(200);
    expect(r.headers["content-type"]).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(r.headers["content-encoding"]).toBeUndefined();
    expect(r.headers.vary).toBe("Accept, Accept-Encoding");
    expect(r.body.toString("utf8").trimEnd().split("\n")).toEqual(EXPECTED_METRICS);
    expect(Number(r.headers["content-length"])).toBe(r.body.length);
  });

  it("GET /metrics with Accept-Encoding: gzip: gzip body that decompresses to the same text", async () => {
    const { url } = await start();
    const r = await send(`${url}/metrics`, { headers: { "accept-encoding": "deflate, gzip;q=1.0" } });
    expect(r.status).toBe(200);
    expect(r.headers["content-encoding"]).toBe("gzip");
    expect(r.headers.vary).toBe("Accept, Accept-Encoding");
    expect(r.body.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b])); // gzip magic
    expect(gunzipSync(r.body).toString("utf8").trimEnd().split("\n")).toEqual(EXPECTED_METRICS);
    expect(Number(r.headers["content-length"])).toBe(r.body.length);
  });

  it("HEAD /metrics with Accept-Encoding: gzip: the gzip GET's headers, no body", async () => {
    const { url } = await start();
    const gzip = { "accept-encoding": "gzip" };
    const get = await send(`${url}/metrics`, { headers: gzip });
    const head = await send(`${url}/metrics`, { method: "HEAD", headers: gzip });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers["content-encoding"]).toBe("gzip");
    expect(head.headers["content-length"]).toBe(String(get.body.length));
  });

  it("HEAD /metrics: headers of the GET, no body", async () => {
    const { url } = await start();
    const get = await send(`${url}/metrics`);
    const head = await send(`${url}/metrics`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers["content-length"]).toBe(String(get.body.length));
    expect(head.headers["content-type"]).toBe(get.headers["content-type"]);
  });

  it("a custom telemetry path moves the metrics; /metrics is then 404", async () => {
    const { url } = await start({ ready: true }, "/custom/metrics");
    expect((await send(`${url}/custom/metrics?x=1`)).status).toBe(200);
    expect((await send(`${url}/metrics`)).status).toBe(404);
  });

  it("/-/healthy is 200", async () => {
    const { url } = await start();
    const r = await send(`${url}/-/healthy`);
    expect(r.status).toBe(200);
    expect(r.body.toString()).toBe("Healthy\n");
  });

  it("/-/ready follows the readiness callback: 503 with the reason, then 200", async () => {
    const { url, state } = await start({ ready: false, reason: "discovery not finished" });
    const before = await send(`${url}/-/ready`);
    expect(before.status).toBe(503);
    expect(before.body.toString()).toBe("Not ready: discovery not finished\n");
    state.ready = true;
    state.reason = undefined;
    const after = await send(`${url}/-/ready`);
    expect(after.status).toBe(200);
    expect(after.body.toString()).toBe("Ready\n");
  });

  it("/-/ready says what is still going when it is ready before every first run finished", async () => {
    const { url } = await start({ ready: true, reason: "first run still going for backups" });
    const r = await send(`${url}/-/ready`);
    expect(r.status).toBe(200);
    expect(r.body.toString()).toBe("Ready; first run still going for backups\n");
  });

  it("/ is the landing page with each collector's last run, values HTML-escaped", async () => {
    const { url } = await start();
    const r = await send(`${url}/`);
    expect(r.status).toBe(200);
    expect(r.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(r.headers["cache-control"]).toBe("no-store");
    const html = r.body.toString("utf8");
    expect(html).toContain("Version 9.9.9 &middot; 42 sites");
    expect(html).toContain('<a href="/metrics">Metrics</a>');
    // traffic: started 2026-01-31T12:00:00Z (the page is of 12:05), its last run partial.
    expect(html).toContain(
      '<tr><td>traffic</td><td><span class="state h-warning">WARNING</span></td><td><code>0 * * * * *</code></td><td>2026-01-31 12:00:00 UTC (5 min ago) <small>partial</small></td>',
    );
    expect(html).toContain(
      '<tr><td>backups&lt;script&gt;alert(1)&lt;/script&gt;</td><td><span class="state h-off">off</span></td><td><code>7 * * * * &amp; &quot;q&quot;</code></td><td>not yet</td>',
    );
    expect(html).not.toContain("<script>");
  });

  it("unknown path is 404, a protocol-relative-looking path too", async () => {
    const { url } = await start();
    expect((await send(`${url}/nope`)).status).toBe(404);
    expect((await send(`${url}/metrics/`)).status).toBe(404);
    // `//metrics` must not be read as host "metrics" with path "/" (the landing page).
    const r = await send(`${url}//metrics`);
    expect(r.status).toBe(404);
  });

  it.each(["POST", "PUT", "DELETE"])("%s is 405 with Allow: GET, HEAD", async (method) => {
    const { url } = await start();
    const r = await send(`${url}/metrics`, { method });
    expect(r.status).toBe(405);
    expect(r.headers.allow).toBe("GET, HEAD");
  });

  it("a port already in use is an error at start", async () => {
    const { url } = await start();
    const port = new URL(url).port;
    const { exposition } = makeExposition();
    await expect(
      startHttpServer({
        listenAddress: `127.0.0.1:${port}`,
        telemetryPath: "/metrics",
        exposition,
        readiness: () => ({ ready: true }),
        status: () => landing,
        logger: silentLogger,
      }),
    ).rejects.toThrow(
      `127.0.0.1:${port} is already in use by another process: choose another with --web.listen-address`,
    );
  });
});

describe("listen address", () => {
  it("[::1]:0 serves on IPv6 loopback", async () => {
    const { exposition } = makeExposition();
    server = await startHttpServer({
      listenAddress: "[::1]:0",
      telemetryPath: "/metrics",
      exposition,
      readiness: () => ({ ready: true }),
      status: () => landing,
      logger: silentLogger,
    });
    expect(server.url).toMatch(/^http:\/\/\[::1\]:\d+$/);
    expect((await send(`${server.url}/-/healthy`)).status).toBe(200);
  });
});
