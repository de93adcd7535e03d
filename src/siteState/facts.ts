/**
 * What an activity log entry or a webhook event says of a site's maintenance mode and of whether
 * support marked it hacked. The platform has no endpoint that reads either state, and it documents
 * neither the activity log's action names nor the wording of its messages, so an entry is read by
 * its words, and what cannot be read with certainty says nothing (never a guess that flips a state):
 *
 * - maintenance: the action's name or description names maintenance (not basic authentication,
 *   whose event reuses the `maintenance_mode` field); its direction from the name and message
 *   (enabled, activated, on / disabled, deactivated, off, removed). A toggle whose direction no word
 *   gives is `unclear` (counted, not applied). A conversion to a sandbox puts a site into maintenance.
 * - hacked: the action or event `site_hacked` (or a name or description saying hacked or
 *   compromised) sets it; the site enabled again (only support can mark it safe) clears it.
 */
import type { ActivityEntry } from "../api/logSchemas.js";
import { field, type WebhookPayload } from "../webhooks/payload.js";

export const SITE_STATES = ["maintenance", "hacked"] as const;
export type SiteStateName = (typeof SITE_STATES)[number];

/** One state of one site, as a source said it. */
export interface SiteFact {
  state: SiteStateName;
  on: boolean;
}

/** What an entry or event says: facts, or that it spoke of maintenance without saying which way. */
export interface FactReading {
  facts: SiteFact[];
  unclear: boolean;
}

const NONE: FactReading = { facts: [], unclear: false };

const MAINTENANCE = /maintenance/i;
const BASIC_AUTH = /basic[ _-]?auth/i;
const HACKED = /hack|compromis/i;
// A bare "on" or "off" only at the end ("maintenance mode on"): "disabled on example.com" names a host.
const ON_WORDS = /\b(?:enabled?|activated?|(?:turned|switched|set) on)\b|\bon[.!]?$/i;
const OFF_WORDS = /\b(?:disabled?|deactivated?|removed|(?:turned|switched|set) off)\b|\boff[.!]?$/i;
const SITE_ENABLED = /^site[_ ]enabled$/i;

/** The direction words give: true, false, or undefined when none or both do. */
function direction(text: string): boolean | undefined {
  // Word boundaries at underscores: "maintenance_mode_enabled" reads as its words.
  const words = text.replace(/[_-]+/g, " ").trim();
  const on = ON_WORDS.test(words);
  const off = OFF_WORDS.test(words);
  return on === off ? undefined : on;
}

function maintenanceReading(direction: boolean | undefined): FactReading {
  return direction === undefined
    ? { facts: [], unclear: true }
    : { facts: [{ state: "maintenance", on: direction }], unclear: false };
}

/** What a site's activity log entry says of its maintenance mode and hacked state. */
export function factsOfActivity(entry: ActivityEntry): FactReading {
  const name = entry.name;
  const description = entry.description ?? "";
  const about = `${name} ${description}`;
  if (SITE_ENABLED.test(name)) return { facts: [{ state: "hacked", on: false }], unclear: false };
  if (HACKED.test(about)) return { facts: [{ state: "hacked", on: true }], unclear: false };
  if (!MAINTENANCE.test(about) || BASIC_AUTH.test(about)) return NONE;
  // The name first ("maintenance_mode_enabled"), then the message ("Maintenance mode enabled"); a
  // description that only says "toggled" gives no direction.
  return maintenanceReading(direction(name) ?? direction(entry.message ?? ""));
}

function text(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** What a webhook event says of its site's maintenance mode and hacked state. */
export function factsOfEvent(payload: WebhookPayload): FactReading {
  switch (payload.event) {
    case "maintenance_mode":
      return maintenanceReading(direction(text(payload.maintenance_mode) ?? ""));
    case "site_hacked":
      return { facts: [{ state: "hacked", on: true }], unclear: false };
    case "site_enabled":
      return { facts: [{ state: "hacked", on: false }], unclear: false };
    case "site_converted":
      return text(field(payload.site, "site_converted_to"))?.toLowerCase() === "sandbox"
        ? { facts: [{ state: "maintenance", on: true }], unclear: false }
        : NONE;
    default:
      return NONE;
  }
}
