/**
 * One HTTP exchange as undici's dispatcher sees it: a handler told of the response's start, each
 * chunk of its body and its end or failure, settling one promise with a tagged result.
 *
 * Why not undici's `request`: its answer is a Node.js stream, read through an async iterator, with
 * the caller's signal joined to the deadline's. At thousands of requests a minute those objects,
 * alive while the body arrives, were the largest part of what the exporter moved to V8's old
 * generation (about 7 MB/s at 5,000 sites). The handler is one object per exchange.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { Dispatcher } from "undici";
import type { BodyBuffers } from "./bodyBuffers.js";
import type { PageBytes } from "./logRecords.js";

export type TransportResult =
  | {
      kind: "response";
      status: number;
      headers: IncomingHttpHeaders;
      /** When the status and headers came (performance.now()): the end of the round trip. */
      headersAt: number;
      /** The body as text; "" when it came as `bytes`. */
      body: string;
      bytes?: PageBytes;
    }
  | {
      kind: "network";
      code: string;
      /** The connection closed before the server sent a byte (plain HTTP to a TLS port, usually). */
      noAnswer?: boolean;
      /** No retry mends it (refused, an unknown host, a scheme mismatch): set by the API client's wire. */
      permanent?: boolean;
    }
  | { kind: "timeout"; afterMs: number }
  | { kind: "too_large"; limitBytes: number }
  | { kind: "aborted"; reason: unknown };

export interface ExchangeLimits {
  /** Total deadline of the exchange, ms: headers and body. */
  timeoutMs: number;
  /** Largest body read, bytes. */
  maxResponseBytes: number;
}

/** undici's own timeouts (connect, headers, body inactivity) are timeouts too, not network errors. */
const TIMEOUT_CODES = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);

/** Why the exporter ended an exchange itself (the deadline, the caller, the size limit). */
class ExchangeStopped extends Error {
  constructor(kind: TransportResult["kind"]) {
    super(`exchange stopped: ${kind}`);
  }
}

export class Exchange implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private done = false;
  private status = 0;
  private headers: IncomingHttpHeaders = {};
  private headersAt = 0;
  /** The declared body's buffer, lent by the pool. */
  private into: Buffer | undefined;
  private declared = 0;
  /** Chunks that did not fit `into` (no length declared, or more than declared). */
  private chunks: Buffer[] | undefined;
  private size = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly onAbort: (() => void) | undefined;

  constructor(
    private readonly limits: ExchangeLimits,
    private readonly buffers: BodyBuffers,
    /** A 2xx body is wanted as bytes (lent until released), not as text. */
    private readonly wantBytes: boolean,
    private readonly signal: AbortSignal | undefined,
    private readonly resolve: (result: TransportResult) => void,
  ) {
    this.timer = setTimeout(
      () => this.stop({ kind: "timeout", afterMs: limits.timeoutMs }),
      limits.timeoutMs,
    );
    if (signal) {
      const onAbort = () => this.stop({ kind: "aborted", reason: signal.reason });
      this.onAbort = onAbort;
      signal.addEventListener("abort", onAbort, { once: true });
    }
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Stopped while it waited for a connection: it ends before it is sent.
    if (this.done) controller.abort(new ExchangeStopped("aborted"));
  }

  onResponseStart(_c: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders): void {
    if (this.done) return;
    this.status = status;
    this.headers = headers;
    this.headersAt = performance.now();
    const declared = Number(headers["content-length"]);
    if (!Number.isFinite(declared)) return;
    if (declared > this.limits.maxResponseBytes) {
      this.stop({ kind: "too_large", limitBytes: this.limits.maxResponseBytes });
      return;
    }
    if (declared > 0) {
      this.declared = declared;
      this.into = this.buffers.take(declared);
    }
  }

  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.done) return;
    const size = this.size + chunk.length;
    if (size > this.limits.maxResponseBytes) {
      this.stop({ kind: "too_large", limitBytes: this.limits.maxResponseBytes });
      return;
    }
    if (this.into && this.chunks === undefined && size <= this.declared) chunk.copy(this.into, this.size);
    else (this.chunks ??= []).push(chunk);
    this.size = size;
  }

  onResponseEnd(): void {
    if (this.done) return;
    const page = this.body();
    const { status, headers, headersAt } = this;
    if (this.wantBytes && status >= 200 && status < 300) {
      this.settle({ kind: "response", status, headers, headersAt, body: "", bytes: page });
      return;
    }
    const body = page.bytes.toString("utf8");
    page.release();
    this.settle({ kind: "response", status, headers, headersAt, body });
  }

  onResponseError(_c: Dispatcher.DispatchController | null, err: Error): void {
    if (this.done) return;
    const code = (err as { code?: string }).code ?? err.name ?? "error";
    // undici's SocketError tells what the connection read: nothing at all, on a new connection.
    const noAnswer = (err as { socket?: { bytesRead?: number } }).socket?.bytesRead === 0;
    this.settle(
      TIMEOUT_CODES.has(code)
        ? { kind: "timeout", afterMs: this.limits.timeoutMs }
        : { kind: "network", code, ...(noAnswer ? { noAnswer } : {}) },
    );
  }

  /** The body read: the lent buffer itself when the whole body fit in it (then owned by the result). */
  private body(): PageBytes {
    const into = this.into;
    const chunks = this.chunks ?? [];
    if (into && chunks.length === 0) {
      this.into = undefined;
      return this.lent(into, this.size);
    }
    const rest = chunks.reduce((a, c) => a + c.length, 0);
    const all = into ? [into.subarray(0, this.size - rest), ...chunks] : chunks;
    const bytes = all.length === 1 ? (all[0] as Buffer) : Buffer.concat(all, this.size);
    return { bytes, release: () => undefined };
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

  /** Ends the exchange with `result` now, and the request with it. */
  private stop(result: TransportResult): void {
    if (this.done) return;
    this.settle(result);
    this.controller?.abort(new ExchangeStopped(result.kind));
  }

  private settle(result: TransportResult): void {
    this.done = true;
    clearTimeout(this.timer);
    if (this.onAbort) this.signal?.removeEventListener("abort", this.onAbort);
    if (this.into) this.buffers.give(this.into);
    this.into = undefined;
    this.chunks = undefined;
    this.resolve(result);
  }
}
