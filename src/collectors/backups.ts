import type { BackupEntry } from "../api/schemas.js";
import type { Sample } from "../metrics/sample.js";
import { sampleFor, type SiteRef } from "./labels.js";

/** 'YYYY-MM-DD-HH-MM' (UTC) to Unix seconds. */
export function parseBackupTimestamp(text: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi] = m.map(Number) as [number, number, number, number, number, number];
  const ms = Date.UTC(y, mo - 1, d, h, mi);
  return Number.isNaN(ms) ? undefined : ms / 1000;
}

export function collectBackups(site: SiteRef, entries: readonly BackupEntry[]): Sample[] {
  let filesystem: number | undefined;
  let database: number | undefined;
  for (const e of entries) {
    const t = parseBackupTimestamp(e.timestamp);
    if (t === undefined) continue;
    if (e.filesystemBackupId !== null && (filesystem === undefined || t > filesystem)) filesystem = t;
    if (e.databaseBackupId !== null && (database === undefined || t > database)) database = t;
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
