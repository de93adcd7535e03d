/**
 * The only code that speaks HTTP to the platform: auth, transport, retries,
 * 429 handling, the shared budget and response validation.
 */
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { Agent, request } from "undici";
import type { Config } from "../config/schema.js";
import { durationMs } from "../config/duration.js";
import { VERSION } from "../version.js";
import { RequestBudget } from "./budget.js";
import {
  ApiAuthError,
  ApiHttpError,
  ApiNetworkError,
  ApiRateLimitedError,
  ApiSchemaError,
  SitehostApiError,
} from "./errors.js";
import {
  AccountSchema,
  BackupEntrySchema,
  DomainSchema,
  EnvelopeSchema,
  ErrorBodySchema,
  LogPageSchema,
  MetricsResultSchema,
  PerformanceReportSchema,
  PhpLogEntrySchema,
  SecurityAlertGroupsSchema,
  SecurityAlertItemSchema,
  ServerLogEntrySchema,
  SiteSchema,
  StatisticsSchema,
  UsageReportEntrySchema,
  type Account,
  type BackupEntry,
  type Domain,
  type LogEntry,
  type LogStream,
  type MetricsResult,
  type PerformanceReport,
  type Site,
  type Statistics,
  type UsageReportEntry,
} from "./schemas.js";
import { apiSelfMetrics, type ApiSelfMetrics } from "./selfMetrics.js";
import { TokenManager } from "./token.js";
import type {
  ListResult,
  LogPageResult,
  RejectedRecord,
  RequestOptions,
  SecurityAlertGroup,
  SitehostApi,
  TrafficQuery,
} from "./types.js";
import { describeIssue, validateRecords, type Redact } from "./validate.js";
import type { z } from "zod";

export interface ApiClientOptions {
  apiUrl: string;
  authUrl: string;
  clientId: string;
  clientSecret: string;
  timeoutMs: number;
  maxConcurrency: number;
  maxRequestsPerSecond: number;
  maxRetries: number;
  tokenRefreshMarginMs: number;
  registry: Registry;
  logger: Logger;
  /** Backoff base and cap (tests shorten them). */
  backoffBaseMs?: number;
  backoffCapMs?: number;
}

export function apiClientOptionsFromConfig(
  config: Config,
  registry: Registry,
  logger: Logger,
): ApiClientOptions {
  const { api } = config;
  if (!api.clientId || !api.clientSecret) {
    throw new ApiAuthError(
      "client id and client secret are required (api.clientId, api.clientSecret)",
      "/auth/token",
    );
  }
  return {
    apiUrl: api.url,
    authUrl: api.authUrl,
    clientId: api.clientId,
    clientSecret: api.clientSecret,
    timeoutMs: durationMs(api.timeout),
    maxConcurrency: api.maxConcurrency,
    maxRequestsPerSecond: api.maxRequestsPerSecond,
    maxRetries: api.maxRetries,
    tokenRefreshMarginMs: durationMs(api.tokenRefreshMargin),
    registry,
    logger,
  };
}

interface CallSpec {
  method: "GET" | "POST";
  /** Route template for metrics and errors, e.g. `/sites/{id}/domains`. */
  endpoint: string;
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  /** Retry on network errors and 5xx (reads). */
  retry: boolean;
  signal?: AbortSignal;
}

const RATE_LIMIT_RETRIES = 20;
/** How many recent access tokens are remembered for redaction (one per refresh; an hour each). */
const REMEMBERED_TOKENS = 16;

function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, "") + path;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Retry-After: delta seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(text)) return Math.max(0, Number(text) * 1000);
  // An HTTP date names a month ("Sun, 22 Nov 2026 14:00:00 GMT"); without this check V8's lenient
  // Date.parse reads "-5" as a year and a garbage header would mean "retry at once".
  if (!/[A-Za-z]{3}/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** A secret as it may appear in echoed text: raw, and JSON-escaped (inside a JSON string). */
function secretForms(value: string): string[] {
  if (!value) return [];
  const escaped = JSON.stringify(value).slice(1, -1);
  return escaped === value ? [value] : [value, escaped];
}

export class ApiClient implements SitehostApi {
  readonly budget: RequestBudget;
  private readonly tokens: TokenManager;
  private readonly agent: Agent;
  private readonly metrics: ApiSelfMetrics;
  private readonly logger: Logger;
  private readonly backoffBaseMs: number;
  private readonly backoffCapMs: number;
  private closed = false;
  /** The client secret and the recent tokens, raw and JSON-escaped: never echoed into errors or logs. */
  private readonly secretForms: string[] = [];
  private readonly tokenForms: string[] = [];

  constructor(private readonly opts: ApiClientOptions) {
    this.logger = opts.logger.child({ component: "api" });
    this.metrics = apiSelfMetrics(opts.registry);
    this.budget = new RequestBudget(opts.maxConcurrency, opts.maxRequestsPerSecond);
    this.backoffBaseMs = opts.backoffBaseMs ?? 500;
    this.backoffCapMs = opts.backoffCapMs ?? 30_000;
    this.agent = new Agent({
      keepAliveTimeout: 30_000,
      connections: opts.maxConcurrency + 2,
      connect: { timeout: Math.min(opts.timeoutMs, 10_000) },
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
    });
    this.tokens = new TokenManager(() => this.requestToken(), opts.tokenRefreshMarginMs);
    this.secretForms.push(...secretForms(opts.clientSecret));
  }

  // ------------------------------------------------------------------ redaction

  private rememberToken(value: string): void {
    for (const form of secretForms(value)) if (!this.tokenForms.includes(form)) this.tokenForms.push(form);
    if (this.tokenForms.length > 2 * REMEMBERED_TOKENS)
      this.tokenForms.splice(0, this.tokenForms.length - 2 * REMEMBERED_TOKENS);
  }

  /**
   * Text the platform sent back (error envelopes, offending record values) may echo the Authorization
   * header or the credentials (debug proxies do); it is cleaned before it reaches an error or a log line.
   */
  private readonly redact: Redact = (text) => {
    let out = text;
    for (const secret of [...this.secretForms, ...this.tokenForms]) {
      if (out.includes(secret)) out = out.split(secret).join("<redacted>");
    }
    return out;
  };

  // ------------------------------------------------------------------ transport

  private async send(
    method: "GET" | "POST",
    url: string,
    endpoint: string,
    headers: Record<string, string>,
    body: unknown,
    signal: AbortSignal | undefined,
  ): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
    const started = performance.now();
    this.metrics.inFlight.inc();
    try {
      const res = await request(url, {
        method,
        dispatcher: this.agent,
        headers: {
          accept: "application/json",
          "user-agent": `sitehost-exporter/${VERSION}`,
          ...(body !== undefined ? { "content-type": "application/json" } : {}),
          ...headers,
        },
        body: body !== undefined ? JSON.stringify(body) : undefined,
        signal,
      });
      const text = await res.body.text();
      this.metrics.requests.inc({ endpoint, code: String(res.statusCode) });
      return { status: res.statusCode, headers: res.headers, text };
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      this.metrics.requests.inc({ endpoint, code: "network_error" });
      const code = (err as { code?: string }).code ?? (err as Error).name ?? "error";
      throw new ApiNetworkError(endpoint, code);
    } finally {
      this.metrics.inFlight.dec();
      this.metrics.duration.observe({ endpoint }, (performance.now() - started) / 1000);
    }
  }

  private async requestToken(): Promise<{ status: number; body: unknown }> {
    const endpoint = "/auth/token";
    let attempt = 0;
    let retryAfterMs = 0;
    for (;;) {
      const release = await this.budget.acquire();
      let res;
      try {
        res = await this.send(
          "POST",
          joinUrl(this.opts.authUrl, endpoint),
          endpoint,
          {},
          {
            grant_type: "client_credentials",
            client_id: this.opts.clientId,
            client_secret: this.opts.clientSecret,
          },
          undefined,
        );
      } catch (err) {
        release();
        if (err instanceof ApiNetworkError && attempt < this.opts.maxRetries) {
          this.metrics.retries.inc({ endpoint, reason: "network" });
          await sleep(this.backoff(attempt++));
          continue;
        }
        this.metrics.tokenRequests.inc({ result: "failure" });
        throw err;
      }
      release();
      if (res.status === 429) {
        retryAfterMs = this.pauseFor429(res.headers["retry-after"], attempt);
        if (attempt++ < RATE_LIMIT_RETRIES) {
          this.metrics.retries.inc({ endpoint, reason: "rate_limited" });
          continue;
        }
      } else if (res.status >= 500 && attempt < this.opts.maxRetries) {
        this.metrics.retries.inc({ endpoint, reason: "server_error" });
        await sleep(this.backoff(attempt++));
        continue;
      }
      let body: unknown;
      try {
        body = res.text ? JSON.parse(res.text) : null;
      } catch {
        body = null;
      }
      // The platform is down or throttling: not an authentication failure (the credentials may be fine).
      if (res.status === 429 || res.status >= 500) {
        this.metrics.tokenRequests.inc({ result: "failure" });
        if (res.status === 429) throw new ApiRateLimitedError(endpoint, retryAfterMs);
        throw this.httpError(endpoint, res.status, res.text);
      }
      const ok = res.status >= 200 && res.status < 300;
      const accessToken = (body as { access_token?: unknown } | null)?.access_token;
      if (ok && typeof accessToken === "string") this.rememberToken(accessToken);
      this.metrics.tokenRequests.inc({ result: ok ? "success" : "failure" });
      if (ok) this.logger.debug("obtained an access token");
      return { status: res.status, body };
    }
  }

  private backoff(attempt: number): number {
    const ceiling = Math.min(this.backoffCapMs, this.backoffBaseMs * 2 ** attempt);
    return this.backoffBaseMs / 2 + Math.random() * Math.max(0, ceiling - this.backoffBaseMs / 2);
  }

  private pauseFor429(header: string | string[] | undefined, attempt: number): number {
    const now = Date.now();
    const ms = parseRetryAfter(header, now) ?? Math.min(this.backoffCapMs, 1000 * 2 ** attempt);
    this.budget.pauseUntil(now + ms);
    this.logger.warn({ retryAfterMs: ms }, "rate limited by the platform (429); pausing every API request");
    return ms;
  }

  /** One API call with auth, budget, retries and 429 handling; returns the parsed JSON body. */
  private async call(spec: CallSpec): Promise<unknown> {
    if (this.closed) throw new SitehostApiError(`${spec.endpoint}: the API client is closed`, spec.endpoint);
    const url = new URL(joinUrl(this.opts.apiUrl, spec.path));
    for (const [k, v] of Object.entries(spec.query ?? {})) url.searchParams.set(k, v);
    let retries = 0;
    let rateLimited = 0;
    let reauthenticated = false;
    for (;;) {
      const token = await this.tokens.get();
      const release = await this.budget.acquire(spec.signal);
      // The token may have aged while queued: never send one past its usable window.
      if (!this.tokens.isUsable(token)) {
        release();
        continue;
      }
      let res;
      try {
        res = await this.send(
          spec.method,
          url.toString(),
          spec.endpoint,
          { authorization: `Bearer ${token}` },
          spec.body,
          spec.signal,
        );
      } catch (err) {
        release();
        if (err instanceof ApiNetworkError && spec.retry && retries < this.opts.maxRetries) {
          this.metrics.retries.inc({ endpoint: spec.endpoint, reason: "network" });
          this.logger.debug({ endpoint: spec.endpoint, code: err.code }, "network error; retrying");
          await sleep(this.backoff(retries++), spec.signal);
          continue;
        }
        throw err;
      }
      release();
      const { status } = res;
      if (status >= 200 && status < 300) {
        if (res.text.trim() === "") return null;
        try {
          return JSON.parse(res.text) as unknown;
        } catch {
          throw new ApiSchemaError(spec.endpoint, "", "the response body is not JSON");
        }
      }
      if (status === 401) {
        this.tokens.invalidate(token);
        if (reauthenticated) {
          throw new ApiAuthError(`${spec.endpoint}: HTTP 401 again after re-authenticating`, spec.endpoint);
        }
        reauthenticated = true;
        this.metrics.retries.inc({ endpoint: spec.endpoint, reason: "auth" });
        continue;
      }
      if (status === 429) {
        const retryAfterMs = this.pauseFor429(res.headers["retry-after"], rateLimited);
        if (rateLimited++ >= RATE_LIMIT_RETRIES) throw new ApiRateLimitedError(spec.endpoint, retryAfterMs);
        this.metrics.retries.inc({ endpoint: spec.endpoint, reason: "rate_limited" });
        continue;
      }
      if (status >= 500 && spec.retry && retries < this.opts.maxRetries) {
        this.metrics.retries.inc({ endpoint: spec.endpoint, reason: "server_error" });
        await sleep(this.backoff(retries++), spec.signal);
        continue;
      }
      throw this.httpError(spec.endpoint, status, res.text);
    }
  }

  private httpError(endpoint: string, status: number, text: string): ApiHttpError {
    let apiMessage: string | undefined;
    let apiErrors: string[] = [];
    try {
      const parsed = ErrorBodySchema.safeParse(JSON.parse(text));
      if (parsed.success) {
        apiMessage = parsed.data.message === undefined ? undefined : this.redact(parsed.data.message);
        apiErrors = (parsed.data.errors ?? []).map(this.redact);
      }
    } catch {
      // not JSON (a proxy page): status alone
    }
    return new ApiHttpError(endpoint, status, apiMessage, apiErrors);
  }

  // ------------------------------------------------------------------ envelope + validation

  private async envelope(
    spec: CallSpec,
  ): Promise<{ data: unknown; page?: z.infer<typeof EnvelopeSchema>["page"] }> {
    const body = await this.call(spec);
    const parsed = EnvelopeSchema.safeParse(body);
    if (!parsed.success) {
      const { field, problem } = describeIssue(parsed.error, body, "", this.redact);
      throw new ApiSchemaError(spec.endpoint, field, problem);
    }
    return { data: parsed.data.data, page: parsed.data.page };
  }

  private async object<T>(spec: CallSpec, schema: z.ZodType<T>): Promise<T> {
    const { data } = await this.envelope(spec);
    const parsed = schema.safeParse(data);
    if (!parsed.success) {
      const { field, problem } = describeIssue(parsed.error, data, "data", this.redact);
      this.reportRejected([{ endpoint: spec.endpoint, field, problem }]);
      throw new ApiSchemaError(spec.endpoint, field, problem);
    }
    return parsed.data;
  }

  private async list<T>(spec: CallSpec, schema: z.ZodType<T>): Promise<ListResult<T>> {
    const { data } = await this.envelope(spec);
    if (!Array.isArray(data)) throw new ApiSchemaError(spec.endpoint, "data", "expected a list");
    return this.validated(schema, data, spec.endpoint);
  }

  private validated<T>(schema: z.ZodType<T>, records: unknown[], endpoint: string): ListResult<T> {
    const result = validateRecords(schema, records, endpoint, this.redact);
    this.reportRejected(result.rejected);
    return result;
  }

  private reportRejected(rejected: RejectedRecord[]): void {
    for (const r of rejected) {
      this.metrics.invalidRecords.inc({ endpoint: r.endpoint });
      this.logger.warn(
        { endpoint: r.endpoint, field: r.field, problem: r.problem },
        "skipped an API record that does not fit the expected schema",
      );
    }
  }

  // ------------------------------------------------------------------ endpoints

  getAccount(opts?: RequestOptions): Promise<Account> {
    return this.object(
      { method: "GET", endpoint: "/account", path: "/account", retry: true, signal: opts?.signal },
      AccountSchema,
    );
  }

  async listSites(opts?: RequestOptions): Promise<ListResult<Site>> {
    const items: Site[] = [];
    const rejected: RejectedRecord[] = [];
    let page = 1;
    const seen = new Set<number>();
    for (;;) {
      seen.add(page);
      const spec: CallSpec = {
        method: "GET",
        endpoint: "/sites",
        path: "/sites",
        query: { paginate: "true", per_page: "100", page: String(page) },
        retry: true,
        signal: opts?.signal,
      };
      const { data, page: info } = await this.envelope(spec);
      if (!Array.isArray(data)) throw new ApiSchemaError("/sites", "data", "expected a list of sites");
      const result = this.validated(SiteSchema, data, "/sites");
      items.push(...result.items);
      rejected.push(...result.rejected);
      const next = info?.nextPage ?? null;
      if (next === null || next === undefined) break;
      if (seen.has(next) || (info && next > info.lastPage) || seen.size > 10_000) {
        throw new ApiSchemaError(
          "/sites",
          "page.nextPage",
          `pagination does not advance (page ${page} → ${next})`,
        );
      }
      page = next;
    }
    return { items, rejected };
  }

  getSite(siteId: number, opts?: RequestOptions): Promise<Site> {
    return this.object(
      { method: "GET", endpoint: "/sites/{id}", path: `/sites/${siteId}`, retry: true, signal: opts?.signal },
      SiteSchema,
    );
  }

  getStatistics(siteId: number, opts?: RequestOptions): Promise<Statistics> {
    return this.object(
      {
        method: "GET",
        endpoint: "/sites/{id}/statistics",
        path: `/sites/${siteId}/statistics`,
        retry: true,
        signal: opts?.signal,
      },
      StatisticsSchema,
    );
  }

  getUsageReport(siteId: number, opts?: RequestOptions): Promise<ListResult<UsageReportEntry>> {
    return this.list(
      {
        method: "GET",
        endpoint: "/sites/{id}/reports/usage",
        path: `/sites/${siteId}/reports/usage`,
        retry: true,
        signal: opts?.signal,
      },
      UsageReportEntrySchema,
    );
  }

  getLatestPerformanceReport(siteId: number, opts?: RequestOptions): Promise<PerformanceReport> {
    return this.object(
      {
        method: "GET",
        endpoint: "/sites/{id}/reports/performance/latest",
        path: `/sites/${siteId}/reports/performance/latest`,
        retry: true,
        signal: opts?.signal,
      },
      PerformanceReportSchema,
    );
  }

  getTrafficMetrics(siteId: number, query: TrafficQuery, opts?: RequestOptions): Promise<MetricsResult> {
    return this.object(
      {
        method: "POST",
        endpoint: "/sites/{id}/metrics",
        path: `/sites/${siteId}/metrics`,
        body: { start_at: query.startAt, metrics: query.metrics, dimensions: query.dimensions },
        retry: true, // a read, despite the POST
        signal: opts?.signal,
      },
      MetricsResultSchema,
    );
  }

  async getSecurityAlerts(
    siteId: number,
    kind: "plugins" | "themes",
    opts?: RequestOptions,
  ): Promise<ListResult<SecurityAlertGroup>> {
    const endpoint = `/sites/{id}/security-alerts/${kind}`;
    const groups = await this.object(
      {
        method: "GET",
        endpoint,
        path: `/sites/${siteId}/security-alerts/${kind}`,
        retry: true,
        signal: opts?.signal,
      },
      SecurityAlertGroupsSchema,
    );
    const items: SecurityAlertGroup[] = [];
    const rejected: RejectedRecord[] = [];
    // A flat list has no group names: each item's own status stands in for one.
    const grouped = Array.isArray(groups) ? { "": groups } : groups;
    for (const [group, records] of Object.entries(grouped)) {
      const result = validateRecords(SecurityAlertItemSchema, records ?? [], endpoint, this.redact);
      items.push(...result.items.map((item) => ({ group, item })));
      rejected.push(
        ...result.rejected.map((r) => ({
          ...r,
          field: group ? `data.${group}${r.field}` : `data${r.field}`,
        })),
      );
    }
    this.reportRejected(rejected);
    return { items, rejected };
  }

  getDomains(siteId: number, opts?: RequestOptions): Promise<ListResult<Domain>> {
    return this.list(
      {
        method: "GET",
        endpoint: "/sites/{id}/domains",
        path: `/sites/${siteId}/domains`,
        retry: true,
        signal: opts?.signal,
      },
      DomainSchema,
    );
  }

  getBackups(siteId: number, opts?: RequestOptions): Promise<ListResult<BackupEntry>> {
    return this.list(
      {
        method: "GET",
        endpoint: "/sites/{id}/backups",
        path: `/sites/${siteId}/backups`,
        retry: true,
        signal: opts?.signal,
      },
      BackupEntrySchema,
    );
  }

  async getLogPage(
    siteId: number,
    stream: LogStream,
    scrollId: string | null,
    opts?: RequestOptions,
  ): Promise<LogPageResult> {
    const endpoint = `/sites/{id}/logs/${stream}`;
    const body = await this.call({
      method: "GET",
      endpoint,
      path: `/sites/${siteId}/logs/${stream}`,
      query: scrollId ? { scroll_id: scrollId } : undefined,
      // A page of an open scroll is never retried with the same scroll id: the tailer restarts.
      retry: scrollId === null,
      signal: opts?.signal,
    });
    const parsed = LogPageSchema.safeParse(body);
    if (!parsed.success) {
      const { field, problem } = describeIssue(parsed.error, body, "", this.redact);
      throw new ApiSchemaError(endpoint, field, problem);
    }
    const raw = parsed.data.logs ?? [];
    const schema = (stream === "php" ? PhpLogEntrySchema : ServerLogEntrySchema) as z.ZodType<LogEntry>;
    const { items, rejected } = this.validated(schema, raw, endpoint);
    return {
      entries: items,
      rejected,
      rawCount: raw.length,
      totalResults: parsed.data.total_results ?? null,
      scrollId: parsed.data.scroll_id ?? null,
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const token = this.tokens.current();
    if (token) {
      try {
        const res = await this.send(
          "POST",
          joinUrl(this.opts.authUrl, "/auth/revoke"),
          "/auth/revoke",
          {},
          { token, client_id: this.opts.clientId, client_secret: this.opts.clientSecret },
          AbortSignal.timeout(5000),
        );
        if (res.status >= 300) this.logger.warn({ status: res.status }, "token revocation failed");
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, "token revocation failed");
      }
    }
    this.budget.close();
    await this.agent.close();
  }
}
