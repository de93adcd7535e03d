/**
 * Typed errors of the API client, each with a reason from a small fixed set (the `reason` label of
 * the failure metrics). Messages name the endpoint and status; they never contain the client secret
 * or a token (only data the platform sent back about the request, redacted and abbreviated).
 */
export type ApiErrorReason =
  "auth" | "rate_limited" | "http" | "network" | "timeout" | "too_large" | "schema" | "closed" | "aborted";

export class SitehostApiError extends Error {
  readonly reason: ApiErrorReason = "network";

  constructor(
    message: string,
    readonly endpoint: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Credentials rejected, an unusable token answer, or a second 401 after re-authentication. */
export class ApiAuthError extends SitehostApiError {
  override readonly reason = "auth";
}

/** 429 retries exhausted; retryAfterMs is the platform's last Retry-After (as honoured). */
export class ApiRateLimitedError extends SitehostApiError {
  override readonly reason = "rate_limited";
  constructor(
    endpoint: string,
    readonly retryAfterMs: number,
  ) {
    super(`${endpoint}: rate limited by the platform (429), retries exhausted`, endpoint);
  }
}

/** A non-success HTTP status with the platform's error envelope. */
export class ApiHttpError extends SitehostApiError {
  override readonly reason = "http";
  constructor(
    endpoint: string,
    readonly status: number,
    readonly apiMessage: string | undefined,
    readonly apiErrors: string[],
  ) {
    const detail = [apiMessage, ...apiErrors].filter(Boolean).join("; ");
    super(`${endpoint}: HTTP ${status}${detail ? ` (${abbreviate(detail, 200)})` : ""}`, endpoint);
  }
}

/** A response (or a single-object response's data) that does not fit its schema. */
export class ApiSchemaError extends SitehostApiError {
  override readonly reason = "schema";
  constructor(
    endpoint: string,
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${endpoint}: unexpected response shape at ${field || "(root)"}: ${problem}`, endpoint);
  }
}

/** Connection refused/reset, DNS failure. */
export class ApiNetworkError extends SitehostApiError {
  override readonly reason = "network";
  constructor(
    endpoint: string,
    readonly code: string,
  ) {
    super(`${endpoint}: network error (${code})`, endpoint);
  }
}

/** No complete answer (headers and body) within api.timeout. */
export class ApiTimeoutError extends SitehostApiError {
  override readonly reason = "timeout";
  constructor(
    endpoint: string,
    readonly afterMs: number,
  ) {
    super(`${endpoint}: no complete answer within ${afterMs} ms (api.timeout)`, endpoint);
  }
}

/** A response body over api.maxResponseSize: not read further. */
export class ApiResponseTooLargeError extends SitehostApiError {
  override readonly reason = "too_large";
  constructor(
    endpoint: string,
    readonly limitBytes: number,
  ) {
    super(`${endpoint}: response body larger than ${limitBytes} bytes (api.maxResponseSize)`, endpoint);
  }
}

/** The client was closed (shutdown) or the caller gave up. */
export class ApiAbortedError extends SitehostApiError {
  override readonly reason: "closed" | "aborted";
  constructor(endpoint: string, closed: boolean, options?: ErrorOptions) {
    super(`${endpoint}: ${closed ? "the API client is closed" : "request aborted"}`, endpoint, options);
    this.reason = closed ? "closed" : "aborted";
  }
}

export function abbreviate(text: string, max = 80): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** The reason label of an error: an API error's own (HTTP errors with their status), else "other". */
export function errorReason(err: unknown): string {
  if (err instanceof ApiHttpError) return `http_${err.status}`;
  return err instanceof SitehostApiError ? err.reason : "other";
}
