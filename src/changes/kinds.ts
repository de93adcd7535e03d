/**
 * Which changes to a site an activity log entry or a webhook event reports. The platform documents
 * its events but neither the activity log's action names nor their wording, so an entry is read by
 * its words, failing safe: an entry that reports a failure, or only a request or a start (the
 * completion has its own entry), is no change; an entry no rule reads is no change.
 *
 * Kinds: `deploy` (a git deploy), `plugin` and `theme` (installed, updated, activated, deactivated,
 * deleted; also by `wp plugin …` / `wp theme …` commands run over SSH), `restore` (a backup restored,
 * or a data transfer into the site), `php` (its PHP version), `conversion` (staging, live, sandbox),
 * `maintenance` (turned on or off), `access` (collaborators, cms administrators, basic authentication).
 */
import type { ActivityEntry } from "../api/logSchemas.js";
import { apiTimeMs } from "../api/times.js";
import { field, siteIdOf, type WebhookPayload } from "../webhooks/payload.js";

export const CHANGE_KINDS = [
  "deploy",
  "plugin",
  "theme",
  "restore",
  "php",
  "conversion",
  "maintenance",
  "access",
] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** An outcome that changed nothing: the failure has its own alerts. */
const FAILED = /\b(?:fail(?:ed|ure|s)?|errors?|denied|rejected|aborted|cancell?ed)\b/;
/** Only asked for or begun: the entry of its completion is the change. */
const ONLY_BEGUN = /\b(?:request(?:ed)?|scheduled|queued|start(?:ed|ing)?|initiated|pending|in progress)\b/;
/** A wp-cli command that changes plugins or themes (`wp plugin list` changes nothing). */
const WP_CLI =
  /\bwp\s+(plugin|theme)\s+(?:install|update|activate|deactivate|delete|uninstall|toggle|auto-updates)\b/i;

/** Rules in order: the first whose words appear names the kind. */
const RULES: ReadonlyArray<readonly [RegExp, ChangeKind]> = [
  [/\bbasic auth(?:entication)?\b/, "access"],
  [/\bmaintenance\b/, "maintenance"],
  [/\bdeploy(?:ed|ment|s)?\b/, "deploy"],
  [/\bplugins?\b/, "plugin"],
  [/\bthemes?\b/, "theme"],
  [/\b(?:restor(?:e|ed|ing)|sync(?:ed)?|data transfer)\b/, "restore"],
  [/\bphp\b.*\bversion\b|\bversion\b.*\bphp\b/, "php"],
  [/\bconver(?:t|ted|sion)\b/, "conversion"],
  [/\b(?:collaborators?|administrators?|cms users?)\b/, "access"],
];

/** Words of a name or text, lower case, `_` and `-` read as spaces ("git_deploy_completed"). */
function words(text: string): string {
  return text.replace(/[_-]+/g, " ").toLowerCase();
}

function kindOfWords(about: string): ChangeKind | undefined {
  if (FAILED.test(about) || ONLY_BEGUN.test(about)) return undefined;
  for (const [rule, kind] of RULES) if (rule.test(about)) return kind;
  return undefined;
}

/** A wp-cli command's kind of change, if it changes plugins or themes. */
export function kindOfCommand(command: string): ChangeKind | undefined {
  const m = WP_CLI.exec(command);
  return m ? (m[1]?.toLowerCase() as "plugin" | "theme") : undefined;
}

/** The change a site's activity log entry reports, by its action name and description. */
export function changeOfActivity(entry: ActivityEntry): ChangeKind | undefined {
  const about = words(`${entry.name} ${entry.description ?? ""}`);
  // A command run over SSH: a change only when the command (in its message) is one.
  if (/\b(?:ssh|command)\b/.test(about)) return kindOfCommand(entry.message ?? "");
  return kindOfWords(about);
}

/** A reported change: its site, kind, and when it took effect where the payload says (ms). */
export interface EventChange {
  siteId: number;
  kind: ChangeKind;
  atMs?: number;
}

const EVENT_KINDS: Readonly<Record<string, ChangeKind>> = {
  site_converted: "conversion",
  site_restored: "restore",
  sync_success: "restore",
  maintenance_mode: "maintenance",
  basic_authentication: "access",
  plugin_installed: "plugin",
  git_deploy_completed: "deploy",
};

/** The change a webhook event reports; none for events that change nothing or name no site. */
export function changeOfEvent(payload: WebhookPayload): EventChange | undefined {
  const siteId = siteIdOf(payload);
  if (siteId === undefined) return undefined;
  if (payload.event === "ssh_command") {
    const command = field(payload.result, "command");
    const kind = typeof command === "string" ? kindOfCommand(command) : undefined;
    return kind ? { siteId, kind } : undefined;
  }
  const kind = EVENT_KINDS[payload.event];
  if (!kind) return undefined;
  const completed =
    kind === "restore" ? apiTimeMs(field(payload.restore, "completed_at_timestamp")) : undefined;
  return completed === undefined ? { siteId, kind } : { siteId, kind, atMs: completed };
}
