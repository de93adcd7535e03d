/**
 * Which collectors an event tells something new to: they ask again at their next run about the event's
 * site, however long its answers had stayed the same (collectors.<name>.maxInterval). An event this
 * table does not know, naming a site, wakes every collector that backs off; one that says nothing
 * the collectors read (a command run, a maintenance-mode toggle) wakes none.
 */
import { BACKING_OFF_COLLECTORS, type BackingOffCollector } from "../config/schema.js";

const WAKES: Readonly<Record<string, readonly BackingOffCollector[]>> = {
  plugin_installed: ["security"],
  plugin_install_failed: ["security"],
  site_restored: ["backups"],
  site_restore_failed: ["backups"],
  sync_success: ["backups"],
  sync_failed: ["backups"],
  git_deploy_completed: ["git"],
  git_deploy_failed: ["git"],
  site_converted: ["domains", "certificates"],
  site_enabled: ["domains", "certificates"],
  site_disabled: ["domains", "certificates"],
  site_hacked: ["domains", "certificates"],
  // New and deleted sites are discovery's; the rest change nothing a collector reads.
  site_created: [],
  site_deleted: [],
  ssh_command: [],
  maintenance_mode: [],
  basic_authentication: [],
};

/**
 * The collectors to wake for an event. An event naming no site wakes its collectors for every site
 * (the git deploy events name none), an unknown one none.
 */
export function collectorsWokenBy(event: string, siteId: number | undefined): readonly BackingOffCollector[] {
  const known = Object.hasOwn(WAKES, event) ? WAKES[event] : undefined;
  if (known) return known;
  return siteId === undefined ? [] : BACKING_OFF_COLLECTORS;
}
