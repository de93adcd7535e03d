/**
 * The API client's self-metrics: requests, durations, retries and failures by route template, and
 * the platform's clock against the exporter's.
 */
import type { Registry } from "prom-client";
import { counter, gauge, histogram } from "../metrics/selfMetric.js";
import { SAMPLES } from "./clockSkew.js";

export function apiSelfMetrics(
  registry: Registry,
  pausedUntilMs: () => number,
  /** The platform's clock minus the exporter's, ms (0 until measured). */
  clockOffsetMs: () => number = () => 0,
) {
  return {
    requests: counter(registry, {
      name: "sitehost_exporter_api_requests_total",
      help: "Requests sent to the platform API, by route template and HTTP status (or network_error, timeout, too_large).",
      labelNames: ["endpoint", "code"],
    }),
    duration: histogram(registry, {
      name: "sitehost_exporter_api_request_duration_seconds",
      help: "Duration of platform API requests in seconds, by route template.",
      labelNames: ["endpoint"],
      buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    }),
    retries: counter(registry, {
      name: "sitehost_exporter_api_retries_total",
      help: "Platform API requests retried, by route template and reason (network, timeout, server_error, rate_limited, auth).",
      labelNames: ["endpoint", "reason"],
    }),
    failures: counter(registry, {
      name: "sitehost_exporter_api_request_failures_total",
      help: "Platform API calls that failed after their retries, by route template and reason (auth, rate_limited, http, network, timeout, too_large, schema).",
      labelNames: ["endpoint", "reason"],
    }),
    tokenRequests: counter(registry, {
      name: "sitehost_exporter_auth_token_requests_total",
      help: "Client-credentials token requests, by result (success; failure: refused credentials, an unusable answer, or no answer).",
      labelNames: ["result"],
    }),
    invalidRecords: counter(registry, {
      name: "sitehost_exporter_api_invalid_records_total",
      help: "API records that did not fit the expected schema and were skipped, by route template and the field that made them unusable.",
      labelNames: ["endpoint", "field"],
    }),
    fieldDrift: counter(registry, {
      name: "sitehost_exporter_api_field_drift_total",
      help: "API records kept without a field the exporter reads (missing, or unreadable and left out), by route template and field: the platform's format drifting.",
      labelNames: ["endpoint", "field"],
    }),
    retryAfterCapped: counter(registry, {
      name: "sitehost_exporter_api_retry_after_capped_total",
      help: "429 answers whose Retry-After was longer than api.maxRetryAfter and was cut to it, by route template.",
      labelNames: ["endpoint"],
    }),
    deprecatedAnswers: counter(registry, {
      name: "sitehost_exporter_api_deprecated_responses_total",
      help: "Platform API answers carrying a Deprecation or Sunset header, by route template: the platform says the endpoint is going away (the status page and doctor say when).",
      labelNames: ["endpoint"],
    }),
    sunset: gauge(registry, {
      name: "sitehost_exporter_api_endpoint_sunset_timestamp_seconds",
      help: "When the platform says a route template stops answering (its Sunset header), Unix seconds; only route templates whose answers gave one.",
      labelNames: ["endpoint"],
    }),
    inFlight: gauge(registry, {
      name: "sitehost_exporter_api_in_flight_requests",
      help: "Platform API requests currently in flight (capped by api.maxConcurrency).",
    }),
    pausedUntil: gauge(registry, {
      name: "sitehost_exporter_api_paused_until_timestamp_seconds",
      help: "While a 429's Retry-After holds every API request: when the pause ends, Unix seconds; 0 when not paused.",
      collect() {
        const until = pausedUntilMs();
        this.set(until > Date.now() ? until / 1000 : 0);
      },
    }),
    clockSkew: gauge(registry, {
      name: "sitehost_exporter_clock_skew_seconds",
      help: `The platform's clock minus the exporter's, seconds, from the Date header of the API's answers (the median of the last ${SAMPLES}, each corrected by half its round trip); 0 until the first. The log tailers use the platform's time.`,
      collect() {
        this.set(clockOffsetMs() / 1000);
      },
    }),
  };
}

export type ApiSelfMetrics = ReturnType<typeof apiSelfMetrics>;
