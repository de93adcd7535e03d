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
import { displayUrl, type Redact } from "./redact.js";
import type { ExchangeResult } from "./retry.js";
import { ErrorBodySchema } from "./schemas.js";

export interface FailureContext {
  /** The client was closed (an abort is then "closed", not "aborted"). */
  closed: boolean;
  timeoutMs: number;
  maxResponseBytes: number;
  redact: Redact;
  /** The request as messages name it: `GET https://…` without credentials. */
  where: string;
  /** What to check after a 404 (the base URL), when the request's URL suggests something. */
  notFoundHint?: string;
  /** The setting the request's URL came from (`api.url (SITEHOST_API_URL)`), named by network errors' fixes. */
  urlSetting?: string;
}

const FORBIDDEN_HINT =
  "the API application lacks a scope or role this endpoint needs: grant it on the platform, or disable the collector that uses it";

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
      return new ApiTimeoutError(endpoint, ctx.timeoutMs, ctx.where);
    case "too_large":
      return new ApiResponseTooLargeError(endpoint, ctx.maxResponseBytes, ctx.where);
    case "network":
      return last.kind === "network"
        ? new ApiNetworkError(endpoint, last.code, ctx.where, ctx.urlSetting, { noAnswer: last.noAnswer })
        : new ApiNetworkError(endpoint, last.kind, ctx.where);
    case "rate_limited":
      return new ApiRateLimitedError(endpoint, result.retryAfterMs ?? 0, ctx.where);
    case "auth":
      return new ApiAuthError(
        `${ctx.where}: HTTP 401 again after re-authenticating; the token was refused: the API application may have been revoked or lost access`,
        endpoint,
      );
    default:
      return last.kind === "response"
        ? httpError(endpoint, last.status, last.body, ctx)
        : new ApiNetworkError(endpoint, last.kind, ctx.where);
  }
}

/** A non-success status, with the platform's error envelope (redacted) when the body is one. */
function httpError(endpoint: string, status: number, text: string, ctx: FailureContext): ApiHttpError {
  const redact = ctx.redact;
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
  const hint = status === 404 ? ctx.notFoundHint : status === 403 ? FORBIDDEN_HINT : undefined;
  return new ApiHttpError(endpoint, status, apiMessage, apiErrors, ctx.where, hint);
}

/** After a 404 from the API: a base URL that does not end in /v1 is the likely cause. */
export function apiBaseHint(apiUrl: string): string | undefined {
  try {
    const u = new URL(apiUrl);
    if (/\/v1\/*$/.test(u.pathname)) return undefined;
    return `the API base URL must end in /v1: check api.url (SITEHOST_API_URL), e.g. ${displayUrl(`${u.origin}${u.pathname.replace(/\/+$/, "")}/v1`)}`;
  } catch {
    return undefined;
  }
}
