/**
 * Restores of a site from its backups (newest first). A failed restore carries failedAt and error;
 * its status string is the simulator's choice, `failed` (the documentation shows only in_progress and
 * completed). Built per site on first use.
 */
import type { SimSiteData } from "./fleet.js";
import { backups } from "./responses.js";

/** A record as the API returns it. */
export interface Restore {
  id: number;
  status: string;
  logMessages: string[];
  filesystemId: string;
  databaseId: string;
  filesystemDate: string;
  databaseDate: string;
  filesystemComplete: boolean;
  databaseComplete: boolean;
  fromSiteId: number | null;
  error: string | null;
  created: string;
  updated: string;
  completedAt: string | null;
  failedAt: string | null;
}

export const RESTORE_IN_PROGRESS = "in_progress";
export const RESTORE_COMPLETED = "completed";
export const RESTORE_FAILED = "failed";
export const DEFAULT_RESTORE_ERROR = "Database import failed: the archive is truncated";

export interface RestoreInput {
  fail?: boolean;
  error?: string;
  fromSiteId?: number | null;
  /** Leave it running (no outcome, no event). */
  inProgress?: boolean;
}

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** Newest backup ids and time of a site at `ms` (the restore's source). */
function source(data: SimSiteData, ms: number) {
  const newest = backups(data, ms)[0];
  const stamp = newest?.timestamp ?? "1970-01-01-00-00";
  const [y, mo, d, h, mi] = stamp.split("-").map(Number);
  const date = iso(Date.UTC(y as number, (mo as number) - 1, d, h, mi));
  return {
    filesystemId: String(newest?.filesystemBackupId ?? newest?.databaseBackupId ?? 0),
    databaseId: String(newest?.databaseBackupId ?? 0),
    date,
  };
}

export class RestoreStore {
  private readonly sites = new Map<number, Restore[]>();
  /** Restores after start-up; those before have ids from their site's id (access order must not matter). */
  private nextId = 1_000_001;

  constructor(
    private readonly startMs: number,
    /** Id of the fleet's site at an index (a restore from another site names it). */
    private readonly siteIdAt: (index: number) => number | undefined,
  ) {}

  private record(id: number, data: SimSiteData, atMs: number, input: RestoreInput, endMs: number): Restore {
    const from = source(data, atMs);
    const failed = input.fail === true;
    const running = input.inProgress === true && !failed;
    const log = ["Restore queued", "Site in maintenance mode", "Filesystem restored"];
    if (failed) log.push(`Database restore failed: ${input.error ?? DEFAULT_RESTORE_ERROR}`);
    else if (!running) log.push("Database restored", "Maintenance mode removed", "Restore completed");
    return {
      id,
      status: running ? RESTORE_IN_PROGRESS : failed ? RESTORE_FAILED : RESTORE_COMPLETED,
      logMessages: log,
      filesystemId: from.filesystemId,
      databaseId: from.databaseId,
      filesystemDate: from.date,
      databaseDate: from.date,
      filesystemComplete: true,
      databaseComplete: !running && !failed,
      fromSiteId: input.fromSiteId ?? null,
      error: failed ? (input.error ?? DEFAULT_RESTORE_ERROR) : null,
      created: iso(atMs),
      updated: iso(running ? atMs : endMs),
      completedAt: running || failed ? null : iso(endMs),
      failedAt: failed ? iso(endMs) : null,
    };
  }

  /**
   * By fleet index: % 4 = 0 one completed restore 3 days ago; 2 a failed restore 6 hours ago after a
   * completed one 10 days ago; 8 a completed restore from the site at index 0, a day ago; 10 one still
   * in progress since 10 minutes ago.
   */
  private build(data: SimSiteData): Restore[] {
    const i = data.index;
    const out: Restore[] = [];
    const add = (hoursAgo: number, input: RestoreInput) => {
      const at = this.startMs - hoursAgo * HOUR;
      out.unshift(this.record(data.site.id * 10 + out.length, data, at, input, at + 20 * 60_000));
    };
    if (i === 2) {
      add(10 * 24, {});
      add(6, { fail: true });
    } else if (i === 8) add(24, { fromSiteId: this.siteIdAt(0) ?? null });
    else if (i === 10) add(10 / 60, { inProgress: true });
    else if (i % 4 === 0) add(3 * 24, {});
    return out;
  }

  private stored(data: SimSiteData): Restore[] {
    let list = this.sites.get(data.site.id);
    if (!list) this.sites.set(data.site.id, (list = this.build(data)));
    return list;
  }

  /** Newest first. */
  list(data: SimSiteData, nowMs: number): Restore[] {
    return this.stored(data).filter((r) => Date.parse(r.created) <= nowMs);
  }

  /** A restore that ends at once (completed or failed), or stays in progress. */
  restore(data: SimSiteData, input: RestoreInput, nowMs: number): Restore {
    const r = this.record(this.nextId++, data, nowMs, input, nowMs);
    this.stored(data).unshift(r);
    return r;
  }

  forget(siteId: number): void {
    this.sites.delete(siteId);
  }
}
