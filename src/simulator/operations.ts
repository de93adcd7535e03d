/**
 * Things that happen on the platform: each one changes the state, writes an activity entry and sends
 * the webhook event the platform documents for it. Control hooks, the control API and the API's own
 * state-changing routes all go through here, so they agree.
 */
import type { ActivityEntry, ActivityInput, ActivitySource } from "./activity.js";
import { restorePayload, type WebhookPayload } from "./events.js";
import type { SimExtension, SimSiteData } from "./fleet.js";
import type { DeployInput, GitDeploy } from "./git.js";
import type { BackupType, OnDemandBackup } from "./ondemand.js";
import type { Platform } from "./platform.js";
import type { Restore, RestoreInput } from "./restores.js";

export type SiteKind = "live" | "staging" | "sandbox" | "kit";
export type Outcome<T> = { ok: T } | { problem: string };

const ACTOR = "ops@agency.example";

export function kindOf(data: SimSiteData): SiteKind {
  const s = data.site;
  return s.kit ? "kit" : s.staging ? "staging" : s.sandbox ? "sandbox" : "live";
}

function note(p: Platform, input: ActivityInput): ActivityEntry {
  return p.activity.append(input, p.now());
}

function emit(p: Platform, payload: WebhookPayload): void {
  p.webhooks.send(payload);
}

export function disableSite(p: Platform, data: SimSiteData, source: ActivitySource = "ui"): void {
  data.site.state = "disabled";
  note(p, {
    name: "site_disabled",
    siteId: data.site.id,
    source,
    message: `Site ${data.site.name} disabled`,
  });
  emit(p, { event: "site_disabled", site: { id: data.site.id, state: data.site.state } });
}

export function enableSite(p: Platform, data: SimSiteData, source: ActivitySource = "ui"): void {
  data.site.state = "live";
  note(p, { name: "site_enabled", siteId: data.site.id, source, message: `Site ${data.site.name} enabled` });
  emit(p, { event: "site_enabled", site: { id: data.site.id, state: data.site.state } });
}

/** Support marks a site hacked: it is disabled, and only support can mark it safe again. */
export function hackSite(p: Platform, data: SimSiteData): void {
  data.site.state = "disabled";
  note(p, {
    name: "site_hacked",
    siteId: data.site.id,
    source: "systems",
    message: `Site ${data.site.name} marked as hacked by support and disabled`,
  });
  emit(p, { event: "site_hacked", site: { id: data.site.id, state: data.site.state, status: "hacked" } });
}

export function addSite(p: Platform): SimSiteData {
  const data = p.addSite();
  note(p, { name: "site_created", siteId: data.site.id, message: `Site ${data.site.name} created` });
  emit(p, {
    event: "site_created",
    site: { id: data.site.id, state: data.site.state },
    cms_admin: { username: "admin", email: ACTOR },
  });
  return data;
}

export function deleteSite(p: Platform, data: SimSiteData): void {
  p.removeSite(data.site.id);
  note(p, { name: "site_deleted", siteId: data.site.id, message: `Site ${data.site.name} deleted` });
  const s = data.site;
  emit(p, { event: "site_deleted", site: { id: s.id, staging: s.staging, sandbox: s.sandbox, url: s.url } });
}

/** Conversions of the documentation's table; anything else is refused with the reason. */
const CONVERSIONS: Record<SiteKind, readonly SiteKind[]> = {
  staging: ["live", "sandbox"],
  sandbox: ["live", "staging"],
  live: ["staging", "sandbox"],
  kit: ["sandbox"],
};

export function convertSite(p: Platform, data: SimSiteData, to: SiteKind): Outcome<SimSiteData> {
  const from = kindOf(data);
  if (!CONVERSIONS[to].includes(from))
    return { problem: `A ${from} site cannot be converted to ${to} (from: ${CONVERSIONS[to].join(", ")})` };
  const s = data.site;
  s.staging = to === "staging";
  s.sandbox = to === "sandbox";
  s.kit = to === "kit";
  if (from === "live") {
    // Leaving live takes the site's DNS records and domains with it.
    p.dns.removeSiteRecords(s.id, p.now());
    data.domains = [];
    s.domainsCount = 0;
  }
  if (to === "sandbox") p.maintenance.add(s.id);
  note(p, {
    name: "site_converted",
    siteId: s.id,
    message: `Site ${s.name} converted from ${from} to ${to}`,
  });
  emit(p, { event: "site_converted", site: { id: s.id, site_converted_to: to, site_converted_from: from } });
  return { ok: data };
}

export function restoreSite(p: Platform, data: SimSiteData, input: RestoreInput): Restore {
  const r = p.restores.restore(data, input, p.now());
  const name = r.failedAt !== null ? "site_restore_failed" : "site_restored";
  if (r.completedAt === null && r.failedAt === null) {
    p.maintenance.add(data.site.id); // in maintenance mode while it runs
    note(p, {
      name: "restore_requested",
      siteId: data.site.id,
      message: `Restore of ${data.site.name} started`,
    });
    return r;
  }
  note(p, {
    name,
    siteId: data.site.id,
    message: r.error ? `Restore of ${data.site.name} failed: ${r.error}` : `Site ${data.site.name} restored`,
  });
  emit(p, restorePayload(data.site.id, r, ACTOR));
  return r;
}

export interface SyncInput {
  fail?: boolean;
  error?: string;
}

/** A data transfer from one site to another (its outcome: the data itself is not modelled). */
export function syncSites(p: Platform, from: SimSiteData, to: SimSiteData, input: SyncInput): void {
  const failed = input.fail === true;
  const error = input.error ?? "The destination did not answer the HTTP check";
  note(p, {
    name: failed ? "sync_failed" : "sync_success",
    siteId: to.site.id,
    message: failed
      ? `Data transfer from ${from.site.name} to ${to.site.name} failed: ${error}`
      : `Data transfer from ${from.site.name} to ${to.site.name} completed`,
  });
  const ids = { from_site_id: from.site.id, to_site_id: to.site.id };
  emit(
    p,
    failed
      ? {
          event: "sync_failed",
          ...ids,
          restore_sync_request: {
            message: "Data transfer failed",
            status: "failed",
            error,
            failed_at: Math.floor(p.now() / 1000),
            requested_by: ACTOR,
          },
        }
      : {
          event: "sync_success",
          ...ids,
          restore_sync_request: {
            message: "Data transfer completed",
            status: "completed",
            requested_by: ACTOR,
          },
        },
  );
}

export interface PluginInstall {
  path: string;
  version?: string;
  fail?: boolean;
  error?: string;
}

/** Install (and activate) a plugin; a successful install adds it to the site's plugins. */
export function installPlugin(p: Platform, data: SimSiteData, input: PluginInstall): void {
  const version = input.version ?? "latest";
  const plugin = { path: input.path, version };
  const site = { id: data.site.id };
  if (input.fail === true) {
    const message = input.error ?? "The plugin package could not be downloaded";
    note(p, {
      name: "plugin_install_failed",
      siteId: site.id,
      source: "api.v1",
      message: `${input.path}: ${message}`,
    });
    emit(p, { event: "plugin_install_failed", site, plugin, error: { message } });
    return;
  }
  const slug = input.path.replace(/^.*\//, "").replace(/\.zip$/, "");
  if (!data.plugins.some((e) => e.name === slug)) {
    const extension: SimExtension = {
      name: slug,
      title: slug,
      version: version === "latest" ? "1.0.0" : version,
      status: "active",
      group: "active",
      updateVersion: null,
      alerts: [],
    };
    data.plugins.push(extension);
  }
  note(p, {
    name: "plugin_installed",
    siteId: site.id,
    source: "api.v1",
    message: `${slug} ${version} installed`,
  });
  emit(p, { event: "plugin_installed", site, plugin });
}

export interface PluginUpdate {
  /** The plugin's slug (or path: its last part is the slug). */
  path: string;
  version?: string;
  /** The new version breaks the site: a fatal error the site never logged, from its plugin file. */
  breaks?: boolean;
}

/**
 * A plugin updated: its activity entry (the platform documents no webhook for updates); with `breaks`,
 * the fatal error the new version causes, which `brokenPluginError` writes.
 */
export function updatePlugin(p: Platform, data: SimSiteData, input: PluginUpdate): void {
  const slug = input.path.replace(/^.*\//, "").replace(/\.(?:zip|php)$/, "");
  const plugin = data.plugins.find((e) => e.name === slug);
  const from = plugin?.version ?? "1.0.0";
  const to = input.version ?? bumpMinor(from);
  if (plugin) {
    plugin.version = to;
    plugin.updateVersion = null;
  }
  note(p, {
    name: "plugin_updated",
    siteId: data.site.id,
    source: "ui",
    message: `${slug} updated from ${from} to ${to}`,
  });
}

function bumpMinor(version: string): string {
  const [major = "1", minor = "0"] = version.split(".");
  return `${major}.${Number(minor) + 1}.0`;
}

/** The PHP log entry of a plugin whose update broke the site (the line varies, the group does not). */
export function brokenPluginError(path: string, line: number): Record<string, unknown> {
  const slug = path.replace(/^.*\//, "").replace(/\.(?:zip|php)$/, "");
  const file = `/www/wp-content/plugins/${slug}/${slug}.php`;
  return {
    severity: "Fatal error",
    file,
    line,
    message: `PHP Fatal error:  Uncaught Error: Call to undefined function ${slug.replace(/\W/g, "_")}_legacy_init() in ${file}:${line}\nStack trace:\n#0 /www/wp-settings.php(545): include_once()\n#1 {main}\n  thrown in ${file} on line ${line}`,
  };
}

/** A finished git deploy; undefined when the site is not enrolled. */
export function recordDeploy(p: Platform, data: SimSiteData, input: DeployInput): GitDeploy | undefined {
  const entry = p.git.deploy(data, input, p.now());
  if (!entry) return undefined;
  const failed = input.fail === true;
  const event = failed ? "git_deploy_failed" : "git_deploy_completed";
  note(p, {
    name: event,
    siteId: data.site.id,
    source: "systems",
    message: `Deploy of ${entry.branch} (${entry.after.slice(0, 7)}) ${failed ? "failed" : "completed"}`,
  });
  emit(p, p.behaviour.gitEventPayload === "site" ? { event, site: { id: data.site.id } } : { event });
  return entry;
}

/** Toggle maintenance mode, or set it when `enabled` is given. */
export function setMaintenanceMode(p: Platform, data: SimSiteData, enabled?: boolean): boolean {
  const on = enabled ?? !p.maintenance.has(data.site.id);
  if (on) p.maintenance.add(data.site.id);
  else p.maintenance.delete(data.site.id);
  const word = on ? "enabled" : "disabled";
  note(p, { name: "maintenance_mode", siteId: data.site.id, message: `Maintenance mode ${word}` });
  emit(p, { event: "maintenance_mode", site_id: data.site.id, maintenance_mode: word });
  return on;
}

export function toggleBasicAuthentication(p: Platform, data: SimSiteData): boolean {
  const on = !p.basicAuth.has(data.site.id);
  if (on) p.basicAuth.add(data.site.id);
  else p.basicAuth.delete(data.site.id);
  note(p, {
    name: "basic_authentication",
    siteId: data.site.id,
    message: `Basic authentication ${on ? "installed" : "removed"}`,
  });
  emit(p, {
    event: "basic_authentication",
    site_id: data.site.id,
    maintenance_mode: on ? "activated" : "removed",
  });
  return on;
}

export function runSshCommand(p: Platform, data: SimSiteData, command: string): void {
  note(p, { name: "ssh_command", siteId: data.site.id, message: `Command executed: ${command}` });
  emit(p, { event: "ssh_command", site_id: data.site.id, result: { message: "Command executed", command } });
}

export function createOnDemandBackup(
  p: Platform,
  data: SimSiteData,
  type: BackupType,
  creating = false,
): Outcome<OnDemandBackup> {
  const backup = p.ondemand.create(data, type, p.now(), creating);
  if (!backup) return { problem: `All 3 on-demand ${type} backup slots of site ${data.site.id} are in use` };
  note(p, {
    name: "ondemand_backup_created",
    siteId: data.site.id,
    message: `On-demand ${type} backup requested`,
  });
  return { ok: backup };
}
