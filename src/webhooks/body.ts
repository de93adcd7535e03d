/**
 * The request body of a delivery: read up to a limit and no further (a larger body is refused as soon
 * as it is known to be larger, from Content-Length or while reading, and the rest is never buffered),
 * then parsed as JSON and checked against the payload schema.
 */
import type { IncomingHttpHeaders } from "node:http";
import { WebhookPayloadSchema, type WebhookPayload } from "./payload.js";

/** Largest body accepted; documented payloads are well under a kilobyte. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** What the reader needs of a request: its headers and its body as a stream of chunks. */
export interface BodySource {
  headers: IncomingHttpHeaders;
  on(event: "data", listener: (chunk: Buffer) => void): unknown;
  on(event: "end" | "close", listener: () => void): unknown;
  on(event: "error", listener: (err: Error) => void): unknown;
  removeAllListeners(event?: string): unknown;
  pause(): unknown;
}

export type BodyResult =
  | { kind: "ok"; body: Buffer }
  | { kind: "too_large" }
  /** The client went away (or the stream failed) before the body ended. */
  | { kind: "aborted" };

export function readBody(req: BodySource, limit = MAX_BODY_BYTES): Promise<BodyResult> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve({ kind: "too_large" });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (result: BodyResult) => {
      if (settled) return;
      settled = true;
      // Stop listening (and reading): whatever else the client sends is not wanted.
      req.removeAllListeners("data");
      if (result.kind !== "ok") req.pause();
      resolve(result);
    };
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return settle({ kind: "too_large" });
      chunks.push(chunk);
    });
    req.on("end", () => settle({ kind: "ok", body: Buffer.concat(chunks, size) }));
    req.on("error", () => settle({ kind: "aborted" }));
    req.on("close", () => settle({ kind: "aborted" }));
  });
}

export type ParseResult = { ok: WebhookPayload } | { problem: string };

/** A JSON object with an `event` string, or what is wrong with it (for the 400 answer). */
export function parsePayload(body: Buffer): ParseResult {
  let value: unknown;
  try {
    value = JSON.parse(body.toString("utf8"));
  } catch {
    return { problem: "the body is not JSON" };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { problem: "the body is not a JSON object" };
  }
  const parsed = WebhookPayloadSchema.safeParse(value);
  if (!parsed.success) return { problem: "the body has no event name (a non-empty string field event)" };
  return { ok: parsed.data };
}
