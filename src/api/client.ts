/**
 * The only code that speaks HTTP to the platform. It puts together the transport (one exchange, a
 * tagged result), the token, the shared request budget, the retry policy and the endpoint table's
 * decoders, and records the per-route metrics.
 */
import { readFile } from "node:fs/promises";
import type { Logger } from "pino";
import { systemClock, type Clock } from "../util/time.js";
import { AUTH_SOURCE, RequestBudget } from "./budget.js";
import type { DecodeContext, ListResult } from "./decode.js";
import { ENDPOINTS, type Endpoint, type EndpointName } from "./endpoints.js";
import {
  ApiAbortedError,
  ApiAuthError,
  ApiHttpError,
  ApiNetworkError,
  ApiRateLimitedError,
  ApiResponseTooLargeError,
  ApiSchemaError,
  ApiTimeoutError,
  SitehostApiError,
} from "./errors.js";
import type { ApiClientOptions } from "./options.js";
import { SecretRedactor } from "./redact.js";
import { exchange, type ExchangeResult, type RetryPolicy } from "./retry.js";
import { ROUTES, routePath, type RouteName } from "./routes.js";
import { ErrorBodySchema, type Site } from "./schemas.js";
import { apiSelfMetrics, type ApiSelfMetrics } from "./selfMetrics.js";
import { TokenManager, type TokenAnswer } from "./token.js";
import { Transport, type TransportResult } from "./transport.js";
import type { EndpointMethods, RequestOptions, SitehostApi } from "./types.js";
import { ThrottledWarnings } from "../util/throttledLog.js";

export { apiClientOptionsFromConfig, type ApiClientOptions } from "./options.js";

/** 429 answers one call tolerates before it fails (each one holds every request for its Retry-After). */
const MAX_RATE_LIMITED = 20;
/** Sites per page when listing them. */
export const SITES_PER_PAGE = 100;

function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, "") + path;
}

class ApiCore {
  readonly budget: RequestBudget;
  private readonly transport: Transport;
  private readonly tokens: TokenManager;
  private readonly metrics: ApiSelfMetrics;
  private readonly logger: Logger;
  private readonly redactor = new SecretRedactor();
  private readonly policy: RetryPolicy;
  private readonly clock: Clock;
  private readonly rejectedWarnings: ThrottledWarnings;
  private clientSecret: string;
  private closed = false;

  constructor(private readonly opts: ApiClientOptions) {
    this.clock = opts.clock ?? systemClock;
    this.logger = opts.logger.child({ component: "api" });
    this.budget = new RequestBudget(opts.maxConcurrency, opts.maxRequestsPerSecond, this.clock);
    this.metrics = apiSelfMetrics(opts.registry, () => this.budget.pausedUntil);
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
      clock: this.clock,
    };
    this.clientSecret = opts.clientSecret;
    this.redactor.addSecret(opts.clientSecret);
    this.tokens = new TokenManager(
      () => this.requestToken(),
      opts.tokenRefreshMarginMs,
      (result) => this.metrics.tokenRequests.inc({ result }),
      this.clock,
    );
    this.rejectedWarnings = new ThrottledWarnings(this.logger, 60_000, this.clock);
  }

  // ------------------------------------------------------------------ one exchange with metrics

  private async send(
    route: RouteName,
    url: string,
    headers: Record<string, string>,
    body: unknown,
    signal: AbortSignal | undefined,
  ): Promise<TransportResult> {
    const endpoint = ROUTES[route].template;
    const started = performance.now();
    this.metrics.inFlight.inc();
    try {
      const result = await this.transport.send({ method: ROUTES[route].method, url, headers, body, signal });
      const code =
        result.kind === "response"
          ? String(result.status)
          : result.kind === "network"
            ? "network_error"
            : result.kind;
      if (result.kind !== "aborted") this.metrics.requests.inc({ endpoint, code });
      return result;
    } finally {
      this.metrics.inFlight.dec();
      this.metrics.duration.observe({ endpoint }, (performance.now() - started) / 1000);
    }
  }

  private hooks(endpoint: string) {
    return {
      onRetry: (reason: string) => this.metrics.retries.inc({ endpoint, reason }),
      onRateLimited: (untilMs: number, waitMs: number, cappedFromMs: number | undefined) => {
        this.budget.pauseUntil(untilMs);
        if (cappedFromMs !== undefined) this.metrics.retryAfterCapped.inc({ endpoint });
        this.logger.warn(
          { endpoint, retryAfterMs: Math.round(waitMs), askedMs: cappedFromMs },
          cappedFromMs === undefined
            ? "rate limited by the platform (429); pausing every API request"
            : "rate limited by the platform (429) with a Retry-After longer than api.maxRetryAfter; pausing every API request for api.maxRetryAfter",
        );
      },
    };
  }

  // ------------------------------------------------------------------ token

  /** The client secret, re-read from its file when there is one: a rotated secret is used without a restart. */
  private async currentSecret(): Promise<string> {
    const file = this.opts.clientSecretFile;
    if (!file) return this.clientSecret;
    try {
      const secret = (await readFile(file, "utf8")).replace(/(?:\r?\n)+$/, "");
      if (secret !== "" && secret !== this.clientSecret) {
        this.redactor.addSecret(secret);
        this.clientSecret = secret;
        this.logger.info({ file }, "the client secret file changed; using the new secret");
      }
    } catch (err) {
      this.logger.warn(
        { file, code: (err as NodeJS.ErrnoException).code },
        "cannot re-read the client secret file; using the secret read before",
      );
    }
    return this.clientSecret;
  }

  private async requestToken(): Promise<TokenAnswer> {
    const endpoint = ROUTES.token.template;
    const secret = await this.currentSecret();
    const result = await exchange(this.policy, {
      attempt: async () => {
        const release = await this.budget.acquire(AUTH_SOURCE);
        try {
          return await this.send(
            "token",
            joinUrl(this.opts.authUrl, endpoint),
            {},
            { grant_type: "client_credentials", client_id: this.opts.clientId, client_secret: secret },
            undefined,
          );
        } finally {
          release();
        }
      },
      repeatable: true,
      ...this.hooks(endpoint),
    });
    if (result.ok) {
      const token = this.tokenValue(result.response.body);
      if (token) this.redactor.addToken(token);
      return { status: result.response.status, body: result.response.body };
    }
    // An answer about the credentials (4xx) is the token manager's to judge; no answer is an error here.
    const last = result.last;
    if (last.kind === "response" && last.status >= 400 && last.status < 500 && last.status !== 429) {
      return { status: last.status, body: last.body };
    }
    this.metrics.failures.inc({ endpoint, reason: result.reason });
    throw this.failure(endpoint, result);
  }

  private tokenValue(body: string): string | undefined {
    try {
      const token = (JSON.parse(body) as { access_token?: unknown } | null)?.access_token;
      return typeof token === "string" ? token : undefined;
    } catch {
      return undefined;
    }
  }

  // ------------------------------------------------------------------ calls

  async call<I, O>(e: Endpoint<I, O>, input: I, opts: RequestOptions = {}): Promise<O> {
    const endpoint = ROUTES[e.route].template;
    try {
      if (this.closed) throw new ApiAbortedError(endpoint, true);
      const parts = e.request(input);
      const url = new URL(joinUrl(this.opts.apiUrl, routePath(e.route, parts.params as never)));
      for (const [k, v] of Object.entries(parts.query ?? {})) url.searchParams.set(k, v);
      const body = await this.authorizedExchange(
        e.route,
        url.toString(),
        parts.body,
        e.repeatable?.(input) ?? true,
        opts,
      );
      return await e.decode(this.parseJson(body, endpoint), this.decodeContext(endpoint));
    } catch (err) {
      const reason = err instanceof SitehostApiError ? err.reason : "other";
      if (reason !== "aborted" && reason !== "closed") this.metrics.failures.inc({ endpoint, reason });
      throw err;
    }
  }

  private async authorizedExchange(
    route: RouteName,
    url: string,
    body: unknown,
    repeatable: boolean,
    opts: RequestOptions,
  ): Promise<string> {
    const endpoint = ROUTES[route].template;
    const source = opts.source ?? "other";
    let token = "";
    const result = await exchange(this.policy, {
      attempt: async () => {
        for (;;) {
          try {
            token = await this.tokens.get();
          } catch (err) {
            throw err instanceof SitehostApiError
              ? err
              : new ApiAuthError(`${endpoint}: ${(err as Error).message}`, endpoint);
          }
          let release;
          try {
            release = await this.budget.acquire(source, opts.signal);
          } catch (err) {
            return { kind: "aborted", reason: err } as const;
          }
          // The token may have aged while queued: never send one past its usable window.
          if (!this.tokens.isUsable(token)) {
            release();
            continue;
          }
          try {
            return await this.send(route, url, { authorization: `Bearer ${token}` }, body, opts.signal);
          } finally {
            release();
          }
        }
      },
      repeatable,
      reauthenticate: () => this.tokens.invalidate(token),
      signal: opts.signal,
      ...this.hooks(endpoint),
    });
    if (result.ok) return result.response.body;
    throw this.failure(endpoint, result);
  }

  private parseJson(text: string, endpoint: string): unknown {
    if (text.trim() === "") return null;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new ApiSchemaError(endpoint, "", "the response body is not JSON");
    }
  }

  private decodeContext(endpoint: string): DecodeContext {
    return {
      endpoint,
      redact: this.redactor.redact,
      reportRejected: ({ rejected, firstRejected }) => {
        this.metrics.invalidRecords.inc({ endpoint }, rejected);
        // One line per response, and repeats of the same problem summarised.
        this.rejectedWarnings.warn(
          `${endpoint} ${firstRejected?.field.replace(/\[\d+\]/g, "[]") ?? ""}`,
          { endpoint, rejected, field: firstRejected?.field, problem: firstRejected?.problem },
          "skipped API records that do not fit the expected schema",
        );
      },
    };
  }

  /** The typed error for a failed exchange. */
  private failure(endpoint: string, result: Extract<ExchangeResult, { ok: false }>): SitehostApiError {
    const last = result.last;
    switch (result.reason) {
      case "aborted":
        return new ApiAbortedError(endpoint, this.closed, {
          cause: last.kind === "aborted" ? last.reason : undefined,
        });
      case "timeout":
        return new ApiTimeoutError(endpoint, this.opts.timeoutMs);
      case "too_large":
        return new ApiResponseTooLargeError(endpoint, this.opts.maxResponseBytes);
      case "network":
        return new ApiNetworkError(endpoint, last.kind === "network" ? last.code : last.kind);
      case "rate_limited":
        return new ApiRateLimitedError(endpoint, result.retryAfterMs ?? 0);
      case "auth":
        return new ApiAuthError(`${endpoint}: HTTP 401 again after re-authenticating`, endpoint);
      default:
        return last.kind === "response"
          ? this.httpError(endpoint, last.status, last.body)
          : new ApiNetworkError(endpoint, last.kind);
    }
  }

  private httpError(endpoint: string, status: number, text: string): ApiHttpError {
    let apiMessage: string | undefined;
    let apiErrors: string[] = [];
    try {
      const parsed = ErrorBodySchema.safeParse(JSON.parse(text));
      if (parsed.success) {
        apiMessage =
          parsed.data.message === undefined ? undefined : this.redactor.redact(parsed.data.message);
        apiErrors = (parsed.data.errors ?? []).map(this.redactor.redact);
      }
    } catch {
      // not JSON (a proxy page): status alone
    }
    return new ApiHttpError(endpoint, status, apiMessage, apiErrors);
  }

  // ------------------------------------------------------------------ composites and shutdown

  async allSites(opts?: RequestOptions): Promise<ListResult<Site>> {
    const out: ListResult<Site> = { items: [], rejected: 0 };
    const seen = new Set<number>();
    let page = 1;
    for (;;) {
      seen.add(page);
      const result = await this.call(ENDPOINTS.sites, { page, perPage: SITES_PER_PAGE }, opts);
      out.items.push(...result.items);
      out.rejected += result.rejected;
      out.firstRejected ??= result.firstRejected;
      const next = result.page?.nextPage ?? null;
      if (next === null) return out;
      if (seen.has(next) || (result.page && next > result.page.lastPage) || seen.size > 10_000) {
        throw new ApiSchemaError(
          "/sites",
          "page.nextPage",
          `pagination does not advance (page ${page} → ${next})`,
        );
      }
      page = next;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.budget.close(new ApiAbortedError("(any)", true));
    const token = this.tokens.current();
    if (token) {
      const result = await this.send(
        "revoke",
        joinUrl(this.opts.authUrl, ROUTES.revoke.template),
        {},
        { token, client_id: this.opts.clientId, client_secret: this.clientSecret },
        AbortSignal.timeout(5000),
      );
      if (result.kind !== "response" || result.status >= 300) {
        this.logger.warn(
          { status: result.kind === "response" ? result.status : result.kind },
          "token revocation failed",
        );
      }
    }
    await this.transport.close();
  }
}

export interface ApiClient extends SitehostApi {
  readonly budget: RequestBudget;
}

/** The API client: one method per endpoint of the endpoint table, plus allSites and close. */
export function createApiClient(opts: ApiClientOptions): ApiClient {
  const core = new ApiCore(opts);
  const methods = Object.fromEntries(
    (Object.keys(ENDPOINTS) as EndpointName[]).map((name) => [
      name,
      (input: unknown, o?: RequestOptions) =>
        core.call(ENDPOINTS[name] as Endpoint<unknown, unknown>, input ?? {}, o),
    ]),
  ) as unknown as EndpointMethods;
  return {
    ...methods,
    budget: core.budget,
    allSites: (o) => core.allSites(o),
    close: () => core.close(),
  };
}
