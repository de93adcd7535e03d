/**
 * Typed errors of the API client, each with a reason from a small fixed set (the `reason` label of
 * the failure metrics). `endpoint` is the route template (metrics); messages start with `where`, the
 * request as sent (`GET https://api.example/v1/sites?page=1`, without credentials) when the client
 * knows it, and say what to fix where that is known. They never contain the client secret or a token
 * (only data the platform sent back about the request, redacted and abbreviated).
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

/** What a network error code means, for a person; undefined for codes without a known meaning. */
const NETWORK_CODES: Record<string, (host: string) => string> = {
  ECONNREFUSED: (host) => `connection refused: nothing listens at ${host}`,
  ENOTFOUND: (host) => `the host ${hostName(host)} could not be resolved (DNS: no such host)`,
  EAI_AGAIN: (host) => `the host ${hostName(host)} could not be resolved now (DNS is failing)`,
  ECONNRESET: (host) => `the connection to ${host} was reset`,
  EHOSTUNREACH: (host) => `the host ${host} is unreachable`,
  ENETUNREACH: (host) => `the network of ${host} is unreachable`,
  ETIMEDOUT: (host) => `the connection to ${host} timed out`,
  UND_ERR_SOCKET: (host) => `the connection to ${host} closed before the answer ended`,
  DEPTH_ZERO_SELF_SIGNED_CERT: (host) => `the TLS certificate of ${host} is self-signed`,
  SELF_SIGNED_CERT_IN_CHAIN: (host) => `the TLS certificate chain of ${host} has a self-signed certificate`,
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: (host) => `the TLS certificate of ${host} could not be verified`,
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: (host) => `the TLS certificate of ${host} could not be verified`,
  CERT_HAS_EXPIRED: (host) => `the TLS certificate of ${host} has expired`,
  ERR_TLS_CERT_ALTNAME_INVALID: (host) => `the TLS certificate of ${host} is not for that host name`,
  EPROTO: (host) => `the TLS handshake with ${host} failed (is it TLS on that port?)`,
};

/** TLS errors of an https:// URL whose port answers in plain HTTP. */
const TLS_TO_PLAIN = new Set([
  "ERR_SSL_WRONG_VERSION_NUMBER",
  "ERR_SSL_PACKET_LENGTH_TOO_LONG",
  "ERR_SSL_RECORD_LAYER_FAILURE",
  "EPROTO",
]);

/** An answer the HTTP parser could not read (llhttp's HPE_ codes; undici's HTTPParserError without one). */
function notHttp(code: string): boolean {
  return code.startsWith("HPE_") || code === "HTTPParserError";
}

/** How a network error came about, beyond its code. */
export interface NetworkErrorDetail {
  /** The connection closed before the server sent a byte. */
  noAnswer?: boolean;
}

/** The host name alone of a hostOf() text. */
function hostName(host: string): string {
  return host.replace(/ \(port \d+\)$/, "").replace(/:\d+$/, "");
}

/** The host:port of a URL, or the text itself when it is no URL. */
function hostOf(url: string): string {
  try {
    const u = new URL(url);
    return u.port ? `${u.hostname}:${u.port}` : `${u.hostname} (port ${u.protocol === "https:" ? 443 : 80})`;
  } catch {
    return url;
  }
}

function schemeOf(url: string): string | undefined {
  try {
    return new URL(url).protocol;
  } catch {
    return undefined;
  }
}

/** The error is a TLS client meeting plain HTTP, or plain HTTP meeting TLS (which one the scheme says). */
function schemeMismatch(
  code: string,
  url: string,
  detail: NetworkErrorDetail,
): "tls-to-plain" | "plain-to-tls" | undefined {
  const scheme = schemeOf(url);
  if (scheme === "https:" && TLS_TO_PLAIN.has(code)) return "tls-to-plain";
  if (scheme === "http:" && (notHttp(code) || (code === "UND_ERR_SOCKET" && detail.noAnswer))) {
    return "plain-to-tls";
  }
  return undefined;
}

/** A network error code as words naming the host, with the code: `connection refused: … (ECONNREFUSED)`. */
export function describeNetworkError(code: string, url: string, detail: NetworkErrorDetail = {}): string {
  const host = hostOf(url);
  switch (schemeMismatch(code, url, detail)) {
    case "tls-to-plain":
      return `${host} does not speak TLS (an https:// URL to a plain HTTP port, usually) (${code})`;
    case "plain-to-tls":
      return `${host} ${notHttp(code) ? "answered something that is not HTTP" : "closed the connection without answering"} (a plain http:// request to a TLS port, usually) (${code})`;
  }
  const words = NETWORK_CODES[code];
  return words ? `${words(host)} (${code})` : `network error (${code}) reaching ${host}`;
}

/**
 * What to fix after a network error, naming the setting the URL came from (`api.url
 * (SITEHOST_API_URL)`); undefined when the code suggests nothing to change (a reset, a TLS
 * certificate problem: the description says it all).
 */
export function networkErrorFix(
  code: string,
  url: string,
  setting: string,
  detail: NetworkErrorDetail = {},
): string | undefined {
  if (schemeMismatch(code, url, detail)) return `check the scheme (https:// or http://) of ${setting}`;
  const host = hostOf(url);
  switch (code) {
    case "ECONNREFUSED":
      return `check the host and port in ${setting}, and that the server there is up`;
    case "ENOTFOUND":
      return `check the host name as written in ${setting}: ${JSON.stringify(hostName(host))}`;
    case "EAI_AGAIN":
      return `check this machine's DNS, and the host name as written in ${setting}: ${JSON.stringify(hostName(host))}`;
    case "EHOSTUNREACH":
    case "ENETUNREACH":
    case "ETIMEDOUT":
      return `check the host in ${setting} and that ${host} is reachable from here (a firewall, a route, a proxy)`;
    default:
      return undefined;
  }
}

/** Network errors no retry mends: the URL or the server's state must change first (doctor stops at once). */
export function isPermanentNetworkError(code: string, url: string, detail: NetworkErrorDetail = {}): boolean {
  return code === "ECONNREFUSED" || code === "ENOTFOUND" || schemeMismatch(code, url, detail) !== undefined;
}

/** The URL part of a `where` ("GET https://…" → "https://…"). */
function urlOf(where: string): string {
  return where.replace(/^[A-Z]+ /, "");
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
    where = endpoint,
  ) {
    super(
      `${where}: rate limited by the platform (429), retries exhausted; lower api.maxRequestsPerSecond`,
      endpoint,
    );
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
    where = endpoint,
    /** What to check, when the status suggests it (a 404 on a base without /v1, a 403's scope). */
    readonly hint?: string,
  ) {
    const detail = [apiMessage, ...apiErrors].filter(Boolean).join("; ");
    super(
      `${where}: HTTP ${status}${detail ? ` (${abbreviate(detail, 200)})` : ""}${hint ? `; ${hint}` : ""}`,
      endpoint,
    );
  }
}

/** A response (or a single-object response's data) that does not fit its schema. */
export class ApiSchemaError extends SitehostApiError {
  override readonly reason = "schema";
  constructor(
    endpoint: string,
    readonly field: string,
    readonly problem: string,
    where = endpoint,
  ) {
    super(`${where}: unexpected response shape at ${field || "(root)"}: ${problem}`, endpoint);
  }

  /** The same error, naming the request (the decoders know only the endpoint). */
  at(where: string): ApiSchemaError {
    return new ApiSchemaError(this.endpoint, this.field, this.problem, where);
  }
}

/** Connection refused/reset, DNS failure, a TLS or scheme mismatch. */
export class ApiNetworkError extends SitehostApiError {
  override readonly reason = "network";
  constructor(
    endpoint: string,
    readonly code: string,
    where = endpoint,
    /** The setting the URL came from (`api.url (SITEHOST_API_URL)`): the message then names the fix. */
    setting?: string,
    detail: NetworkErrorDetail = {},
  ) {
    const url = urlOf(where);
    const fix = setting === undefined ? undefined : networkErrorFix(code, url, setting, detail);
    super(`${where}: ${describeNetworkError(code, url, detail)}${fix ? `; ${fix}` : ""}`, endpoint);
  }
}

/** No complete answer (headers and body) within api.timeout. */
export class ApiTimeoutError extends SitehostApiError {
  override readonly reason = "timeout";
  constructor(
    endpoint: string,
    readonly afterMs: number,
    where = endpoint,
  ) {
    const reach = /^[A-Z]+ https?:\/\//.test(where) ? ` is ${hostOf(urlOf(where))} reachable from here?` : "";
    super(
      `${where}: no complete answer within ${afterMs} ms (api.timeout):${reach} if the platform is slow to answer, raise api.timeout`,
      endpoint,
    );
  }
}

/** A response body over api.maxResponseSize: not read further. */
export class ApiResponseTooLargeError extends SitehostApiError {
  override readonly reason = "too_large";
  constructor(
    endpoint: string,
    readonly limitBytes: number,
    where = endpoint,
  ) {
    super(`${where}: response body larger than ${limitBytes} bytes (api.maxResponseSize)`, endpoint);
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
