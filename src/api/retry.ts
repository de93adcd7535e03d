/**
 * The one retry policy of the API client, for token requests and API calls alike.
 *
 * What is retryable (`classify`): network errors, timeouts and 5xx answers, for requests that may be
 * repeated (reads; never a page of an open log scroll); a 429 always, after its Retry-After (capped) with
 * every request held meanwhile; a 401 on an API call once, with a new token. Everything else fails at
 * once: other 4xx, a body over the size limit, the caller's abort.
 */
import { parseRetryAfter } from "../util/retryAfter.js";
import { backoffMs, type BackoffOptions, type Clock } from "../util/time.js";
import type { TransportResult } from "./transport.js";

export const RETRY_REASONS = ["network", "timeout", "server_error", "rate_limited", "auth"] as const;
export type RetryReason = (typeof RETRY_REASONS)[number];
export type FailureReason =
  "network" | "timeout" | "server_error" | "too_large" | "rate_limited" | "auth" | "http" | "aborted";

export type ResponseResult = Extract<TransportResult, { kind: "response" }>;

type Verdict =
  | { action: "accept" }
  | { action: "retry"; reason: "network" | "timeout" | "server_error" }
  | { action: "rate_limited" }
  | { action: "reauth" }
  | { action: "fail"; reason: FailureReason };

export function classify(result: TransportResult, failFast = false): Verdict {
  switch (result.kind) {
    case "network":
      return failFast && result.permanent
        ? { action: "fail", reason: "network" }
        : { action: "retry", reason: "network" };
    case "timeout":
      return { action: "retry", reason: "timeout" };
    case "too_large":
      return { action: "fail", reason: "too_large" };
    case "aborted":
      return { action: "fail", reason: "aborted" };
    case "response": {
      const { status } = result;
      if (status >= 200 && status < 300) return { action: "accept" };
      if (status === 429) return { action: "rate_limited" };
      if (status === 401) return { action: "reauth" };
      if (status >= 500) return { action: "retry", reason: "server_error" };
      return { action: "fail", reason: "http" };
    }
  }
}

export interface RetryPolicy {
  /** Retries of network errors, timeouts and 5xx for a repeatable request. */
  maxRetries: number;
  /** 429 answers tolerated by one call before it fails. */
  maxRateLimited: number;
  /** Longest Retry-After honoured; a longer one is cut to this (and reported). */
  maxRetryAfterMs: number;
  backoff: BackoffOptions;
  clock: Clock;
  /** Aborted when the client closes: ends every wait between retries. */
  stop?: AbortSignal;
  /** Network errors no retry mends (marked `permanent`) fail at once (doctor). */
  failFast?: boolean;
}

export interface Exchange {
  /** One attempt: whatever it needs (token, a place in the budget), then the request. */
  attempt(): Promise<TransportResult>;
  /** May network errors, timeouts and 5xx be retried? */
  repeatable: boolean;
  /** Called on a 401 of an API call: forget the token; the call is retried once. Absent: 401 fails. */
  reauthenticate?: () => void;
  signal?: AbortSignal;
  onRetry?(reason: RetryReason): void;
  /** A 429: hold every request until `untilMs`; `cappedFromMs` is the longer wait the platform asked for. */
  onRateLimited?(untilMs: number, waitMs: number, cappedFromMs: number | undefined): void;
}

export type ExchangeResult =
  | { ok: true; response: ResponseResult }
  | { ok: false; reason: FailureReason; last: TransportResult; retryAfterMs?: number };

export async function exchange(policy: RetryPolicy, x: Exchange): Promise<ExchangeResult> {
  let retries = 0;
  let rateLimited = 0;
  let reauthenticated = false;
  for (;;) {
    const result = await x.attempt();
    const verdict = classify(result, policy.failFast);
    switch (verdict.action) {
      case "accept":
        return { ok: true, response: result as ResponseResult };
      case "fail":
        return { ok: false, reason: verdict.reason, last: result };
      case "reauth":
        if (!x.reauthenticate || reauthenticated) return { ok: false, reason: "auth", last: result };
        reauthenticated = true;
        x.reauthenticate();
        x.onRetry?.("auth");
        continue;
      case "rate_limited": {
        const now = policy.clock.now();
        const asked = parseRetryAfter((result as ResponseResult).headers["retry-after"], now);
        const fallback = backoffMs(rateLimited, { baseMs: 1000, capMs: policy.backoff.capMs });
        const wait = Math.min(asked ?? fallback, policy.maxRetryAfterMs);
        x.onRateLimited?.(now + wait, wait, asked !== undefined && asked > wait ? asked : undefined);
        if (rateLimited++ >= policy.maxRateLimited) {
          return { ok: false, reason: "rate_limited", last: result, retryAfterMs: wait };
        }
        x.onRetry?.("rate_limited");
        continue;
      }
      case "retry":
        if (!x.repeatable || retries >= policy.maxRetries) {
          return { ok: false, reason: verdict.reason, last: result };
        }
        x.onRetry?.(verdict.reason);
        try {
          await policy.clock.sleep(backoffMs(retries++, policy.backoff), waitSignal(x.signal, policy.stop));
        } catch (reason) {
          return { ok: false, reason: "aborted", last: { kind: "aborted", reason } };
        }
        continue;
    }
  }
}

/** What ends a wait between retries: the caller's signal, the client's closing, either or neither. */
function waitSignal(a: AbortSignal | undefined, b: AbortSignal | undefined): AbortSignal | undefined {
  return a && b ? AbortSignal.any([a, b]) : (a ?? b);
}
