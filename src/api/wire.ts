/**
 * Requests on the wire, for the API client: one exchange through the transport counted by route
 * template and code (its Date header a sample of the platform's clock), the retry policy's loop with
 * the shared 429 pause, and the typed error of an exchange that ended without an accepted answer. The
 * token and the endpoint table are the client's.
 */
import type { Logger } from "pino";
import { hostRootOf } from "../config/authUrl.js";
import type { Clock } from "../util/time.js";
import type { RequestBudget } from "./budget.js";
import type { ClockSkew } from "./clockSkew.js";
import type { DeprecationNotices } from "./deprecation.js";
import { isPermanentNetworkError, type SitehostApiError } from "./errors.js";
import { apiBaseHint, exchangeError } from "./failure.js";
import type { ApiClientOptions } from "./options.js";
import type { Redact } from "./redact.js";
import { exchange, RETRY_REASONS, type Exchange, type ExchangeResult, type RetryPolicy } from "./retry.js";
import { ROUTES, type RouteName } from "../routes.js";
import type { ApiSelfMetrics } from "./selfMetrics.js";
import { Transport, type TransportResult } from "./transport.js";

/** 429 answers one call tolerates before it fails (each one holds every request for its Retry-After). */
const MAX_RATE_LIMITED = 20;

/** The `code` label of a request: the HTTP status, or why there was none. */
function codeOf(result: TransportResult): string {
  if (result.kind === "response") return String(result.status);
  return result.kind === "network" ? "network_error" : result.kind;
}

/**
 * The setting a route's URL came from, as fixes name it: the token endpoints' is api.url's too when
 * api.authUrl is its host root (the default).
 */
function urlSetting(base: string, opts: Pick<ApiClientOptions, "apiUrl" | "authUrl">): string {
  if (base === "api") return "api.url (SITEHOST_API_URL)";
  let derived = false;
  try {
    derived = hostRootOf(opts.apiUrl) === opts.authUrl.replace(/\/+$/, "");
  } catch {
    // an unparsable api.url: the setting of the token URL is api.authUrl's
  }
  return derived
    ? "api.url (SITEHOST_API_URL; the token endpoint is on its host)"
    : "api.authUrl (SITEHOST_AUTH_URL)";
}

export type FailedExchange = Extract<ExchangeResult, { ok: false }>;

export class Wire {
  private readonly transport: Transport;
  private readonly policy: RetryPolicy;
  /** Routes whose retry counters are published (at 0 from their first request). */
  private readonly retriesShown = new Set<string>();

  constructor(
    private readonly opts: ApiClientOptions,
    private readonly budget: RequestBudget,
    private readonly metrics: ApiSelfMetrics,
    private readonly logger: Logger,
    private readonly redact: Redact,
    private readonly clock: Clock,
    /** Aborted when the client closes: ends every wait between retries. */
    private readonly closing: AbortSignal,
    /** Told of every answer: the platform's clock against this one. */
    private readonly skew: ClockSkew,
    /** Told of every answer: the platform's word that an endpoint is going away. */
    private readonly notices?: DeprecationNotices,
  ) {
    this.transport = new Transport({
      timeoutMs: opts.timeoutMs,
      maxResponseBytes: opts.maxResponseBytes,
      connections: opts.maxConcurrency + 2,
    });
    this.policy = {
      maxRetries: opts.maxRetries,
      maxRateLimited: MAX_RATE_LIMITED,
      maxRetryAfterMs: opts.maxRetryAfterMs,
      backoff: { baseMs: opts.backoffBaseMs ?? 500, capMs: opts.backoffCapMs ?? 30_000 },
      clock,
      stop: closing,
      failFast: opts.failFast,
    };
  }

  /** One exchange on the wire, counted by route template and code. */
  async send(
    route: RouteName,
    url: string,
    headers: Record<string, string>,
    body: unknown,
    signal: AbortSignal | undefined,
    /** A success's body as bytes (see Transport). */
    bytes?: boolean,
  ): Promise<TransportResult> {
    const endpoint = ROUTES[route].template;
    if (!this.retriesShown.has(endpoint)) {
      // A route's retry counters exist at 0 from its first request, so rate() sees the first retry.
      this.retriesShown.add(endpoint);
      for (const reason of RETRY_REASONS) this.metrics.retries.inc({ endpoint, reason }, 0);
    }
    const sentAt = this.clock.now();
    const started = performance.now();
    this.metrics.inFlight.inc();
    try {
      const method = ROUTES[route].method;
      const sent = await this.transport.send({ method, url, headers, body, signal, bytes });
      const result =
        sent.kind === "network" && isPermanentNetworkError(sent.code, url, sent)
          ? { ...sent, permanent: true }
          : sent;
      if (result.kind !== "aborted") this.metrics.requests.inc({ endpoint, code: codeOf(result) });
      if (result.kind === "response") {
        this.skew.observe(result.headers, sentAt, result.headersAt - started, result.headersAt);
        this.notices?.observe(endpoint, result.headers, this.clock.now());
      }
      return result;
    } finally {
      this.metrics.inFlight.dec();
      this.metrics.duration.observe({ endpoint }, (performance.now() - started) / 1000);
    }
  }

  /** The retry policy's exchange with this route's metrics and the shared 429 pause. */
  exchange(route: RouteName, x: Omit<Exchange, "onRetry" | "onRateLimited">): Promise<ExchangeResult> {
    const endpoint = ROUTES[route].template;
    return exchange(this.policy, {
      ...x,
      onRetry: (reason) => this.metrics.retries.inc({ endpoint, reason }),
      onRateLimited: (untilMs, waitMs, cappedFromMs) => {
        this.budget.pauseUntil(untilMs);
        if (cappedFromMs !== undefined) this.metrics.retryAfterCapped.inc({ endpoint });
        this.logger.warn(
          { endpoint, retryAfterMs: Math.round(waitMs), askedMs: cappedFromMs },
          cappedFromMs === undefined
            ? "rate limited by the platform (429); pausing every API request"
            : "rate limited by the platform (429) with a Retry-After longer than api.maxRetryAfter; pausing every API request for api.maxRetryAfter",
        );
      },
    });
  }

  /** The typed error of an exchange that ended without an accepted answer, naming `where`. */
  failure(route: RouteName, where: string, result: FailedExchange): SitehostApiError {
    return exchangeError(ROUTES[route].template, result, {
      closed: this.closing.aborted,
      timeoutMs: this.opts.timeoutMs,
      maxResponseBytes: this.opts.maxResponseBytes,
      redact: this.redact,
      where,
      notFoundHint: ROUTES[route].base === "api" ? apiBaseHint(this.opts.apiUrl) : undefined,
      urlSetting: urlSetting(ROUTES[route].base, this.opts),
    });
  }

  close(): Promise<void> {
    return this.transport.close();
  }
}
