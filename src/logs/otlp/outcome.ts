/**
 * What became of one export, and what is retryable.
 *
 * OTLP's rules, and where this exporter departs from them so that nothing is dropped that a retry
 * could still deliver:
 * - accepted (2xx), possibly with a partial success: the collector kept all but `rejected` records;
 * - retry: the collector could not take the batch now (network error, timeout, 429, any 5xx; OTLP
 *   lists only 502/503/504 but a 500 is as likely a passing fault) — the batch is retried with backoff
 *   and every tailer stops fetching meanwhile;
 * - refused: the collector will never take this batch as it is (400, 413, 422 and other 4xx) — the
 *   batch is split to isolate what is refused, and only that is dropped and counted;
 * - misconfigured: the collector refuses every batch (401, 403, 404, 405, 407: credentials or the
 *   endpoint are wrong) — retried like a down collector rather than dropped, because dropping would
 *   lose every record until someone fixes the configuration.
 */
export type ExportOutcome =
  | { kind: "accepted"; rejected: number; message?: string }
  | { kind: "retry"; reason: string; retryAfterMs?: number }
  | { kind: "refused"; reason: string }
  | { kind: "misconfigured"; reason: string };

const MISCONFIGURED = new Set([401, 403, 404, 405, 407]);

/** The outcome of an HTTP answer other than 2xx. */
export function classifyHttpStatus(status: number, message: string, retryAfterMs?: number): ExportOutcome {
  const reason = `HTTP ${status}${message ? `: ${message}` : ""}`;
  if (status === 408 || status === 429 || status >= 500) return { kind: "retry", reason, retryAfterMs };
  if (MISCONFIGURED.has(status)) return { kind: "misconfigured", reason };
  return { kind: "refused", reason };
}

/**
 * gRPC status codes (the gRPC exporter's errors): the retryable ones per OTLP, credentials and
 * unknown services as misconfigured, the rest refused.
 */
const GRPC_RETRYABLE = new Set([1, 4, 8, 10, 11, 13, 14, 15]); // CANCELLED, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED, OUT_OF_RANGE, INTERNAL, UNAVAILABLE, DATA_LOSS
const GRPC_MISCONFIGURED = new Set([5, 7, 12, 16]); // NOT_FOUND, PERMISSION_DENIED, UNIMPLEMENTED, UNAUTHENTICATED

export function classifyGrpcCode(code: number, message: string): ExportOutcome {
  const reason = `gRPC status ${code}${message ? `: ${message}` : ""}`;
  if (GRPC_RETRYABLE.has(code)) return { kind: "retry", reason };
  if (GRPC_MISCONFIGURED.has(code)) return { kind: "misconfigured", reason };
  return { kind: "refused", reason };
}

/** ExportLogsServiceResponse { 1: partial_success { 1: rejected_log_records int64, 2: error_message } }. */
export function parsePartialSuccess(body: Uint8Array): { rejected: number; message?: string } {
  let rejected = 0;
  let message: string | undefined;
  const walk = (bytes: Uint8Array, inner: boolean) => {
    let pos = 0;
    const varint = (): number => {
      let result = 0;
      let shift = 0;
      for (;;) {
        if (pos >= bytes.length) throw new Error("truncated");
        const b = bytes[pos++] as number;
        result += (b & 127) * 2 ** shift;
        if (b < 128) return result;
        shift += 7;
      }
    };
    while (pos < bytes.length) {
      const key = varint();
      const field = Math.floor(key / 8);
      const wire = key & 7;
      if (wire === 0) {
        const v = varint();
        if (inner && field === 1) rejected = v;
      } else if (wire === 2) {
        const len = varint();
        const slice = bytes.subarray(pos, pos + len);
        pos += len;
        if (!inner && field === 1) walk(slice, true);
        else if (inner && field === 2) message = Buffer.from(slice).toString("utf8");
      } else if (wire === 1) pos += 8;
      else if (wire === 5) pos += 4;
      else throw new Error(`wire type ${wire}`);
    }
  };
  try {
    walk(body, false);
  } catch {
    // An answer that is not the response message: nothing was said about rejections.
    return { rejected: 0 };
  }
  return message ? { rejected, message } : { rejected };
}
