/**
 * On-demand backups: how many a site holds per type. The platform allows 3 file-system (`fs`) and 3
 * database (`db`) backups per site and refuses another until one is deleted or expires; data
 * transfers between sites need a free slot of each type they move.
 */
import type { OndemandBackup } from "../api/schemas.js";
import type { Sample } from "../metrics/sample.js";
import { sampleFor, type SiteRef } from "../metrics/siteSample.js";

export const ONDEMAND_TYPES = ["fs", "db"] as const;
/** The types spelled out, as the automatic backups' labels are. */
const ALIASES: Readonly<Record<string, string>> = { filesystem: "fs", database: "db" };
/** Backups of one type a site may hold. */
export const ONDEMAND_SLOTS = 3;

/**
 * Every listed backup holds its slot, whatever its status: one being created already does, and one
 * being deleted still does until it leaves the listing. A type is published while the site holds one
 * (fs before db, then any type the platform's documentation does not name, as its own series).
 */
export function collectOndemandBackups(site: SiteRef, backups: readonly OndemandBackup[]): Sample[] {
  const counts = new Map<string, number>(ONDEMAND_TYPES.map((t) => [t, 0]));
  for (const b of backups) {
    const spelled = b.type.trim().toLowerCase();
    const type = ALIASES[spelled] ?? spelled;
    counts.set(type, (counts.get(type) ?? 0) + 1);
  }
  return [...counts]
    .filter(([, n]) => n > 0)
    .map(([type, n]) => sampleFor(site, "sitehost_site_ondemand_backups", { type }, n));
}
