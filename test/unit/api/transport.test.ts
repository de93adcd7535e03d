/**
 * One exchange's outcomes against a loopback server: bodies with and without a declared length, the
 * caller's abort while the body arrives and while the request waits for a connection, and failures
 * before any answer. Each ends in one tagged result, and the connection is usable afterwards.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { Transport, type TransportResult } from "../../../src/api/transport.js";
import { refusedPort } from "../../helpers/ports.js";

let server: Server | undefined;
let transport: Transport | undefined;

afterEach(async () => {
  await transport?.close();
  transport = undefined;
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((r) => server?.listen(0, "127.0.0.1", () => r()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const bodyOf = (r: TransportResult) => (r.kind === "response" ? r.body : `(${r.kind})`);

describe("an exchange", () => {
  it("reads a body sent in chunks without a declared length, and sends the request's JSON", async () => {
    const received: string[] = [];
    const url = await serve((req, res) => {
      let text = "";
      req.on("data", (c: Buffer) => (text += c.toString()));
      req.on("end", () => {
        received.push(`${req.method} ${req.url} ${req.headers["content-type"]} ${text}`);
        res.writeHead(200, { "x-answer": "yes" }); // chunked: no content-length
        res.write("x".repeat(70_000));
        setImmediate(() => res.end("y".repeat(5)));
      });
    });
    transport = new Transport({ timeoutMs: 5_000, maxResponseBytes: 1_000_000, connections: 1 });
    const result = await transport.send({ method: "POST", url: `${url}/a?b=1`, body: { c: 2 } });
    expect(result.kind).toBe("response");
    if (result.kind !== "response") return;
    expect(result.status).toBe(200);
    expect(result.headers["x-answer"]).toBe("yes");
    expect(result.body).toBe(`${"x".repeat(70_000)}yyyyy`);
    expect(received).toEqual(['POST /a?b=1 application/json {"c":2}']);
  });

  it("ends at the caller's abort while the body arrives, and the next request is answered", async () => {
    let calls = 0;
    const url = await serve((_req, res) => {
      calls += 1;
      if (calls === 1) {
        res.writeHead(200, { "content-length": "100000" });
        res.write("z".repeat(10_000)); // and never the rest
        return;
      }
      res.end("fine");
    });
    transport = new Transport({ timeoutMs: 10_000, maxResponseBytes: 1_000_000, connections: 1 });
    const caller = new AbortController();
    const pending = transport.send({ method: "GET", url, signal: caller.signal });
    while (calls === 0) await new Promise((r) => setTimeout(r, 5));
    caller.abort(new Error("shutting down"));
    const result = await pending;
    expect(result.kind).toBe("aborted");
    expect(result.kind === "aborted" && (result.reason as Error).message).toBe("shutting down");
    expect(bodyOf(await transport.send({ method: "GET", url }))).toBe("fine");
  });

  it("ends at the caller's abort while it waits for a connection, and is never sent", async () => {
    const paths: string[] = [];
    let release: (() => void) | undefined;
    const url = await serve((req, res) => {
      paths.push(req.url ?? "");
      if (req.url === "/slow") release = () => res.end("slow");
      else res.end("quick");
    });
    transport = new Transport({ timeoutMs: 10_000, maxResponseBytes: 1_000_000, connections: 1 });
    const slow = transport.send({ method: "GET", url: `${url}/slow` });
    while (!release) await new Promise((r) => setTimeout(r, 5));
    const caller = new AbortController();
    const queued = transport.send({ method: "GET", url: `${url}/queued`, signal: caller.signal });
    caller.abort(new Error("not wanted"));
    expect((await queued).kind).toBe("aborted");
    release();
    expect(bodyOf(await slow)).toBe("slow");
    expect(bodyOf(await transport.send({ method: "GET", url: `${url}/after` }))).toBe("quick");
    expect(paths).toEqual(["/slow", "/after"]);
  });

  it("an already aborted signal sends nothing", async () => {
    const paths: string[] = [];
    const url = await serve((req, res) => {
      paths.push(req.url ?? "");
      res.end("x");
    });
    transport = new Transport({ timeoutMs: 1_000, maxResponseBytes: 1_000, connections: 1 });
    const result = await transport.send({ method: "GET", url, signal: AbortSignal.abort("early") });
    expect(result).toEqual({ kind: "aborted", reason: "early" });
    expect(paths).toEqual([]);
  });

  it("a refused connection and an unparsable URL are network errors naming their code", async () => {
    const port = await refusedPort();
    transport = new Transport({ timeoutMs: 2_000, maxResponseBytes: 1_000, connections: 1 });
    expect(await transport.send({ method: "GET", url: `http://127.0.0.1:${port}/` })).toEqual({
      kind: "network",
      code: "ECONNREFUSED",
    });
    expect(await transport.send({ method: "GET", url: "not a url" })).toEqual({
      kind: "network",
      code: "ERR_INVALID_URL",
    });
  });
});
