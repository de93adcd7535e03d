/**
 * Connections that send nothing, or stop half-way, are closed by the server. The deadlines are
 * injected short; the tests wait for the close with a generous limit of their own.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect as connectHttp2 } from "node:http2";
import { connect as connectTcp, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as connectTls } from "node:tls";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RunningHttpServer, ServerTimeouts } from "../../../src/server/http.js";
import { selfSignedServerCert } from "../../helpers/tls.js";
import { serverRig } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "sitehost-timeouts-"));
const p = (name: string) => join(dir, name);
beforeAll(() => {
  selfSignedServerCert(dir);
  writeFileSync(p("tls.yml"), "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n");
  writeFileSync(
    p("tls-http1.yml"),
    "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\nhttp_server_config:\n  http2: false\n",
  );
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const rig = serverRig();
afterEach(() => rig.close());

const SHORT: ServerTimeouts = { tlsHandshakeMs: 300, headersMs: 300, requestMs: 600, idleMs: 300 };
/** Far above SHORT, far below the defaults (tens of seconds): a close in between is the deadline's doing. */
const LIMIT_MS = 8_000;

async function start(webConfigFile?: string): Promise<number> {
  return (await rig.start(webConfigFile, { timeouts: SHORT })).port;
}

/** Resolves when the socket is closed by the other side; rejects after LIMIT_MS. */
function closedByServer(socket: Socket): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept the connection open for ${LIMIT_MS} ms`));
    }, LIMIT_MS);
    socket.on("error", () => undefined);
    // Read whatever the server sends (a 408) so its end of the connection is seen.
    socket.resume();
    socket.once("close", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function rawSocket(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connectTcp(port, "127.0.0.1", () => resolve(s));
    s.once("error", reject);
  });
}

describe("connection deadlines", () => {
  it("plain HTTP: a connection that sends nothing is closed", async () => {
    await expect(closedByServer(await rawSocket(await start()))).resolves.toBeUndefined();
  });

  it("plain HTTP: a request whose headers never finish is closed", async () => {
    const socket = await rawSocket(await start());
    socket.write("GET /metrics HTTP/1.1\r\nHost: x\r\n");
    await expect(closedByServer(socket)).resolves.toBeUndefined();
  });

  it("plain HTTP: a kept-alive connection idle after its request is closed", async () => {
    const socket = await rawSocket(await start());
    let reply = "";
    socket.on("data", (d: Buffer) => (reply += d.toString()));
    socket.write("GET /-/healthy HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n");
    await expect(closedByServer(socket)).resolves.toBeUndefined();
    expect(reply).toMatch(/^HTTP\/1\.1 200 /);
  });

  it.each(["tls.yml", "tls-http1.yml"])(
    "TLS (%s): a connection that never starts the handshake is closed",
    async (file) => {
      await expect(closedByServer(await rawSocket(await start(p(file))))).resolves.toBeUndefined();
    },
  );

  it.each(["tls.yml", "tls-http1.yml"])(
    "TLS (%s): a connection that completes the handshake and sends nothing is closed",
    async (file) => {
      const port = await start(p(file));
      const socket = await new Promise<Socket>((resolve, reject) => {
        const s = connectTls({ port, host: "127.0.0.1", ca: readFileSync(p("server.pem")) }, () =>
          resolve(s),
        );
        s.once("error", reject);
      });
      await expect(closedByServer(socket)).resolves.toBeUndefined();
    },
  );

  it("HTTP/2: an idle session is closed", async () => {
    const port = await start(p("tls.yml"));
    const session = connectHttp2(`https://127.0.0.1:${port}`, { ca: readFileSync(p("server.pem")) });
    session.on("error", () => undefined);
    await new Promise<void>((resolve, reject) => {
      session.once("connect", () => resolve());
      session.once("error", reject);
    });
    const closed = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), LIMIT_MS);
      session.once("close", () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    session.destroy();
    expect(closed).toBe(true);
  });

  it("close() does not wait for a client that never finishes reading its HTTP/2 response", async () => {
    const port = await start(p("tls.yml"));
    const session = connectHttp2(`https://127.0.0.1:${port}`, { ca: readFileSync(p("server.pem")) });
    session.on("error", () => undefined);
    const stream = session.request({ ":path": "/metrics" });
    stream.on("error", () => undefined);
    await new Promise((resolve) => stream.once("response", resolve));
    const running = rig.take() as RunningHttpServer;
    const closed = await Promise.race([
      running.close().then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), LIMIT_MS).unref()),
    ]);
    session.destroy();
    expect(closed).toBe(true);
  });
});
