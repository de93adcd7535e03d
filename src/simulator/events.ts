/**
 * Webhook event payloads, shaped as the platform's Events table: `event` plus that event's fields,
 * with the documented spellings. Times named *_at are ISO 8601, *_at_timestamp and sync_failed's
 * failed_at epoch seconds. git_deploy_* payloads are undocumented beyond their name: `event` alone, or
 * with `site: {id}` when the gitEventPayload switch says so.
 */
import type { Restore } from "./restores.js";

type SiteState = { id: number; state: string };

/** What a restore's events say of it in common; each adds when it ended. */
type RestoreFields = {
  restored_by: string;
  database_id: string;
  filesystem_id: string;
  requested_at: string;
  requested_at_timestamp: number;
};

export type WebhookPayload =
  | { event: "site_created"; site: SiteState; cms_admin: { username: string; email: string } }
  | { event: "site_deleted"; site: { id: number; staging: boolean; sandbox: boolean; url: string } }
  | {
      event: "site_converted";
      site: { id: number; site_converted_to: string; site_converted_from: string };
    }
  | { event: "site_enabled" | "site_disabled"; site: SiteState }
  | { event: "site_hacked"; site: SiteState & { status: string } }
  | {
      event: "site_restored";
      site: { id: number };
      restore: RestoreFields & { completed_at: string; completed_at_timestamp: number };
    }
  | {
      event: "site_restore_failed";
      site: { id: number };
      restore: RestoreFields & { failed_at: string; failed_at_timestamp: number; error: string };
    }
  | {
      event: "sync_success";
      from_site_id: number;
      to_site_id: number;
      restore_sync_request: { message: string; status: string; requested_by: string };
    }
  | {
      event: "sync_failed";
      from_site_id: number;
      to_site_id: number;
      restore_sync_request: {
        message: string;
        status: string;
        error: string;
        failed_at: number;
        requested_by: string;
      };
    }
  | { event: "ssh_command"; site_id: number; result: { message: string; command: string } }
  | { event: "maintenance_mode"; site_id: number; maintenance_mode: "enabled" | "disabled" }
  | { event: "basic_authentication"; site_id: number; maintenance_mode: "activated" | "removed" }
  | { event: "plugin_installed"; site: { id: number }; plugin: { path: string; version: string } }
  | {
      event: "plugin_install_failed";
      site: { id: number };
      plugin: { path: string; version: string };
      error: { message: string };
    }
  | { event: "git_deploy_completed" | "git_deploy_failed"; site?: { id: number } };

export type WebhookEventName = WebhookPayload["event"];

const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);

/** site_restored or site_restore_failed for a finished restore. */
export function restorePayload(siteId: number, r: Restore, restoredBy: string): WebhookPayload {
  const common = {
    restored_by: restoredBy,
    database_id: r.databaseId,
    filesystem_id: r.filesystemId,
    requested_at: r.created,
    requested_at_timestamp: seconds(r.created),
  };
  if (r.failedAt !== null)
    return {
      event: "site_restore_failed",
      site: { id: siteId },
      restore: {
        ...common,
        failed_at: r.failedAt,
        failed_at_timestamp: seconds(r.failedAt),
        error: r.error ?? "",
      },
    };
  const completed = r.completedAt ?? r.updated;
  return {
    event: "site_restored",
    site: { id: siteId },
    restore: { ...common, completed_at: completed, completed_at_timestamp: seconds(completed) },
  };
}
