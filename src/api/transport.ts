/**
 * One HTTP exchange with the platform, as a tagged result: a response (status, headers, body text), or
 * why there is none (network error, the request's total deadline, a body over the size limit, the
 * caller's abort). It never throws for those and never retries; the retry policy decides.
 *
 * The deadline covers the whole exchange, headers and body: a server that trickles one byte every few
 * seconds cannot hold a request (and its place in the budget) past it. The body is read with a size
 * limit, so an endless body costs at most that much memory.
 */
import { Agent } from "../util/undici.js";
import { VERSION } from "../version.js";
import { BodyBuffers } from "./bodyBuffers.js";
import { Exchange, type TransportResult } from "./exchange.js";
import type { HttpMethod } from "../routes.js";

export type { TransportResult } from "./exchange.js";

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

  send(req: HttpRequest): Promise<TransportResult> {
    const signal = req.signal;
    if (signal?.aborted) return Promise.resolve({ kind: "aborted", reason: signal.reason });
    return new Promise<TransportResult>((resolve) => {
      const exchange = new Exchange(this.opts, this.buffers, req.bytes === true, signal, resolve);
      let target: URL;
      try {
        target = new URL(req.url);
      } catch (err) {
        exchange.onResponseError(null, err as Error);
        return;
      }
      // A dispatcher reports its own failures to the handler, synchronous ones included.
      this.agent.dispatch(
        {
          origin: target.origin,
          path: `${target.pathname}${target.search}`,
          method: req.method,
          headers: {
            accept: "application/json",
            "user-agent": `sitehost-exporter/${VERSION}`,
            ...(req.body !== undefined ? { "content-type": "application/json" } : {}),
            ...req.headers,
          },
          body: req.body !== undefined ? JSON.stringify(req.body) : undefined,
        },
        exchange,
      );
    });
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
