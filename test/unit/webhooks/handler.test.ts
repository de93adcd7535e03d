/** The webhook receiver's refusals: authentication, method, size, body, and while nothing takes events. */
import { Agent } from "node:http";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import bcrypt from "bcryptjs";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { MAX_BODY_BYTES } from "../../../src/webhooks/body.js";
import { selfSignedServerCert } from "../../helpers/tls.js";
import { disabled, post, start, stopServer, TOKEN } from "./bench.js";

const dir = mkdtempSync(join(tmpdir(), "sitehost-webhook-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(stopServer);

describe("authentication", () => {
  it("a missing or wrong token is 401 and nothing is counted or queued", async () => {
    const s = await start();
    const missing = await post(s.url, { body: disabled });
    const wrong = await post(`${s.url}?token=not-the-token`, { body: disabled });
    const wrongBearer = await post(s.url, {
      body: disabled,
      headers: { authorization: "Bearer not-the-token" },
    });
    for (const r of [missing, wrong, wrongBearer]) {
      expect(r.status).toBe(401);
      expect(r.headers["www-authenticate"]).toMatch(/^Bearer /);
    }
    const c = await s.counted();
    expect(s.total(c.events)).toBe(0);
    expect(c.rejected.unauthorized).toBe(3);
    expect(s.queue?.records).toEqual([]);
    expect(s.refreshed).toEqual([]);
  });

  it("the token is accepted as ?token= and as Authorization: Bearer", async () => {
    const s = await start();
    expect((await post(s.withToken, { body: disabled })).status).toBe(200);
    expect(
      (await post(s.url, { body: disabled, headers: { authorization: `Bearer ${TOKEN}` } })).status,
    ).toBe(200);
    expect((await s.counted()).events.site_disabled).toBe(2);
  });

  it("the web config's basic auth guards /metrics, not the webhook; TLS applies to both", async () => {
    selfSignedServerCert(dir);
    const hash = bcrypt.hashSync("scrape-password", 4);
    const webFile = join(dir, "web.yml");
    writeFileSync(
      webFile,
      `tls_server_config:\n  cert_file: ${join(dir, "server.pem")}\n  key_file: ${join(dir, "server.key")}\nbasic_auth_users:\n  prom: '${hash}'\n`,
    );
    const s = await start({ webConfigFile: webFile });
    const ca = readFileSync(join(dir, "server.pem"));
    expect(s.withToken.startsWith("https://")).toBe(true);
    expect((await post(s.withToken, { body: disabled, ca })).status).toBe(200);
    expect((await post(s.url, { body: disabled, ca })).status).toBe(401);
    expect((await post(s.url.replace("/hooks/sitehost", "/metrics"), { method: "GET", ca })).status).toBe(
      401,
    );
    const basic = { authorization: `Basic ${Buffer.from("prom:scrape-password").toString("base64")}` };
    const metrics = await post(s.url.replace("/hooks/sitehost", "/metrics"), {
      method: "GET",
      ca,
      headers: basic,
    });
    expect(metrics.status).toBe(200);
    expect(metrics.text).toMatch(/^sitehost_events_total\{event="site_disabled"\} 1$/m);
  });
});

describe("what is refused", () => {
  it("a refused request's unread body is not drained: the connection is closed (an accepted one is kept)", async () => {
    const s = await start();
    const agent = new Agent({ keepAlive: true });
    try {
      const refused = await post(`${s.url}?token=wrong`, { body: "x".repeat(10_000), agent });
      expect(refused.status).toBe(401);
      expect(refused.headers.connection).toBe("close");
      const accepted = await post(s.withToken, { body: disabled, agent });
      expect(accepted.status).toBe(200);
      expect(accepted.headers.connection).toBe("keep-alive");
    } finally {
      agent.destroy();
    }
  });

  it("anything but POST is 405 with Allow: POST", async () => {
    const s = await start();
    for (const method of ["GET", "PUT", "HEAD"]) {
      const r = await post(s.withToken, { method });
      expect(r.status).toBe(405);
      expect(r.headers.allow).toBe("POST");
    }
    expect((await s.counted()).rejected.method_not_allowed).toBe(3);
  });

  it("a body over the limit is 413, from Content-Length alone or while reading", async () => {
    const s = await start();
    const declared = await post(s.withToken, {
      headers: { "content-length": String(MAX_BODY_BYTES + 1) },
      // Only the first bytes are sent: the answer must not wait for the rest.
      chunks: [],
    }).catch((err: Error) => err);
    expect(declared instanceof Error ? declared.message : declared.status).toBe(413);
    await stopServer();
    const small = await start({ maxBodyBytes: 1024 });
    const streamed = await post(small.withToken, {
      chunks: [Buffer.from('{"event":"site_disabled","pad":"'), Buffer.alloc(4096, 97), Buffer.from('"}')],
    });
    expect(streamed.status).toBe(413);
    const c = await small.counted();
    expect(c.rejected.too_large).toBe(1);
    expect(small.total(c.events)).toBe(0);
  });

  it.each([
    ["not JSON", "event=site_disabled"],
    ["JSON without an event", '{"site":{"id":42}}'],
    ["a JSON array", '[{"event":"site_disabled"}]'],
  ])("%s is 400", async (_what, body) => {
    const s = await start();
    const r = await post(s.withToken, { body });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text)).toHaveProperty("error");
    const c = await s.counted();
    expect(c.rejected.bad_request).toBe(1);
    expect(s.total(c.events)).toBe(0);
  });

  it("a compressed body is 415", async () => {
    const s = await start();
    const r = await post(s.withToken, { body: disabled, headers: { "content-encoding": "gzip" } });
    expect(r.status).toBe(415);
  });

  it("while the exporter starts or stands by: 503 with Retry-After, nothing counted", async () => {
    const s = await start({ standby: true });
    const r = await post(s.withToken, { body: disabled });
    expect(r.status).toBe(503);
    expect(Number(r.headers["retry-after"])).toBeGreaterThan(0);
    expect(s.total((await s.counted()).events)).toBe(0);
  });
});
