/**
 * Why a log stream cannot advance, while it lasts: a page larger than `api.maxResponseSize`, a
 * checkpoint that cannot be trusted, reads that meet nothing but malformed entries, reads that keep
 * failing. A stream keeps the trouble its reads meet (nothing at all while they go well: most
 * streams), the same trouble read after read counting up from when it began; a good read clears it.
 * A trouble is a stall once it has lasted (at once for a corrupt checkpoint or a too-large page: they
 * do not pass by themselves), and the stalls are what the status page, the stalled-streams gauge and
 * the alert show.
 *
 * A too-large page is skipped once its trouble has lasted TOO_LARGE_SKIP_AFTER_MS over at least
 * TOO_LARGE_SKIP_AFTER_READS reads: time to raise the limit before anything is given up, and never
 * a stream stopped for ever (see read/decide.ts for where a read can get past such a page).
 */
import type { LogStream } from "../api/schemas.js";
import { SitehostApiError } from "../api/errors.js";
import { CheckpointWriteError } from "../ha/volume.js";
import { CheckpointFencedError } from "./streamCheckpoint.js";
import type { SiteIdentity } from "./read/types.js";

export const STALL_REASONS = ["too_large", "checkpoint_corrupt", "malformed", "read_failures"] as const;
export type StallReason = (typeof STALL_REASONS)[number];

/** Reads in a row that failed, or met nothing but malformed entries, before the stream counts as stalled. */
export const STALL_AFTER_READS = 3;
/** A page over api.maxResponseSize is skipped once reads have met one for this long ... */
export const TOO_LARGE_SKIP_AFTER_MS = 30 * 60_000;
/** ... over at least this many reads. */
export const TOO_LARGE_SKIP_AFTER_READS = 3;
/** Stalled streams the status page names (the longest stalled first); the others are counted. */
export const STALLS_LISTED = 10;

/** What keeps a stream from advancing, and since when. */
export interface Stall {
  readonly reason: StallReason;
  /** When the first read met it, ms. */
  readonly sinceMs: number;
  /** What the last read met: the error, or the checkpoint file and what to do. */
  readonly detail: string;
}

/** The same trouble, read after read. */
export interface Trouble extends Stall {
  readonly reads: number;
}

/** The trouble a read met, added to the stream's (counted on when it is the same, begun anew when not). */
export function noteTrouble(
  t: Trouble | undefined,
  reason: StallReason,
  nowMs: number,
  detail: string,
): Trouble {
  return t?.reason === reason
    ? { reason, sinceMs: t.sinceMs, reads: t.reads + 1, detail }
    : { reason, sinceMs: nowMs, reads: 1, detail };
}

/** The trouble as a stall, once it has lasted; undefined while the stream advances. */
export function stallOf(t: Trouble | undefined): Stall | undefined {
  if (!t) return undefined;
  const after = t.reason === "read_failures" || t.reason === "malformed" ? STALL_AFTER_READS : 1;
  return t.reads >= after ? t : undefined;
}

/** Whether the next read may skip a page over api.maxResponseSize (see TOO_LARGE_SKIP_AFTER_MS). */
export function maySkipTooLarge(t: Trouble | undefined, nowMs: number): boolean {
  return (
    t?.reason === "too_large" &&
    t.reads >= TOO_LARGE_SKIP_AFTER_READS &&
    nowMs - t.sinceMs >= TOO_LARGE_SKIP_AFTER_MS
  );
}

/**
 * The trouble a failed read stands for; undefined when the failure is not the stream's own: the
 * checkpoint volume and the lock (shown as parts of their own, and every stream waits on them), a
 * shutdown or a stream removed.
 */
export function failureTrouble(err: unknown): StallReason | undefined {
  if (err instanceof CheckpointWriteError || err instanceof CheckpointFencedError) return undefined;
  if (err instanceof SitehostApiError) {
    if (err.reason === "aborted" || err.reason === "closed") return undefined;
    if (err.reason === "too_large") return "too_large";
  }
  return "read_failures";
}

/** One stalled stream as the status page names it. */
export interface StalledStream {
  /** 0 for the account's own activity log. */
  siteId: number;
  site: string;
  stream: LogStream;
  reason: StallReason;
  sinceMs: number;
  detail: string;
}

/** The stalled streams at a glance: how many, by reason, and the longest stalled by name. */
export interface StallSummary {
  total: number;
  byReason: Record<StallReason, number>;
  /** At most STALLS_LISTED, the longest stalled first. */
  first: StalledStream[];
}

/** What a stream shows of itself for the summary. */
export interface StallingStream {
  readonly site: SiteIdentity;
  readonly stream: LogStream;
  readonly stall?: Stall | undefined;
}

/** Counts every stall and keeps the `limit` longest (one pass, thousands of streams, a short list). */
export function summarizeStalls(streams: Iterable<StallingStream>, limit = STALLS_LISTED): StallSummary {
  const byReason = Object.fromEntries(STALL_REASONS.map((r) => [r, 0])) as Record<StallReason, number>;
  const first: StalledStream[] = [];
  let total = 0;
  for (const s of streams) {
    const stall = s.stall;
    if (!stall) continue;
    total += 1;
    byReason[stall.reason] += 1;
    if (first.length === limit && (first[limit - 1] as StalledStream).sinceMs <= stall.sinceMs) continue;
    const entry: StalledStream = {
      siteId: s.site.id,
      site: s.site.name,
      stream: s.stream,
      reason: stall.reason,
      sinceMs: stall.sinceMs,
      detail: stall.detail,
    };
    let at = first.length;
    while (at > 0 && (first[at - 1] as StalledStream).sinceMs > stall.sinceMs) at -= 1;
    first.splice(at, 0, entry);
    if (first.length > limit) first.pop();
  }
  return { total, byReason, first };
}
