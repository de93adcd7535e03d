/**
 * Typed errors of the API client. Messages name the endpoint and status; they
 * never contain the client secret or a token (only data the platform sent back
 * about the request, abbreviated).
 */
export class SitehostApiError extends Error {
  constructor(
    message: string,
    readonly endpoint: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** Credentials rejected, or a second 401 after re-authentication. */
export class ApiAuthError extends SitehostApiError {}

/** 429 retries exhausted; retryAfterMs is the platform's last Retry-After. */
export class ApiRateLimitedError extends SitehostApiError {
  constructor(
    endpoint: string,
    readonly retryAfterMs: number,
  ) {
    super(`${endpoint}: rate limited by the platform (429), retries exhausted`, endpoint);
  }
}

/** A non-success HTTP status with the platform's error envelope. */
export class ApiHttpError extends SitehostApiError {
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
  constructor(
    endpoint: string,
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${endpoint}: unexpected response shape at ${field || "(root)"}: ${problem}`, endpoint);
  }
}

/** Connection refused/reset, DNS failure, timeout. */
export class ApiNetworkError extends SitehostApiError {
  constructor(
    endpoint: string,
    readonly code: string,
  ) {
    super(`${endpoint}: network error (${code})`, endpoint);
  }
}

export function abbreviate(text: string, max = 80): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
