/**
 * The webhook receiver's metrics: `sitehost_events_total{event}` (a family of the metric store, so
 * `metrics.exclude` applies to it) and its self-metrics. Event names come from outside, so the label
 * is guarded: a name outside EVENT_NAME_PATTERN, or any new name once MAX_EVENT_LABELS names are in
 * use, is counted as `other`.
 */
import type { Registry } from "prom-client";
import { counter, gauge } from "../metrics/selfMetric.js";
import type { MetricStore } from "../metrics/store.js";
import { EVENT_NAME_PATTERN, KNOWN_EVENTS } from "./payload.js";
import type { Truncation } from "./record.js";

const TRUNCATIONS: readonly Truncation[] = ["depth", "length", "fields"];

export const EVENTS_FAMILY = "sitehost_events_total";
export const MAX_EVENT_LABELS = 64;
export const OTHER_EVENT = "other";

export class EventCounts {
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly store: MetricStore,
    known: readonly string[] = KNOWN_EVENTS,
  ) {
    for (const name of known) this.counts.set(name, 0);
    this.publish();
  }

  /** The label value an event name is counted under. */
  labelFor(event: string): string {
    if (!EVENT_NAME_PATTERN.test(event)) return OTHER_EVENT;
    if (this.counts.has(event) || this.counts.size < MAX_EVENT_LABELS - 1) return event;
    return OTHER_EVENT;
  }

  /** Count one accepted event; returns the label it was counted under. */
  count(event: string): string {
    const label = this.labelFor(event);
    this.counts.set(label, (this.counts.get(label) ?? 0) + 1);
    this.publish();
    return label;
  }

  value(label: string): number {
    return this.counts.get(label) ?? 0;
  }

  private publish(): void {
    this.store.replaceGlobal(
      "webhooks",
      [...this.counts].map(([event, value]) => ({ name: EVENTS_FAMILY, labels: { event }, value })),
    );
  }
}

/** Why a delivery was not accepted (the `reason` label). */
export const REJECT_REASONS = [
  "unauthorized",
  "method_not_allowed",
  "too_large",
  "unsupported_media_type",
  "bad_request",
  "unavailable",
] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

export function webhookSelfMetrics(registry: Registry) {
  const rejected = counter(registry, {
    name: "sitehost_exporter_webhook_rejected_total",
    help: "Webhook deliveries not accepted, by reason: unauthorized (wrong or missing token), method_not_allowed, too_large (over 1 MiB), unsupported_media_type (a Content-Encoding), bad_request (not JSON, or no event name), unavailable (the durable queue is full or failing, or the exporter stands by; answered 503 so the platform retries).",
    labelNames: ["reason"],
  });
  for (const reason of REJECT_REASONS) rejected.inc({ reason }, 0);
  const queued = gauge(registry, {
    name: "sitehost_exporter_webhook_queued_records",
    help: "Accepted webhook events held durably on disk until the OTLP collector acknowledges them.",
  });
  const truncated = counter(registry, {
    name: "sitehost_exporter_webhook_payload_truncated_total",
    help: "Accepted webhook events whose payload was cut to fit its log record, by what was cut: depth (nested deeper than the record keeps; the rest is kept as a JSON string), length (a text over 4096 characters), fields (more than 64 fields).",
    labelNames: ["reason"],
  });
  for (const reason of TRUNCATIONS) truncated.inc({ reason }, 0);
  return { rejected, queued, truncated };
}

export type WebhookSelfMetrics = ReturnType<typeof webhookSelfMetrics>;
