/**
 * Account and site activity logs: a history generated from the seed before start-up, plus the entries
 * written when something happens (control hooks, fault knobs, API calls that change state) or that a
 * test appends. One store: the account log shows every entry, a site's log those about that site.
 */
import type { SimSiteData } from "./fleet.js";
import type { AccountActivityScope, ActivityOrder } from "./options.js";
import { mulberry32, pick } from "./random.js";

export type ActivitySource = "ui" | "api.v1" | "systems";

/** An entry as the API returns it (the documented fields, nothing else). */
export interface ActivityEntry {
  id: number;
  timestamp: string;
  accountEmail: string;
  ipAddress: string | null;
  userAgent: string;
  name: string;
  description: string;
  source: ActivitySource;
  message: string;
}

export interface Stored {
  entry: ActivityEntry;
  at: number;
  /** The site the entry is about; null for account-level entries. */
  siteId: number | null;
}

/** What writing an entry takes; omitted fields get the values of `source`'s usual actor. */
export interface ActivityInput {
  name: string;
  message: string;
  siteId?: number | null;
  source?: ActivitySource;
  description?: string;
  accountEmail?: string;
  ipAddress?: string | null;
  userAgent?: string;
}

export const ACCOUNT_RETENTION_DAYS = 60;
export const SITE_RETENTION_DAYS = 30;
export const ACTIVITY_MAX_PER_PAGE = 50;
export const ACTIVITY_DEFAULT_PER_PAGE = 25;
const DAY = 86_400_000;
/** The generated history reaches this far back, past both retentions, so the cut shows. */
const HISTORY_DAYS = 75;

/** The action catalog (names and descriptions), served by GET /activity/site-actions and /account-actions. */
export const SITE_ACTIONS: ReadonlyArray<{ name: string; description: string }> = [
  { name: "site_created", description: "Site created" },
  { name: "site_deleted", description: "Site deleted" },
  { name: "site_disabled", description: "Site disabled" },
  { name: "site_enabled", description: "Site enabled" },
  { name: "site_hacked", description: "Site marked as hacked" },
  { name: "site_converted", description: "Site converted" },
  { name: "restore_requested", description: "Restore requested" },
  { name: "site_restored", description: "Site restored from a backup" },
  { name: "site_restore_failed", description: "Site restore failed" },
  { name: "sync_success", description: "Data transfer completed" },
  { name: "sync_failed", description: "Data transfer failed" },
  { name: "plugin_installed", description: "Plugin installed" },
  { name: "plugin_install_failed", description: "Plugin install failed" },
  { name: "plugin_updated", description: "Plugin updated" },
  { name: "git_deploy_completed", description: "Git deploy completed" },
  { name: "git_deploy_failed", description: "Git deploy failed" },
  { name: "maintenance_mode", description: "Maintenance mode toggled" },
  { name: "basic_authentication", description: "Basic authentication toggled" },
  { name: "ssh_command", description: "Command executed on the site" },
  { name: "ondemand_backup_created", description: "On-demand backup requested" },
  { name: "php_version_updated", description: "PHP version changed" },
  { name: "edge_cache_purged", description: "Edge cache purged" },
  { name: "collaborator_added", description: "Collaborator added" },
];
export const ACCOUNT_ACTIONS: ReadonlyArray<{ name: string; description: string }> = [
  { name: "account_login", description: "Signed in to the control panel" },
  { name: "api_application_created", description: "API application created" },
  { name: "account_updated", description: "Account settings changed" },
  { name: "addon_updated", description: "Add-on quantity changed" },
  ...SITE_ACTIONS,
];
const DESCRIPTIONS = new Map(ACCOUNT_ACTIONS.map((a) => [a.name, a.description]));

/** The usual actor of each source: a person in the panel, an API application, the platform itself. */
const ACTORS: Record<ActivitySource, { accountEmail: string; ipAddress: string | null; userAgent: string }> =
  {
    ui: {
      accountEmail: "ops@agency.example",
      ipAddress: "198.51.100.23",
      userAgent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/131.0 Safari/537.36",
    },
    "api.v1": {
      accountEmail: "ops@agency.example",
      ipAddress: "203.0.113.80",
      userAgent: "agency-tools/2.3",
    },
    systems: { accountEmail: "system@platform.example", ipAddress: null, userAgent: "platform-automation" },
  };

export type ActivityFilterField = "action" | "account_email" | "ip_address" | "source";
export interface ActivityFilter {
  field: ActivityFilterField;
  operator: "equals" | "contains";
  value: string;
}
const FILTER_FIELDS: Record<ActivityFilterField, keyof ActivityEntry> = {
  action: "name",
  account_email: "accountEmail",
  ip_address: "ipAddress",
  source: "source",
};

/** The request's `filters` (an array of {field, operator, value}), or the problems that make it invalid. */
export function parseActivityFilters(raw: unknown): { filters: ActivityFilter[] } | { problems: string[] } {
  if (raw === undefined || raw === null) return { filters: [] };
  if (!Array.isArray(raw)) return { problems: ["filters must be an array"] };
  const filters: ActivityFilter[] = [];
  const problems: string[] = [];
  raw.forEach((f: unknown, i) => {
    const r = (typeof f === "object" && f !== null ? f : {}) as Record<string, unknown>;
    if (typeof r.field !== "string" || !(r.field in FILTER_FIELDS))
      problems.push(`filters[${i}].field must be one of action, account_email, ip_address, source`);
    else if (r.operator !== "equals" && r.operator !== "contains")
      problems.push(`filters[${i}].operator must be equals or contains`);
    else if (typeof r.value !== "string") problems.push(`filters[${i}].value must be a string`);
    else filters.push({ field: r.field as ActivityFilterField, operator: r.operator, value: r.value });
  });
  return problems.length > 0 ? { problems } : { filters };
}

function matches(entry: ActivityEntry, f: ActivityFilter): boolean {
  const v = entry[FILTER_FIELDS[f.field]];
  const text = v === null ? "" : String(v);
  return f.operator === "equals"
    ? text.toLowerCase() === f.value.toLowerCase()
    : text.toLowerCase().includes(f.value.toLowerCase());
}

const HISTORY_SITE_ACTIONS = [
  "plugin_updated",
  "php_version_updated",
  "edge_cache_purged",
  "collaborator_added",
  "ondemand_backup_created",
  "maintenance_mode",
];

/** History before start-up: a few entries per site and sign-ins to the account, over 75 days. */
export function activityHistory(fleet: readonly SimSiteData[], seed: number, startMs: number): Stored[] {
  const out: Array<Omit<Stored, "entry"> & { input: ActivityInput }> = [];
  const rng = mulberry32(seed * 31 + 7);
  for (let d = 0; d < HISTORY_DAYS; d++) {
    const at = Math.floor(startMs - d * DAY - rng() * DAY);
    out.push({ at, siteId: null, input: { name: "account_login", message: "Signed in", source: "ui" } });
  }
  for (const data of fleet) {
    const r = mulberry32(data.seed ^ 0xac71);
    const count = 1 + Math.floor(r() * 5);
    for (let k = 0; k < count; k++) {
      const name = pick(r, HISTORY_SITE_ACTIONS);
      const source = pick(r, ["ui", "api.v1", "systems"] as const);
      const at = Math.floor(startMs - r() * HISTORY_DAYS * DAY);
      out.push({
        at,
        siteId: data.site.id,
        input: { name, source, message: `${DESCRIPTIONS.get(name)} on site ${data.site.name}` },
      });
    }
  }
  out.sort((a, b) => a.at - b.at);
  return out.map((o, i) => ({ at: o.at, siteId: o.siteId, entry: entryOf(i + 1, o.at, o.input) }));
}

function entryOf(id: number, at: number, input: ActivityInput): ActivityEntry {
  const source = input.source ?? "ui";
  const actor = ACTORS[source];
  return {
    id,
    timestamp: new Date(at).toISOString(),
    accountEmail: input.accountEmail ?? actor.accountEmail,
    ipAddress: input.ipAddress === undefined ? actor.ipAddress : input.ipAddress,
    userAgent: input.userAgent ?? actor.userAgent,
    name: input.name,
    description: input.description ?? DESCRIPTIONS.get(input.name) ?? input.name,
    source,
    message: input.message,
  };
}

export class ActivityLog {
  private stored: Stored[] | undefined;
  private nextId = 0;

  /** `history` is built on first use (large fleets pay for it only when the logs are read). */
  constructor(private readonly history: () => Stored[]) {}

  private all(): Stored[] {
    if (!this.stored) {
      this.stored = this.history();
      this.nextId = this.stored.length + 1;
    }
    return this.stored;
  }

  /** Write an entry at `atMs`; ids grow in the order entries are written, whatever their time. */
  append(input: ActivityInput, atMs: number): ActivityEntry {
    const all = this.all();
    const stored: Stored = {
      at: atMs,
      siteId: input.siteId ?? null,
      entry: entryOf(this.nextId++, atMs, input),
    };
    // Keep time order; an entry written for an earlier time goes in its place.
    let i = all.length;
    while (i > 0 && (all[i - 1] as Stored).at > atMs) i--;
    all.splice(i, 0, stored);
    return stored.entry;
  }

  /**
   * Entries of the account log (siteId null) or of one site's log, within the retention at `nowMs`,
   * matching every filter, in the given order (ties by id).
   */
  query(
    siteId: number | null,
    nowMs: number,
    filters: readonly ActivityFilter[],
    order: ActivityOrder,
    accountScope: AccountActivityScope = "all",
  ) {
    const retention = (siteId === null ? ACCOUNT_RETENTION_DAYS : SITE_RETENTION_DAYS) * DAY;
    const out: ActivityEntry[] = [];
    for (const s of this.all()) {
      if (s.at < nowMs - retention || s.at > nowMs) continue;
      if (siteId !== null && s.siteId !== siteId) continue;
      if (siteId === null && accountScope === "account" && s.siteId !== null) continue;
      if (filters.every((f) => matches(s.entry, f))) out.push(s.entry);
    }
    return order === "newest-first" ? out.reverse() : out;
  }
}
