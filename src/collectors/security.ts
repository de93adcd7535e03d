import type { SecurityAlertItem } from "../api/schemas.js";
import type { Grouped } from "../api/types.js";

export type SecurityAlertGroup = Grouped<SecurityAlertItem>;
import type { Sample } from "../metrics/sample.js";
import { sampleFor, type SiteRef } from "../metrics/siteSample.js";
import { perSite } from "./perSite.js";

export type ExtensionType = "plugin" | "theme";

const SEVERITY_RANK: Record<string, number> = {
  unknown: 0,
  low: 1,
  medium: 2,
  moderate: 2,
  high: 3,
  critical: 4,
};

function severityOf(value: string | null | undefined): string {
  const s = (value ?? "").trim().toLowerCase();
  return s === "" || s === "null" ? "unknown" : s;
}

function rank(severity: string): number {
  // Unlisted words rank between medium and high: known to be something, not known to be low.
  return SEVERITY_RANK[severity] ?? 2.5;
}

/** What an extension's update field says. */
export type UpdateState = "available" | "none" | "other";

const NO_UPDATE = new Set(["", "none", "false", "no", "0"]);

/**
 * `update_available` has no stated type: a boolean, or the words of the plugin list's `update` (none,
 * available, or 'version higher than expected'). Only "available" (or true) is an update: any other
 * word ('version higher than expected' means a build newer than the platform knows) is `other`,
 * counted apart, never as an update. Absent: an `update_version` means one.
 */
export function updateState(
  value: boolean | string | null | undefined,
  updateVersion?: string | null,
): UpdateState {
  if (typeof value === "boolean") return value ? "available" : "none";
  if (typeof value === "string") {
    const v = value.trim().toLowerCase();
    if (v === "available" || v === "true") return "available";
    return NO_UPDATE.has(v) ? "none" : "other";
  }
  return updateVersion ? "available" : "none";
}

export function collectSecurity(
  site: SiteRef,
  type: ExtensionType,
  groups: readonly SecurityAlertGroup[],
): Sample[] {
  const byStatus = new Map<string, number>();
  const vulnerable = new Map<string, number>();
  const info = new Map<string, Sample>();
  let updates = 0;
  let unclear = 0;
  const seen = new Set<string>();
  for (const { group, item } of groups) {
    // One extension may be listed under several groups: count it once.
    const key = `${item.name}@${item.version ?? ""}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const status = item.status?.trim() || group || "unknown";
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    const update = updateState(item.update_available, item.update_version);
    if (update === "available") updates += 1;
    else if (update === "other") unclear += 1;
    const alerts = item.security_alerts ?? [];
    if (alerts.length > 0) {
      const worst = alerts.map((a) => severityOf(a.severity)).reduce((a, b) => (rank(b) > rank(a) ? b : a));
      vulnerable.set(worst, (vulnerable.get(worst) ?? 0) + 1);
      for (const alert of alerts) {
        const labels = {
          type,
          extension: item.name,
          version: item.version ?? "",
          fixed_in: alert.fixed_in ?? "",
          severity: severityOf(alert.severity),
        };
        info.set(JSON.stringify(labels), sampleFor(site, "sitehost_site_vulnerability_info", labels, 1));
      }
    } else if (item.security_risk) {
      vulnerable.set("unknown", (vulnerable.get("unknown") ?? 0) + 1);
    }
  }
  const out: Sample[] = [];
  for (const [status, n] of byStatus)
    out.push(sampleFor(site, "sitehost_site_extensions", { type, status }, n));
  // Absent while none has an update, as vulnerable_extensions is while none is vulnerable.
  if (updates > 0) out.push(sampleFor(site, "sitehost_site_extension_updates_available", { type }, updates));
  if (unclear > 0) out.push(sampleFor(site, "sitehost_site_extension_updates_unclear", { type }, unclear));
  for (const [severity, n] of vulnerable)
    out.push(sampleFor(site, "sitehost_site_vulnerable_extensions", { type, severity }, n));
  out.push(...info.values());
  return out;
}

/** The `security` collector: plugin and theme alerts, two requests per site. */
export const securityCollector = perSite<
  { plugins: SecurityAlertGroup[]; themes: SecurityAlertGroup[] },
  "security"
>({
  name: "security",
  requestsPerSite: 2,
  fetch: async (api, site, signal) => {
    const [plugins, themes] = await Promise.all([
      api.pluginAlerts({ id: site.id }, { signal }),
      api.themeAlerts({ id: site.id }, { signal }),
    ]);
    return { plugins: plugins.items, themes: themes.items };
  },
  collect: (site, input) => [
    ...collectSecurity(site, "plugin", input.plugins),
    ...collectSecurity(site, "theme", input.themes),
  ],
});
