/**
 * What a webhook delivery is: a JSON object with an `event` string, the rest as the platform sends it
 * (the documented list of events and their fields is incomplete, so nothing else is required), and
 * what the exporter reads from it: the site it is about and how severe it is.
 */
import { SeverityNumber } from "@opentelemetry/api";
import { z } from "zod";

/** `event` required; every other field kept as sent. */
export const WebhookPayloadSchema = z.looseObject({ event: z.string().min(1) });
export type WebhookPayload = z.infer<typeof WebhookPayloadSchema>;

/** The events the platform documents; each starts at 0 in sitehost_events_total so increase() sees the first. */
export const KNOWN_EVENTS = [
  "site_created",
  "site_deleted",
  "site_converted",
  "site_enabled",
  "site_disabled",
  "site_hacked",
  "site_restored",
  "site_restore_failed",
  "sync_success",
  "sync_failed",
  "ssh_command",
  "maintenance_mode",
  "basic_authentication",
  "plugin_installed",
  "plugin_install_failed",
  "git_deploy_completed",
  "git_deploy_failed",
] as const;

/** Events that change what the inventory shows of a site: that site is read again at once. */
export const SITE_EVENTS: ReadonlySet<string> = new Set([
  "site_created",
  "site_deleted",
  "site_enabled",
  "site_disabled",
  "site_hacked",
  "site_converted",
]);

/** Event names that may become a label value as they are. */
export const EVENT_NAME_PATTERN = /^[a-z][a-z0-9_.]{0,63}$/;

function asId(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isSafeInteger(value) && value > 0) return value;
  if (typeof value === "string" && /^[1-9]\d{0,15}$/.test(value)) return Number(value);
  return undefined;
}

/** A payload's object `value`'s field `key`, or undefined when `value` is no object. */
export function field(value: unknown, key: string): unknown {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

/**
 * The site an event is about: `site.id`, else `site_id`, else (data transfers) `to_site_id`, the
 * site whose data was overwritten.
 */
export function siteIdOf(payload: WebhookPayload): number | undefined {
  return asId(field(payload.site, "id")) ?? asId(payload.site_id) ?? asId(payload.to_site_id);
}

/** A site name the payload itself gives (the documented payloads give none). */
export function siteNameOf(payload: WebhookPayload): string | undefined {
  const name = field(payload.site, "name");
  return typeof name === "string" && name !== "" ? name : undefined;
}

/** The error message of a failure event, wherever the payload puts it. */
export function errorOf(payload: WebhookPayload): string | undefined {
  const candidates = [
    field(payload.restore, "error"),
    field(payload.restore_sync_request, "error"),
    field(payload.error, "message"),
    payload.error,
  ];
  for (const c of candidates) if (typeof c === "string" && c !== "") return c;
  return undefined;
}

/** ERROR for a hacked site and for every `*_failed` event, INFO for the rest. */
export function severityOf(event: string): { number: SeverityNumber; text: string } {
  return event === "site_hacked" || event.endsWith("_failed")
    ? { number: SeverityNumber.ERROR, text: "ERROR" }
    : { number: SeverityNumber.INFO, text: "INFO" };
}
