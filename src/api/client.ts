/**
 * The only code that speaks HTTP to the platform. It puts together the transport (one exchange, a
 * tagged result), the token, the shared request budget, the retry policy and the endpoint table's
 * decoders, and records the per-route metrics. Token requests and API calls go through the same
 * retry policy and the same budget.
 */
import type { Logger } from "pino";
import { ThrottledWarnings } from "../util/throttledLog.js";
import { systemClock } from "../util/time.js";
import { AUTH_SOURCE, RequestBudget } from "./budget.js";
import { ClockSkew, type ClockOffset } from "./clockSkew.js";
import { DeprecationNotices, type DeprecationNotice } from "./deprecation.js";
import { parseJsonBody, type DecodeContext } from "./decode.js";
import { recordReporter } from "./recordReports.js";
import { ENDPOINTS, SITES_PER_PAGE, type Endpoint, type EndpointName, type InputOf } from "./endpoints.js";
import { jsonOrUndefined, tokenFacts, type ProbeAnswer, type TokenReport } from "./probe.js";
import { ApiAbortedError, ApiAuthError, ApiSchemaError, SitehostApiError } from "./errors.js";
import type { ApiClientOptions } from "./options.js";
import { allPages } from "./pages.js";
import { displayUrl, SecretRedactor } from "./redact.js";
import type { ExchangeResult } from "./retry.js";
import { ROUTES, routePath, type RouteName } from "../routes.js";
import { ClientSecret } from "./secret.js";
import { apiSelfMetrics, type ApiSelfMetrics } from "./selfMetrics.js";
import { TokenManager, type TokenAnswer } from "./token.js";
import { Wire, type FailedExchange } from "./wire.js";
import type { EndpointMethods, RequestOptions, SitehostApi } from "./types.js";

function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, "") + path;
}

/** One API request, ready to send with a token. */
interface AuthorizedRequest {
  route: RouteName;
  url: string;
  /** `GET https://…/v1/sites/1` (no credentials): what errors name. */
  where: string;
  body: unknown;
  repeatable: boolean;
  /** A success's body is wanted as bytes (see Decoder.fromBytes). */
  bytes?: boolean;
}

class ApiCore {
  readonly budget: RequestBudget;
  /** The platform's clock against this one, from every answer's Date header. */
  readonly skew = new ClockSkew();
  /** Endpoints the platform said are going away (Deprecation, Sunset headers). */
  readonly notices: DeprecationNotices;
  private readonly wire: Wire;
  private readonly tokens: TokenManager;
  private readonly metrics: ApiSelfMetrics;
  private readonly logger: Logger;
  private readonly redactor = new SecretRedactor();
  private readonly secret: ClientSecret;
  private readonly reportRecords: (endpoint: string) => DecodeContext["reportRejected"];
  /** What the last token answer said (doctor). */
  private lastToken: TokenReport | undefined;
  /** Aborted by close(): ends waits between retries at once. */
  private readonly closing = new AbortController();

  constructor(private readonly opts: ApiClientOptions) {
    const clock = opts.clock ?? systemClock;
    this.logger = opts.logger.child({ component: "api" });
    this.budget = new RequestBudget(opts.maxConcurrency, opts.maxRequestsPerSecond, clock);
    this.metrics = apiSelfMetrics(
      opts.registry,
      () => this.budget.pausedUntil,
      () => this.skew.offsetMs(),
    );
    this.notices = new DeprecationNotices((n) => {
      this.metrics.deprecatedAnswers.inc({ endpoint: n.endpoint });
      if (n.sunsetAtMs !== undefined) this.metrics.sunset.set({ endpoint: n.endpoint }, n.sunsetAtMs / 1000);
    });
    this.wire = new Wire(
      opts,
      this.budget,
      this.metrics,
      this.logger,
      this.redactor.redact,
      clock,
      this.closing.signal,
      this.skew,
      this.notices,
    );
    this.secret = new ClientSecret(opts.clientSecret, opts.clientSecretFile, this.redactor, this.logger);
    this.tokens = new TokenManager(
      () => this.requestToken(),
      opts.tokenRefreshMarginMs,
      {
        where: `POST ${this.tokenUrl}`,
        onResult: (result) => this.metrics.tokenRequests.inc({ result }),
        onShortLived: (lifetimeS, refreshEveryS) =>
          this.logger.warn(
            { expiresInSeconds: lifetimeS, refreshEverySeconds: refreshEveryS, tokenUrl: this.tokenUrl },
            "the token endpoint issues short-lived tokens (expires_in shorter than twice api.tokenRefreshMargin); using them and requesting a new one at half its lifetime. If tokens are meant to last an hour, ask the platform about the API application's token lifetime",
          ),
      },
      clock,
    );
    this.reportRecords = recordReporter(this.metrics, new ThrottledWarnings(this.logger, 60_000, clock));
  }

  /** The token endpoint's URL, as messages show it. */
  private get tokenUrl(): string {
    return displayUrl(joinUrl(this.opts.authUrl, ROUTES.token.template));
  }

  private get closed(): boolean {
    return this.closing.signal.aborted;
  }

  /** One client-credentials token request, for the token manager (which judges the answer). */
  private async requestToken(): Promise<TokenAnswer> {
    const endpoint = ROUTES.token.template;
    const secret = await this.secret.current();
    const body = { grant_type: "client_credentials", client_id: this.opts.clientId, client_secret: secret };
    const started = performance.now();
    const result = await this.wire.exchange("token", {
      attempt: async () => {
        const release = await this.budget.acquire(AUTH_SOURCE, this.closing.signal);
        try {
          return await this.wire.send("token", joinUrl(this.opts.authUrl, endpoint), {}, body, undefined);
        } finally {
          release();
        }
      },
      repeatable: true,
    });
    if (result.ok) {
      const token = tokenValue(result.response.body);
      if (token) this.redactor.addToken(token);
      const date = result.response.headers.date;
      this.lastToken = {
        where: `POST ${this.tokenUrl}`,
        latencyMs: performance.now() - started,
        ...tokenFacts(result.response.body),
        serverDate: typeof date === "string" ? date : undefined,
      };
      return { status: result.response.status, body: result.response.body };
    }
    // An answer about the credentials (4xx) is the token manager's to judge; no answer is an error here.
    const last = result.last;
    if (last.kind === "response" && last.status >= 400 && last.status < 500 && last.status !== 429) {
      return { status: last.status, body: last.body };
    }
    this.metrics.failures.inc({ endpoint, reason: result.reason });
    throw this.wire.failure("token", `POST ${this.tokenUrl}`, result);
  }

  async call<I, O>(e: Endpoint<I, O>, input: I, opts: RequestOptions = {}): Promise<O> {
    const endpoint = ROUTES[e.route].template;
    let where: string | undefined;
    try {
      if (this.closed) throw new ApiAbortedError(endpoint, true);
      const req = this.requestOf(e, input, e.repeatable?.(input) ?? true);
      where = req.where;
      // A log page of a quiet stream is read from its bytes (a backlog's is parsed whole).
      const { fromBytes } = e.decode;
      req.bytes = fromBytes !== undefined && !opts.recordsMostlyNew;
      let result: ExchangeResult | undefined = await this.authorizedExchange(req, opts);
      if (!result.ok) {
        const error = this.wire.failure(e.route, where, result);
        // A new token refused too: the status page says so (not "no token requested yet").
        if (result.reason === "auth") this.tokens.refusedByApi(error.message);
        throw error;
      }
      this.tokens.acceptedByApi();
      const ctx = this.decodeContext(endpoint);
      const { bytes } = result.response;
      if (bytes) {
        result = undefined;
        if (fromBytes) return await fromBytes(bytes, ctx);
        bytes.release();
        throw new Error(`${endpoint}: an answer came as bytes for a decoder that reads text`);
      }
      const body = parseJsonBody(result.response.body, endpoint);
      // The text is garbage once parsed. It is not held while the body is decoded: decoding awaits,
      // and a suspended function keeps its registers, so a young-generation collection meanwhile
      // would move the text to the old generation.
      result = undefined;
      return await e.decode(body, ctx);
    } catch (err) {
      const reason = err instanceof SitehostApiError ? err.reason : "other";
      if (reason !== "aborted" && reason !== "closed") this.metrics.failures.inc({ endpoint, reason });
      // The decoders know the endpoint only: the error names the request.
      if (err instanceof ApiSchemaError && where !== undefined) throw err.at(where);
      throw err;
    }
  }

  /** The URL, the words that name it in errors, and the body of an endpoint's request. */
  private requestOf<I, O>(e: Endpoint<I, O>, input: I, repeatable: boolean): AuthorizedRequest {
    const parts = e.request(input);
    const url = new URL(joinUrl(this.opts.apiUrl, routePath(e.route, parts.params as never)));
    for (const [k, v] of Object.entries(parts.query ?? {})) url.searchParams.set(k, v);
    const where = `${ROUTES[e.route].method} ${displayUrl(url.toString())}`;
    return { route: e.route, url: url.toString(), where, body: parts.body, repeatable };
  }

  /** An API request with a bearer token: a new token after a 401, once; never a token past its window. */
  private async authorizedExchange(req: AuthorizedRequest, opts: RequestOptions): Promise<ExchangeResult> {
    const { route, url, where, body, repeatable, bytes } = req;
    const endpoint = ROUTES[route].template;
    let token = "";
    return this.wire.exchange(route, {
      attempt: async () => {
        for (;;) {
          try {
            token = await this.tokens.get();
          } catch (err) {
            if (err instanceof SitehostApiError) throw err;
            throw new ApiAuthError(`${where}: ${(err as Error).message}`, endpoint, { cause: err });
          }
          let release;
          try {
            release = await this.budget.acquire(opts.source ?? "other", opts.signal);
          } catch (err) {
            return { kind: "aborted", reason: err } as const;
          }
          // The token may have aged while queued: never send one past its usable window.
          if (!this.tokens.isUsable(token)) {
            release();
            continue;
          }
          try {
            const auth = { authorization: `Bearer ${token}` };
            return await this.wire.send(route, url, auth, body, opts.signal, bytes);
          } finally {
            release();
          }
        }
      },
      repeatable,
      reauthenticate: () => this.tokens.invalidate(token),
      signal: opts.signal,
    });
  }

  /** One request of an endpoint, answered with whatever status came (doctor); no answer throws. */
  async probe<I, O>(e: Endpoint<I, O>, input: I, opts: RequestOptions = {}): Promise<ProbeAnswer> {
    const req = this.requestOf(e, input, true);
    const where = req.where;
    const started = performance.now();
    const result = await this.authorizedExchange(req, opts);
    const answer = result.ok ? result.response : result.last;
    if (answer.kind !== "response") throw this.wire.failure(e.route, where, result as FailedExchange);
    const { status, headers, body } = answer;
    return { where, status, latencyMs: performance.now() - started, headers, json: jsonOrUndefined(body) };
  }

  /** Whether the platform gives this client tokens (the status page). */
  authStatus(): { ok: boolean; lastError?: string; at?: number } {
    return this.tokens.status();
  }

  /** A token (the manager's), and what its answer said; a refusal throws its ApiAuthError. */
  async tokenReport(): Promise<TokenReport> {
    await this.tokens.get();
    return (
      this.lastToken ?? {
        where: `POST ${this.tokenUrl}`,
        latencyMs: 0,
        expiresInSeconds: undefined,
        scopes: undefined,
        serverDate: undefined,
      }
    );
  }

  private decodeContext(endpoint: string): DecodeContext {
    return { endpoint, redact: this.redactor.redact, reportRejected: this.reportRecords(endpoint) };
  }

  allSites(opts?: RequestOptions) {
    return allPages(ROUTES.sites.template, (page) =>
      this.call(ENDPOINTS.sites, { page, perPage: SITES_PER_PAGE }, opts),
    );
  }

  /** Stop every call, revoke the token (best effort, bounded) and close the connections. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closing.abort(new ApiAbortedError("(any)", true));
    this.budget.close(new ApiAbortedError("(any)", true));
    const token = this.tokens.current();
    if (token && this.opts.revokeOnClose !== false) {
      const body = { token, client_id: this.opts.clientId, client_secret: this.secret.last };
      const url = joinUrl(this.opts.authUrl, ROUTES.revoke.template);
      const result = await this.wire.send("revoke", url, {}, body, AbortSignal.timeout(5000));
      if (result.kind !== "response" || result.status >= 300) {
        this.logger.warn(
          { status: result.kind === "response" ? result.status : result.kind },
          "token revocation failed",
        );
      }
    }
    await this.wire.close();
  }
}

function tokenValue(body: string): string | undefined {
  try {
    const token = (JSON.parse(body) as { access_token?: unknown } | null)?.access_token;
    return typeof token === "string" ? token : undefined;
  } catch {
    return undefined;
  }
}

export interface ApiClient extends SitehostApi {
  readonly budget: RequestBudget;
  /** One request of an endpoint with its raw answer (doctor). */
  probe<N extends EndpointName>(name: N, input: InputOf<N>, opts?: RequestOptions): Promise<ProbeAnswer>;
  /** A token, and what the token endpoint said (doctor). */
  tokenReport(): Promise<TokenReport>;
  /** Whether the last token request worked, and if not why and when. */
  authStatus(): { ok: boolean; lastError?: string; at?: number };
  /** The platform's clock against this one (see clockSkew.ts); undefined before the first answer with a Date. */
  clockOffset(): ClockOffset | undefined;
  /** Endpoints whose answers said they are deprecated or sunset (see deprecation.ts). */
  deprecations(): DeprecationNotice[];
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
    probe: (name, input, o) => core.probe(ENDPOINTS[name] as Endpoint<unknown, unknown>, input, o),
    tokenReport: () => core.tokenReport(),
    authStatus: () => core.authStatus(),
    clockOffset: () => core.skew.offset,
    deprecations: () => core.notices.list(),
    close: () => core.close(),
  };
}
