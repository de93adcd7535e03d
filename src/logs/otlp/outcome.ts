/**
 * What became of one export, and what is retryable.
 *
 * OTLP's rules, and where this exporter departs from them so that nothing is dropped that a retry
 * could still deliver:
 * - accepted (2xx with an OTLP answer), possibly with a partial success: the collector kept all but
 *   `rejected` records;
 * - retry: the collector could not take the batch now (network error, timeout, 429, any 5xx; OTLP
 *   lists only 502/503/504 but a 500 is as likely a passing fault) — the batch is retried with backoff
 *   and every tailer stops fetching meanwhile;
 * - refused: the collector will not take this batch as it is (400, 413, 422 and other 4xx; gRPC
 *   INVALID_ARGUMENT and the like) — the batch is split to find out whether the collector takes any of
 *   its records: if it does, only what it refuses is dropped and counted; if it takes none of them,
 *   the endpoint refuses everything and the export is retried like a down collector's (deliverBatch);
 * - misconfigured: the collector refuses every batch whatever it holds (a redirect, 401, 403, 404,
 *   405, 407, 415: credentials, the endpoint or the protocol are wrong) — retried like a down collector
 *   rather than dropped, because dropping would lose every record until someone fixes the configuration;
 * - invalid: a 2xx whose body is not an OTLP ExportLogsServiceResponse (an HTML page from a proxy, a web
 *   server's "OK"): nothing says an OTLP receiver took the records, so it is retried the same way.
 */
export type ExportOutcome =
  | { kind: "accepted"; rejected: number; message?: string }
  | { kind: "retry"; reason: string; retryAfterMs?: number }
  | { kind: "refused"; reason: string }
  | { kind: "misconfigured"; reason: string }
  | { kind: "invalid"; reason: string };

/**
 * An export that did not go through and is retried with backoff: the collector could not be reached
 * or could not take it now (retry), or it answered and refused it as a whole (every other kind; a
 * "refused" failure is one the collector refused every record of, `partial` when a partial success
 * rejected them all).
 */
export type ExportFailure =
  | Extract<ExportOutcome, { kind: "retry" | "misconfigured" | "invalid" }>
  | { kind: "refused"; reason: string; partial?: boolean };

/** How an export was refused as a whole (the `reason` label of sitehost_exporter_log_exports_refused_total). */
export type RefusalReason = "status" | "partial_success" | "not_otlp";
export const REFUSAL_REASONS: readonly RefusalReason[] = ["status", "partial_success", "not_otlp"];

/** The endpoint answered and refused the export (not an outage): how; undefined for an outage. */
export function refusalReason(failure: ExportFailure): RefusalReason | undefined {
  if (failure.kind === "retry") return undefined;
  if (failure.kind === "invalid") return "not_otlp";
  if (failure.kind === "refused" && failure.partial) return "partial_success";
  return "status";
}

const MISCONFIGURED = new Set([401, 403, 404, 405, 407, 415]);

/** The outcome of an HTTP answer other than 2xx. */
export function classifyHttpStatus(status: number, message: string, retryAfterMs?: number): ExportOutcome {
  const reason = `HTTP ${status}${message ? `: ${message}` : ""}`;
  if (status === 408 || status === 429 || status >= 500) return { kind: "retry", reason, retryAfterMs };
  if (MISCONFIGURED.has(status) || (status >= 300 && status < 400)) return { kind: "misconfigured", reason };
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

/** The same outcome with its reason passed through `redact` (text the endpoint sent back). */
export function redactOutcome<O extends ExportOutcome>(outcome: O, redact: (text: string) => string): O {
  if ("reason" in outcome) return { ...outcome, reason: redact(outcome.reason) };
  return outcome.message === undefined ? outcome : { ...outcome, message: redact(outcome.message) };
}
