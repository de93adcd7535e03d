/**
 * A webhook event as an OpenTelemetry log record: its EventName (OTLP's event_name) is the event,
 * the site it names carries the same `sitehost.site.id` / `sitehost.site.name` attributes as every
 * other record, and the payload's other fields follow flattened under `sitehost.event.*`.
 *
 * Flattening: nested objects become dotted keys (`site.id` → `sitehost.event.site.id`); arrays, and
 * objects nested deeper than MAX_DEPTH, are JSON-encoded into one string, itself at most
 * MAX_JSON_DEPTH levels deep (deeper parts become "…") and MAX_STRING characters long; null fields are
 * left out; strings are cut at MAX_STRING characters; at most MAX_FIELDS attributes are written and the
 * number left out is given as `sitehost.webhook.dropped_fields`. So a record stays small, and building
 * it cannot overflow the stack, whatever is sent (a payload nested 100,000 levels deep included).
 * What was cut is listed in `sitehost.webhook.truncated` and returned, for the truncation counter.
 */
import type { AttributeValue, Attributes } from "@opentelemetry/api";
import type { OutgoingRecord } from "../logs/otlp/encode.js";
import { errorOf, severityOf, siteIdOf, siteNameOf, type WebhookPayload } from "./payload.js";

export const ATTRIBUTE_PREFIX = "sitehost.event";
/** Levels of nested objects flattened into keys; deeper ones are JSON-encoded. */
export const MAX_DEPTH = 4;
export const MAX_FIELDS = 64;
export const MAX_STRING = 4096;
/** Levels kept inside a JSON-encoded attribute; deeper values are written as "…". */
export const MAX_JSON_DEPTH = 16;

/** What flattening cut: nesting past the limits, text past MAX_STRING, fields past MAX_FIELDS. */
export type Truncation = "depth" | "length" | "fields";
/** The event name is cut to this (a name outside the label pattern may be long). */
const MAX_EVENT_NAME = 256;

function cut(text: string, max = MAX_STRING): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Thrown inside boundedJson once the text is long enough: the rest is not written. */
const FULL = Symbol("full");

/**
 * JSON text of a parsed JSON value, at most `maxDepth` levels deep (deeper values become "…") and cut
 * after about `maxChars` characters; `cut` says which limit applied. Recursion stops at maxDepth, so
 * any nesting is safe, and writing stops at maxChars, so a huge value costs no more than that.
 */
export function boundedJson(
  value: unknown,
  maxDepth = MAX_JSON_DEPTH,
  maxChars = MAX_STRING,
): { text: string; cut: Set<Truncation> } {
  const cutBy = new Set<Truncation>();
  const parts: string[] = [];
  let length = 0;
  const put = (text: string) => {
    parts.push(text);
    length += text.length;
    if (length > maxChars) throw FULL;
  };
  const write = (node: unknown, depth: number): void => {
    if (node === null || typeof node !== "object") {
      put(JSON.stringify(node) ?? "null");
      return;
    }
    if (depth >= maxDepth) {
      cutBy.add("depth");
      put('"…"');
      return;
    }
    if (Array.isArray(node)) {
      put("[");
      node.forEach((item, i) => {
        if (i > 0) put(",");
        write(item, depth + 1);
      });
      put("]");
      return;
    }
    put("{");
    let first = true;
    for (const [key, item] of Object.entries(node)) {
      if (item === undefined) continue;
      put(`${first ? "" : ","}${JSON.stringify(key)}:`);
      first = false;
      write(item, depth + 1);
    }
    put("}");
  };
  try {
    write(value, 0);
    return { text: parts.join(""), cut: cutBy };
  } catch (err) {
    if (err !== FULL) throw err;
    cutBy.add("length");
    return { text: cut(parts.join(""), maxChars), cut: cutBy };
  }
}

export interface FlatPayload {
  attributes: Attributes;
  /** Fields left out past MAX_FIELDS. */
  dropped: number;
  /** What was cut (empty when nothing was). */
  truncated: Set<Truncation>;
}

/** The payload's fields (all but `event`) as attributes, bounded as the module comment says. */
export function flattenPayload(payload: WebhookPayload): FlatPayload {
  const attributes: Attributes = {};
  const truncated = new Set<Truncation>();
  let written = 0;
  let dropped = 0;
  const leaf = (value: unknown): AttributeValue | undefined => {
    if (typeof value === "boolean") return value;
    if (typeof value === "number") return Number.isFinite(value) ? value : undefined;
    if (typeof value === "string") {
      if (value.length > MAX_STRING) truncated.add("length");
      return cut(value);
    }
    const json = boundedJson(value);
    for (const reason of json.cut) truncated.add(reason);
    return json.text;
  };
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
        truncated.add("fields");
        continue;
      }
      const v = leaf(value);
      if (v === undefined) continue;
      attributes[name] = v;
      written += 1;
    }
  };
  walk(payload, ATTRIBUTE_PREFIX, 0);
  return { attributes, dropped, truncated };
}

export interface RecordContext {
  receivedMs: number;
  /** Unique per accepted delivery; kept across a replay from the queue. */
  uid: string;
  /** The inventory's name of a site, when the exporter watches it. */
  siteName(id: number): string | undefined;
}

/** The log record of an event, and what of its payload was cut to build it. */
export function buildRecord(
  payload: WebhookPayload,
  ctx: RecordContext,
): { record: OutgoingRecord; truncated: ReadonlySet<Truncation> } {
  const event = cut(payload.event, MAX_EVENT_NAME);
  const siteId = siteIdOf(payload);
  const siteName = siteId === undefined ? undefined : (siteNameOf(payload) ?? ctx.siteName(siteId));
  // The event is the record's EventName: no `event.name` attribute (deprecated for the field).
  const attributes: Attributes = {};
  if (siteId !== undefined) attributes["sitehost.site.id"] = String(siteId);
  if (siteName !== undefined) attributes["sitehost.site.name"] = siteName;
  attributes["sitehost.log.stream"] = "webhook";
  attributes["log.record.uid"] = ctx.uid;
  const flat = flattenPayload(payload);
  Object.assign(attributes, flat.attributes);
  if (flat.dropped > 0) attributes["sitehost.webhook.dropped_fields"] = flat.dropped;
  if (flat.truncated.size > 0)
    attributes["sitehost.webhook.truncated"] = [...flat.truncated].sort().join(",");
  const severity = severityOf(payload.event);
  const error = errorOf(payload);
  // "site_restore_failed: site shop (id 4): <error>": readable where only the body is shown.
  const parts = [event];
  if (siteId !== undefined) parts.push(siteName ? `site ${siteName} (id ${siteId})` : `site id ${siteId}`);
  if (error) parts.push(error);
  const record: OutgoingRecord = {
    timeMs: ctx.receivedMs,
    observedMs: ctx.receivedMs,
    severityNumber: severity.number,
    severityText: severity.text,
    body: cut(parts.join(": ")),
    attributes,
    eventName: event,
  };
  return { record, truncated: flat.truncated };
}
