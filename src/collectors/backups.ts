import type { BackupEntry } from "../api/schemas.js";
import { parseBackupTimestamp } from "../api/times.js";
import type { Sample } from "../metrics/sample.js";
import { sampleFor, type SiteRef } from "../metrics/siteSample.js";

export function collectBackups(site: SiteRef, entries: readonly BackupEntry[]): Sample[] {
  let filesystem: number | undefined;
  let database: number | undefined;
  for (const e of entries) {
    const t = parseBackupTimestamp(e.timestamp);
    if (t === undefined) continue;
    // null: no backup of that type; undefined: the platform did not say (drift): neither counts.
    if (e.filesystemBackupId != null && (filesystem === undefined || t > filesystem)) filesystem = t;
    if (e.databaseBackupId != null && (database === undefined || t > database)) database = t;
  }
  const out: Sample[] = [];
  if (filesystem !== undefined)
    out.push(
      sampleFor(site, "sitehost_site_backup_last_timestamp_seconds", { type: "filesystem" }, filesystem),
    );
  if (database !== undefined)
    out.push(sampleFor(site, "sitehost_site_backup_last_timestamp_seconds", { type: "database" }, database));
  return out;
}
