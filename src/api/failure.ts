/** The typed error (src/api/errors.ts) for an exchange that ended without an accepted answer. */
import {
  ApiAbortedError,
  ApiAuthError,
  ApiHttpError,
  ApiNetworkError,
  ApiRateLimitedError,
  ApiResponseTooLargeError,
  ApiTimeoutError,
  type SitehostApiError,
} from "./errors.js";
import type { Redact } from "./redact.js";
import type { ExchangeResult } from "./retry.js";
import { ErrorBodySchema } from "./schemas.js";

export interface FailureContext {
  /** The client was closed (an abort is then "closed", not "aborted"). */
  closed: boolean;
  timeoutMs: number;
  maxResponseBytes: number;
  redact: Redact;
}

export function exchangeError(
  endpoint: string,
  result: Extract<ExchangeResult, { ok: false }>,
  ctx: FailureContext,
): SitehostApiError {
  const last = result.last;
  switch (result.reason) {
    case "aborted":
      return new ApiAbortedError(endpoint, ctx.closed, {
        cause: last.kind === "aborted" ? last.reason : undefined,
      });
    case "timeout":
      return new ApiTimeoutError(endpoint, ctx.timeoutMs);
    case "too_large":
      return new ApiResponseTooLargeError(endpoint, ctx.maxResponseBytes);
    case "network":
      return new ApiNetworkError(endpoint, last.kind === "network" ? last.code : last.kind);
    case "rate_limited":
      return new ApiRateLimitedError(endpoint, result.retryAfterMs ?? 0);
    case "auth":
      return new ApiAuthError(`${endpoint}: HTTP 401 again after re-authenticating`, endpoint);
    default:
      return last.kind === "response"
        ? httpError(endpoint, last.status, last.body, ctx.redact)
        : new ApiNetworkError(endpoint, last.kind);
  }
}

/** A non-success status, with the platform's error envelope (redacted) when the body is one. */
function httpError(endpoint: string, status: number, text: string, redact: Redact): ApiHttpError {
  let apiMessage: string | undefined;
  let apiErrors: string[] = [];
  try {
    const parsed = ErrorBodySchema.safeParse(JSON.parse(text));
    if (parsed.success) {
      apiMessage = parsed.data.message === undefined ? undefined : redact(parsed.data.message);
      apiErrors = (parsed.data.errors ?? []).map(redact);
    }
  } catch {
    // not JSON (a proxy page): status alone
  }
  return new ApiHttpError(endpoint, status, apiMessage, apiErrors);
}
