/**
 * Response bodies are read into buffers that are lent and handed back: whatever a buffer held before,
 * each body reads back exactly, and the pool keeps a bounded number of them.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { BodyBuffers, POOLED_BODY_BYTES } from "../../../src/api/bodyBuffers.js";
import { Transport } from "../../../src/api/transport.js";

describe("BodyBuffers", () => {
  it("lends a buffer given back to the next body that fits in it", () => {
    const pool = new BodyBuffers(2);
    const first = pool.take(70_000);
    expect(first.length).toBeGreaterThanOrEqual(70_000);
    pool.give(first);
    expect(pool.take(65_000)).toBe(first);
    // Too small for a larger body: a new one.
    pool.give(first);
    expect(pool.take(first.length + 1)).not.toBe(first);
  });

  it("keeps at most maxFree buffers, and neither small nor large ones", () => {
    const pool = new BodyBuffers(2);
    const lent = [pool.take(10_000), pool.take(10_000), pool.take(10_000)];
    for (const b of lent) pool.give(b);
    expect(pool.freeCount).toBe(2);
    const small = new BodyBuffers(2);
    small.give(small.take(POOLED_BODY_BYTES.min - 1));
    small.give(small.take(POOLED_BODY_BYTES.max + 1));
    expect(small.freeCount).toBe(0);
  });

  it("does not keep a buffer twice when it is given back twice", () => {
    const pool = new BodyBuffers(4);
    const b = pool.take(20_000);
    pool.give(b);
    pool.give(b);
    expect(pool.freeCount).toBe(1);
  });
});

describe("a transport reading bodies into reused buffers", () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    server = undefined;
  });

  it("reads each body exactly, a short one after a long one included", async () => {
    const bodies = ["a".repeat(120_000), "b".repeat(9_000), "é".repeat(40_000), "c".repeat(70_000)];
    let n = 0;
    server = createServer((req, res) => {
      const body = Buffer.from(bodies[n++ % bodies.length] as string, "utf8");
      res.writeHead(200, { "content-length": String(body.length), "content-type": "text/plain" });
      res.end(body);
    });
    await new Promise<void>((r) => server?.listen(0, "127.0.0.1", () => r()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const transport = new Transport({ timeoutMs: 5_000, maxResponseBytes: 1_000_000, connections: 1 });
    try {
      for (let round = 0; round < 2; round++) {
        for (const expected of bodies) {
          const result = await transport.send({ method: "GET", url });
          expect(result.kind).toBe("response");
          const body = (result as { body: string }).body;
          expect(body.length).toBe(expected.length);
          expect(body === expected).toBe(true);
        }
      }
    } finally {
      await transport.close();
    }
  });

  it("lends a 2xx body's bytes when asked, until they are released; other answers come as text", async () => {
    const page = "p".repeat(50_000);
    let status = 200;
    server = createServer((req, res) => {
      const body = Buffer.from(status === 200 ? page : '{"message":"busy"}', "utf8");
      res.writeHead(status, { "content-length": String(body.length) });
      res.end(body);
    });
    await new Promise<void>((r) => server?.listen(0, "127.0.0.1", () => r()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const transport = new Transport({ timeoutMs: 5_000, maxResponseBytes: 1_000_000, connections: 1 });
    type Answer = { body: string; bytes?: { bytes: Buffer; release(): void } };
    try {
      const first = (await transport.send({ method: "GET", url, bytes: true })) as Answer;
      expect(first.body).toBe("");
      const lent = first.bytes?.bytes;
      // While lent, the next body is read elsewhere and the lent bytes stay as they were.
      const second = (await transport.send({ method: "GET", url, bytes: true })) as Answer;
      expect(second.bytes?.bytes.buffer).not.toBe(lent?.buffer);
      expect(lent?.toString()).toBe(page);
      first.bytes?.release();
      first.bytes?.release();
      second.bytes?.release();
      // Handed back: the next body is read into one of them.
      const third = (await transport.send({ method: "GET", url, bytes: true })) as Answer;
      expect([lent?.buffer, second.bytes?.bytes.buffer]).toContain(third.bytes?.bytes.buffer);
      third.bytes?.release();
      status = 503;
      const failed = (await transport.send({ method: "GET", url, bytes: true })) as Answer;
      expect(failed.bytes).toBeUndefined();
      expect(failed.body).toBe('{"message":"busy"}');
    } finally {
      await transport.close();
    }
  });
});
