/**
 * On-demand backups: at most 3 file-system and 3 database backups per site. The newest of a type is
 * kept 30 days, the oldest 7 (the middle one of three 14, the simulator's choice); expired ones are
 * gone from the listing. Built per site on first use.
 */
import type { SimSiteData } from "./fleet.js";
import { mulberry32 } from "./random.js";

export type BackupType = "fs" | "db";
export const ONDEMAND_SLOTS = 3;

interface Stored {
  requestId: number;
  type: BackupType;
  requestedMs: number;
  /** null while creating. */
  completedMs: number | null;
  bytes: number;
  createdBy: string;
}

/** A record as the API returns it. */
export interface OnDemandBackup {
  id: string | null;
  requestId: number;
  siteId: number;
  completed: number | null;
  status: string;
  type: BackupType;
  bytes: string | null;
  requested: number;
  backupTimestamp: string | null;
  createdBy: string;
  removedIn: string;
  deleteAt: number;
}

const DAY = 86_400_000;
/** Days kept by rank among a type's backups, newest first. */
const KEEP_DAYS = [[30], [30, 7], [30, 14, 7]] as const;

function datetime(ms: number): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}

function humanDuration(ms: number): string {
  const hours = Math.max(0, Math.round(ms / 3_600_000));
  if (hours < 48) return `${hours} hour${hours === 1 ? "" : "s"}`;
  return `${Math.round(hours / 24)} days`;
}

export class OnDemandBackups {
  private readonly sites = new Map<number, Stored[]>();
  /** Backups created after start-up; those before have ids from their site's id (access order must not matter). */
  private nextRequestId = 1_000_001;

  constructor(private readonly startMs: number) {}

  /**
   * By fleet index: % 6 = 0 uses all three file-system slots, % 6 = 3 all three database slots,
   * % 5 = 1 has a database backup still being created; the others hold 0–2 of each type.
   */
  private build(data: SimSiteData): Stored[] {
    const rng = mulberry32(data.seed ^ 0x0d0b);
    const i = data.index;
    const out: Stored[] = [];
    const add = (type: BackupType, hoursAgo: number, creating = false) =>
      out.push({
        requestId: data.site.id * 10 + out.length,
        type,
        requestedMs: Math.floor(this.startMs - hoursAgo * 3_600_000),
        completedMs: creating ? null : Math.floor(this.startMs - hoursAgo * 3_600_000 + 600_000),
        bytes: Math.round((type === "fs" ? 2e9 : 2e8) * (0.3 + rng())),
        createdBy: "ops@agency.example",
      });
    const fs = i % 6 === 0 ? 3 : Math.floor(rng() * 3);
    const db = i % 6 === 3 ? 3 : Math.floor(rng() * 3);
    // Within the last six days, so even the oldest (kept 7 days) is listed at start-up.
    for (let k = 0; k < fs; k++) add("fs", 2 + k * 40 + rng() * 20);
    for (let k = 0; k < db; k++) add("db", 3 + k * 40 + rng() * 20);
    if (i % 5 === 1 && db < ONDEMAND_SLOTS) add("db", 0.05, true);
    return out;
  }

  private stored(data: SimSiteData): Stored[] {
    let list = this.sites.get(data.site.id);
    if (!list) this.sites.set(data.site.id, (list = this.build(data)));
    return list;
  }

  /** The site's backups at `nowMs`, newest first. */
  list(data: SimSiteData, nowMs: number): OnDemandBackup[] {
    const out: OnDemandBackup[] = [];
    for (const type of ["fs", "db"] as const) {
      const ofType = this.stored(data)
        .filter((b) => b.type === type && b.requestedMs <= nowMs)
        .sort((a, b) => b.requestedMs - a.requestedMs);
      const keep = KEEP_DAYS[Math.min(ofType.length, ONDEMAND_SLOTS) - 1] ?? [];
      ofType.forEach((b, rank) => {
        const deleteAt = (b.completedMs ?? b.requestedMs) + (keep[rank] ?? 7) * DAY;
        if (deleteAt <= nowMs) return;
        out.push({
          id: b.completedMs === null ? null : `${type}-${data.site.id}-${b.requestId}`,
          requestId: b.requestId,
          siteId: data.site.id,
          completed: b.completedMs === null ? null : Math.floor(b.completedMs / 1000),
          status: b.completedMs === null ? "creating" : "completed",
          type,
          bytes: b.completedMs === null ? null : String(b.bytes),
          requested: Math.floor(b.requestedMs / 1000),
          backupTimestamp: b.completedMs === null ? null : datetime(b.completedMs),
          createdBy: b.createdBy,
          removedIn: humanDuration(deleteAt - nowMs),
          deleteAt: Math.floor(deleteAt / 1000),
        });
      });
    }
    return out.sort((a, b) => b.requested - a.requested || b.requestId - a.requestId);
  }

  /** Add a backup (completed at once unless `creating`); undefined when the type's 3 slots are used. */
  create(data: SimSiteData, type: BackupType, nowMs: number, creating = false): OnDemandBackup | undefined {
    if (this.list(data, nowMs).filter((b) => b.type === type).length >= ONDEMAND_SLOTS) return undefined;
    const requestId = this.nextRequestId++;
    this.stored(data).push({
      requestId,
      type,
      requestedMs: nowMs,
      completedMs: creating ? null : nowMs,
      bytes: type === "fs" ? 1_500_000_000 : 150_000_000,
      createdBy: "ops@agency.example",
    });
    return this.list(data, nowMs).find((b) => b.requestId === requestId);
  }

  forget(siteId: number): void {
    this.sites.delete(siteId);
  }
}
