import { describe, expect, it } from "vitest";
import type { ActivityEntry } from "../../../src/api/logSchemas.js";
import { changeOfActivity, changeOfEvent, kindOfCommand } from "../../../src/changes/kinds.js";

const entry = (name: string, description?: string, message?: string): ActivityEntry =>
  ({ id: 1, name, timestamp: "2026-11-29T10:00:00Z", description, message }) as ActivityEntry;

describe("the change an activity entry reports", () => {
  it.each([
    ["git_deploy_completed", "Git deploy completed", "deploy"],
    ["plugin_installed", "Plugin installed", "plugin"],
    ["plugin_updated", "Plugin updated", "plugin"],
    ["Theme activated", undefined, "theme"],
    ["site_restored", "Site restored from a backup", "restore"],
    ["sync_success", "Data transfer completed", "restore"],
    ["php_version_updated", "PHP version changed", "php"],
    ["site_converted", "Site converted", "conversion"],
    ["maintenance_mode", "Maintenance mode toggled", "maintenance"],
    ["maintenance_mode_enabled", undefined, "maintenance"],
    ["basic_authentication", "Basic authentication toggled", "access"],
    ["collaborator_added", "Collaborator added", "access"],
    ["cms_user_created", "CMS user created", "access"],
  ])("%s (%s): %s", (name, description, kind) => {
    expect(changeOfActivity(entry(name, description))).toBe(kind);
  });

  it.each([
    ["a failure", "git_deploy_failed", "Git deploy failed"],
    ["a failed install", "plugin_install_failed", "Plugin install failed"],
    ["a failed restore", "site_restore_failed", "Site restore failed"],
    ["a request (its completion is the change)", "restore_requested", "Restore requested"],
    ["a backup", "ondemand_backup_created", "On-demand backup requested"],
    ["a purge", "edge_cache_purged", "Edge cache purged"],
    ["a sign-in", "account_login", "Signed in to the control panel"],
    ["a site created", "site_created", "Site created"],
    ["an unknown action", "something_else", undefined],
  ])("no change: %s", (_what, name, description) => {
    expect(changeOfActivity(entry(name, description))).toBeUndefined();
  });

  it("an SSH command is a change only when it is a wp-cli plugin or theme change", () => {
    const ssh = (command: string) => entry("ssh_command", "Command executed on the site", command);
    expect(changeOfActivity(ssh("wp plugin update --all"))).toBe("plugin");
    expect(changeOfActivity(ssh("wp theme activate twentytwentyfive"))).toBe("theme");
    expect(changeOfActivity(ssh("wp plugin list"))).toBeUndefined();
    expect(changeOfActivity(ssh("ls -la"))).toBeUndefined();
    expect(kindOfCommand("cd /www && WP plugin deactivate akismet")).toBe("plugin");
  });

  it("words of the message do not make a change (a message may quote anything)", () => {
    expect(
      changeOfActivity(entry("account_updated", "Account settings changed", "plugin deploy")),
    ).toBeUndefined();
  });
});

describe("the change a webhook event reports", () => {
  it.each([
    [{ event: "site_converted", site: { id: 4, site_converted_to: "live" } }, 4, "conversion"],
    [{ event: "maintenance_mode", site_id: 5, maintenance_mode: "enabled" }, 5, "maintenance"],
    [{ event: "basic_authentication", site_id: 5, maintenance_mode: "activated" }, 5, "access"],
    [
      { event: "plugin_installed", site: { id: 6 }, plugin: { path: "a/a.php", version: "latest" } },
      6,
      "plugin",
    ],
    [{ event: "git_deploy_completed", site: { id: 7 } }, 7, "deploy"],
    [{ event: "sync_success", from_site_id: 1, to_site_id: 8 }, 8, "restore"],
    [
      { event: "ssh_command", site_id: 9, result: { command: "wp plugin install akismet", message: "" } },
      9,
      "plugin",
    ],
  ])("%j: site %i, %s", (payload, siteId, kind) => {
    expect(changeOfEvent(payload)).toEqual({ siteId, kind });
  });

  it("a restore at its completion time, in seconds or milliseconds", () => {
    const at = Date.parse("2026-11-29T10:00:00Z");
    for (const completed of [at / 1000, at, String(at / 1000)])
      expect(
        changeOfEvent({
          event: "site_restored",
          site: { id: 3 },
          restore: { completed_at_timestamp: completed },
        }),
      ).toEqual({ siteId: 3, kind: "restore", atMs: at });
  });

  it.each([
    [{ event: "git_deploy_completed" }],
    [{ event: "git_deploy_failed", site: { id: 7 } }],
    [{ event: "site_restore_failed", site: { id: 3 } }],
    [{ event: "plugin_install_failed", site: { id: 6 } }],
    [{ event: "site_hacked", site: { id: 6 } }],
    [{ event: "ssh_command", site_id: 9, result: { command: "wp plugin list" } }],
  ])("no change: %j", (payload) => {
    expect(changeOfEvent(payload)).toBeUndefined();
  });
});
