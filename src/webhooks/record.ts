/**
 * A webhook event as an OpenTelemetry log record: `event.name` (and OTLP's event_name) is the event,
 * the site it names carries the same `sitehost.site.id` / `sitehost.site.name` attributes as every
 * other record, and the payload's other fields follow flattened under `sitehost.event.*`.
 *
 * Flattening: nested objects become dotted keys (`site.id` → `sitehost.event.site.id`); arrays, and
 * objects nested deeper than MAX_DEPTH, are JSON-encoded into one string; null fields are left out;
 * strings are cut at MAX_STRING characters; at most MAX_FIELDS attributes are written and the number
 * left out is given as `sitehost.webhook.dropped_fields`. So a record stays small whatever is sent.
 */
import type { AttributeValue, Attributes } from "@opentelemetry/api";
import type { OutgoingRecord } from "../logs/otlp/encode.js";
import { errorOf, severityOf, siteIdOf, siteNameOf, type WebhookPayload } from "./payload.js";

export const ATTRIBUTE_PREFIX = "sitehost.event";
/** Levels of nested objects flattened into keys; deeper ones are JSON-encoded. */
export const MAX_DEPTH = 4;
export const MAX_FIELDS = 64;
export const MAX_STRING = 4096;
/** `event.name` is cut to this (a name outside the label pattern may be long). */
const MAX_EVENT_NAME = 256;

function cut(text: string, max = MAX_STRING): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function leaf(value: unknown): AttributeValue | undefined {
  if (typeof value === "string") return cut(value);
  if (typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined;
  return cut(JSON.stringify(value));
}

/** The payload's fields (all but `event`) as attributes, bounded as the module comment says. */
export function flattenPayload(payload: WebhookPayload): { attributes: Attributes; dropped: number } {
  const attributes: Attributes = {};
  let written = 0;
  let dropped = 0;
  const walk = (node: Record<string, unknown>, prefix: string, depth: number) => {
    for (const [key, value] of Object.entries(node)) {
      if (depth === 0 && key === "event") continue;
      if (value === null || value === undefined) continue;
      const name = `${prefix}.${key}`;
      if (typeof value === "object" && !Array.isArray(value) && depth + 1 < MAX_DEPTH) {
        walk(value as Record<string, unknown>, name, depth + 1);
        continue;
      }
      if (written >= MAX_FIELDS) {
        dropped += 1;
        continue;
      }
      const v = leaf(value);
      if (v === undefined) continue;
      attributes[name] = v;
      written += 1;
    }
  };
  walk(payload, ATTRIBUTE_PREFIX, 0);
  return { attributes, dropped };
}

export interface RecordContext {
  receivedMs: number;
  /** Unique per accepted delivery; kept across a replay from the queue. */
  uid: string;
  /** The inventory's name of a site, when the exporter watches it. */
  siteName(id: number): string | undefined;
}

export function buildRecord(payload: WebhookPayload, ctx: RecordContext): OutgoingRecord {
  const event = cut(payload.event, MAX_EVENT_NAME);
  const siteId = siteIdOf(payload);
  const siteName = siteId === undefined ? undefined : (siteNameOf(payload) ?? ctx.siteName(siteId));
  const attributes: Attributes = { "event.name": event };
  if (siteId !== undefined) attributes["sitehost.site.id"] = String(siteId);
  if (siteName !== undefined) attributes["sitehost.site.name"] = siteName;
  attributes["sitehost.log.stream"] = "webhook";
  attributes["log.record.uid"] = ctx.uid;
  const flat = flattenPayload(payload);
  Object.assign(attributes, flat.attributes);
  if (flat.dropped > 0) attributes["sitehost.webhook.dropped_fields"] = flat.dropped;
  const severity = severityOf(payload.event);
  const error = errorOf(payload);
  // "site_restore_failed: site shop (id 4): <error>": readable where only the body is shown.
  const parts = [event];
  if (siteId !== undefined) parts.push(siteName ? `site ${siteName} (id ${siteId})` : `site id ${siteId}`);
  if (error) parts.push(error);
  return {
    timeMs: ctx.receivedMs,
    observedMs: ctx.receivedMs,
    severityNumber: severity.number,
    severityText: severity.text,
    body: cut(parts.join(": ")),
    attributes,
    eventName: event,
  };
}
