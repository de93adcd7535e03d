/**
 * One HTTP exchange with the platform, as a tagged result: a response (status, headers, body text), or
 * why there is none (network error, the request's total deadline, a body over the size limit, the
 * caller's abort). It never throws for those and never retries; the retry policy decides.
 *
 * The deadline covers the whole exchange, headers and body: a server that trickles one byte every few
 * seconds cannot hold a request (and its place in the budget) past it. The body is read with a size
 * limit, so an endless body costs at most that much memory.
 */
import type { IncomingHttpHeaders } from "node:http";
import { Agent, request } from "../util/undici.js";
import { VERSION } from "../version.js";
import { BodyBuffers } from "./bodyBuffers.js";
import type { PageBytes } from "./logRecords.js";
import type { HttpMethod } from "../routes.js";

export interface TransportOptions {
  /** Total deadline of one exchange, ms (> 0). */
  timeoutMs: number;
  /** Largest response body read, bytes. */
  maxResponseBytes: number;
  /** Connections kept to the platform. */
  connections: number;
}

export interface HttpRequest {
  method: HttpMethod;
  url: string;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  body?: unknown;
  signal?: AbortSignal;
  /** A 2xx answer's body is wanted as bytes (`bytes`, lent until released), not as text. */
  bytes?: boolean;
}

export type TransportResult =
  | {
      kind: "response";
      status: number;
      headers: IncomingHttpHeaders;
      /** The body as text; "" when it came as `bytes`. */
      body: string;
      bytes?: PageBytes;
    }
  | { kind: "network"; code: string }
  | { kind: "timeout"; afterMs: number }
  | { kind: "too_large"; limitBytes: number }
  | { kind: "aborted"; reason: unknown };

/** undici's own timeouts (connect, headers, body inactivity) are timeouts too, not network errors. */
const TIMEOUT_CODES = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);

class TooLarge extends Error {}

export class Transport {
  private readonly agent: Agent;
  /** One per connection at most: a body is read on each at a time. */
  private readonly buffers: BodyBuffers;

  constructor(private readonly opts: TransportOptions) {
    if (!(opts.timeoutMs > 0)) throw new Error("the request timeout must be positive");
    this.buffers = new BodyBuffers(opts.connections);
    this.agent = new Agent({
      keepAliveTimeout: 30_000,
      connections: opts.connections,
      connect: { timeout: Math.min(opts.timeoutMs, 10_000) },
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
    });
  }

  async send(req: HttpRequest): Promise<TransportResult> {
    if (req.signal?.aborted) return { kind: "aborted", reason: req.signal.reason };
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), this.opts.timeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, deadline.signal]) : deadline.signal;
    try {
      const res = await request(req.url, {
        method: req.method,
        dispatcher: this.agent,
        headers: {
          accept: "application/json",
          "user-agent": `sitehost-exporter/${VERSION}`,
          ...(req.body !== undefined ? { "content-type": "application/json" } : {}),
          ...req.headers,
        },
        body: req.body !== undefined ? JSON.stringify(req.body) : undefined,
        signal,
      });
      const read = await this.readBody(res.body, res.headers);
      const { statusCode: status, headers } = res;
      if (req.bytes && status >= 200 && status < 300)
        return { kind: "response", status, headers, body: "", bytes: read };
      const body = read.bytes.toString("utf8");
      read.release();
      return { kind: "response", status, headers, body };
    } catch (err) {
      if (err instanceof TooLarge) return { kind: "too_large", limitBytes: this.opts.maxResponseBytes };
      if (req.signal?.aborted) return { kind: "aborted", reason: req.signal.reason };
      if (deadline.signal.aborted) return { kind: "timeout", afterMs: this.opts.timeoutMs };
      const code = (err as { code?: string }).code ?? (err as Error).name ?? "error";
      if (TIMEOUT_CODES.has(code)) return { kind: "timeout", afterMs: this.opts.timeoutMs };
      return { kind: "network", code };
    } finally {
      clearTimeout(timer);
    }
  }

  /** The body's bytes, in a buffer lent by the pool when its length was declared. */
  private async readBody(
    body: AsyncIterable<Buffer> & { destroy(err?: Error): unknown },
    headers: IncomingHttpHeaders,
  ): Promise<PageBytes> {
    const limit = this.opts.maxResponseBytes;
    const declared = Number(headers["content-length"]);
    if (Number.isFinite(declared) && declared > limit) {
      body.destroy();
      throw new TooLarge();
    }
    // A declared length is read into one buffer (lent by the pool); otherwise the chunks are joined.
    const into = Number.isFinite(declared) && declared > 0 ? this.buffers.take(declared) : undefined;
    let lent = false;
    try {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of body) {
        if (size + chunk.length > limit) {
          body.destroy();
          throw new TooLarge();
        }
        if (into && size + chunk.length <= declared) chunk.copy(into, size);
        else chunks.push(chunk);
        size += chunk.length;
      }
      if (into && chunks.length === 0) {
        lent = true;
        return this.lent(into, size);
      }
      const all = into
        ? [into.subarray(0, size - chunks.reduce((a, c) => a + c.length, 0)), ...chunks]
        : chunks;
      return {
        bytes: all.length === 1 ? (all[0] as Buffer) : Buffer.concat(all, size),
        release: () => undefined,
      };
    } finally {
      if (into && !lent) this.buffers.give(into);
    }
  }

  /** `buffer`'s first `size` bytes, given back to the pool once released (once only). */
  private lent(buffer: Buffer, size: number): PageBytes {
    let held = true;
    return {
      bytes: buffer.subarray(0, size),
      release: () => {
        if (held) this.buffers.give(buffer);
        held = false;
      },
    };
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
