import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import { getOrCreate } from "../metrics/registry.js";

export interface ApiSelfMetrics {
  requests: Counter<"endpoint" | "code">;
  duration: Histogram<"endpoint">;
  retries: Counter<"endpoint" | "reason">;
  failures: Counter<"endpoint" | "reason">;
  tokenRequests: Counter<"result">;
  invalidRecords: Counter<"endpoint">;
  retryAfterCapped: Counter<"endpoint">;
  inFlight: Gauge;
  pausedUntil: Gauge;
}

export function apiSelfMetrics(registry: Registry, pausedUntilMs: () => number): ApiSelfMetrics {
  const registers = [registry];
  return {
    requests: getOrCreate(
      registry,
      "sitehost_exporter_api_requests_total",
      () =>
        new Counter({
          name: "sitehost_exporter_api_requests_total",
          help: "Requests sent to the platform API, by route template and HTTP status (or network_error, timeout, too_large).",
          labelNames: ["endpoint", "code"] as const,
          registers,
        }),
    ),
    duration: getOrCreate(
      registry,
      "sitehost_exporter_api_request_duration_seconds",
      () =>
        new Histogram({
          name: "sitehost_exporter_api_request_duration_seconds",
          help: "Duration of platform API requests in seconds, by route template.",
          labelNames: ["endpoint"] as const,
          buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
          registers,
        }),
    ),
    retries: getOrCreate(
      registry,
      "sitehost_exporter_api_retries_total",
      () =>
        new Counter({
          name: "sitehost_exporter_api_retries_total",
          help: "Platform API requests retried, by route template and reason (network, timeout, server_error, rate_limited, auth).",
          labelNames: ["endpoint", "reason"] as const,
          registers,
        }),
    ),
    failures: getOrCreate(
      registry,
      "sitehost_exporter_api_request_failures_total",
      () =>
        new Counter({
          name: "sitehost_exporter_api_request_failures_total",
          help: "Platform API calls that failed after their retries, by route template and reason (auth, rate_limited, http, network, timeout, too_large, schema).",
          labelNames: ["endpoint", "reason"] as const,
          registers,
        }),
    ),
    tokenRequests: getOrCreate(
      registry,
      "sitehost_exporter_auth_token_requests_total",
      () =>
        new Counter({
          name: "sitehost_exporter_auth_token_requests_total",
          help: "Client-credentials token requests, by result (success; failure: refused credentials, an unusable answer, or no answer).",
          labelNames: ["result"] as const,
          registers,
        }),
    ),
    invalidRecords: getOrCreate(
      registry,
      "sitehost_exporter_api_invalid_records_total",
      () =>
        new Counter({
          name: "sitehost_exporter_api_invalid_records_total",
          help: "API records that did not fit the expected schema and were skipped, by route template.",
          labelNames: ["endpoint"] as const,
          registers,
        }),
    ),
    retryAfterCapped: getOrCreate(
      registry,
      "sitehost_exporter_api_retry_after_capped_total",
      () =>
        new Counter({
          name: "sitehost_exporter_api_retry_after_capped_total",
          help: "429 answers whose Retry-After was longer than api.maxRetryAfter and was cut to it, by route template.",
          labelNames: ["endpoint"] as const,
          registers,
        }),
    ),
    inFlight: getOrCreate(
      registry,
      "sitehost_exporter_api_in_flight_requests",
      () =>
        new Gauge({
          name: "sitehost_exporter_api_in_flight_requests",
          help: "Platform API requests currently in flight (capped by api.maxConcurrency).",
          registers,
        }),
    ),
    pausedUntil: getOrCreate(
      registry,
      "sitehost_exporter_api_paused_until_timestamp_seconds",
      () =>
        new Gauge({
          name: "sitehost_exporter_api_paused_until_timestamp_seconds",
          help: "While a 429's Retry-After holds every API request: when the pause ends, Unix seconds; 0 when not paused.",
          registers,
          collect() {
            const until = pausedUntilMs();
            this.set(until > Date.now() ? until / 1000 : 0);
          },
        }),
    ),
  };
}
