import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { durationMs } from "../config/duration.js";
import { byteSize } from "../config/size.js";
import type { Config } from "../config/schema.js";
import type { Clock } from "../util/time.js";
import { ApiAuthError } from "./errors.js";
import { ROUTES } from "../routes.js";

export interface ApiClientOptions {
  apiUrl: string;
  authUrl: string;
  clientId: string;
  clientSecret: string;
  /** When set, re-read before each token request, so a rotated secret is picked up without a restart. */
  clientSecretFile?: string;
  /** Total deadline of one request (headers and body), ms. */
  timeoutMs: number;
  /** Largest response body read, bytes. */
  maxResponseBytes: number;
  maxConcurrency: number;
  maxRequestsPerSecond: number;
  maxRetries: number;
  /** Longest Retry-After honoured, ms. */
  maxRetryAfterMs: number;
  tokenRefreshMarginMs: number;
  registry: Registry;
  logger: Logger;
  clock?: Clock;
  /** Backoff base and cap (tests shorten them). */
  backoffBaseMs?: number;
  backoffCapMs?: number;
  /** Revoke the token at close (default true); doctor, which sends reads only, leaves it to expire. */
  revokeOnClose?: boolean;
  /**
   * Network errors no retry mends (connection refused, an unknown host, an https:// URL to a plain
   * HTTP port or the reverse) fail at once instead of after maxRetries retries (doctor).
   */
  failFast?: boolean;
}

export function apiClientOptionsFromConfig(
  api: Config["api"],
  registry: Registry,
  logger: Logger,
): ApiClientOptions {
  if (!api.clientId || !api.clientSecret) {
    throw new ApiAuthError(
      "client id and client secret are required (api.clientId, api.clientSecret)",
      ROUTES.token.template,
    );
  }
  return {
    apiUrl: api.url,
    authUrl: api.authUrl,
    clientId: api.clientId,
    clientSecret: api.clientSecret,
    clientSecretFile: api.clientSecretFile,
    timeoutMs: durationMs(api.timeout),
    maxResponseBytes: byteSize(api.maxResponseSize),
    maxConcurrency: api.maxConcurrency,
    maxRequestsPerSecond: api.maxRequestsPerSecond,
    maxRetries: api.maxRetries,
    maxRetryAfterMs: durationMs(api.maxRetryAfter),
    tokenRefreshMarginMs: durationMs(api.tokenRefreshMargin),
    registry,
    logger,
  };
}
