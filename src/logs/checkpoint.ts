/**
 * A stream's checkpoint: the time of the newest delivered entry (the high-water mark), the
 * fingerprints delivered within the overlap window below it with their occurrence counts (so a re-read
 * drops what was delivered and ships what was not), the cumulative log-derived counts, and the
 * sequence number of the last journal record it includes. This module is the model and its file
 * format; `journal.ts` keeps it on disk.
 */
import { z } from "zod";
import type { LogStream } from "../api/schemas.js";
import { OverlapWindow } from "./overlapWindow.js";

/** The snapshot's format; version 1 (no `seq`) is still read. */
export const CHECKPOINT_VERSION = 2;

const SnapshotSchema = z.strictObject({
  version: z.union([z.literal(1), z.literal(2)]),
  siteId: z.number().int().min(0),
  stream: z.enum(["php", "server", "activity"]),
  /** Entries older than this are never shipped (logs.startFrom at first start). */
  floorMs: z.number(),
  /** Time of the newest delivered entry (ms); equals floorMs before anything was delivered. */
  highWaterMs: z.number(),
  /** Last journal record included (version 2). */
  seq: z.number().int().min(0).optional(),
  /** fingerprint → [occurrences delivered, entry time ms], entries within the overlap window. */
  recent: z.record(z.string(), z.tuple([z.number().int().min(1), z.number()])),
  /** Cumulative log-derived counts by counter key. */
  counts: z.record(z.string(), z.number().min(0)),
  updatedAt: z.string(),
});

export interface Checkpoint {
  siteId: number;
  stream: LogStream;
  floorMs: number;
  highWaterMs: number;
  seq: number;
  /**
   * Fingerprints delivered within the overlap window, with entry time (ms) and occurrences, in delivery
   * order, so the window is pruned from its oldest end.
   */
  recent: OverlapWindow;
  counts: Record<string, number>;
}

/** How many occurrences of `fp` were delivered (0 when it is not in the window). */
export function deliveredCount(cp: Checkpoint, fp: string): number {
  return cp.recent.count(fp);
}

export class CorruptCheckpointError extends Error {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(
      `checkpoint ${file} is unreadable (${reason}); this stream is stopped so nothing is shipped twice or skipped. ` +
        `To reset it, stop the exporter, delete the file (and its .journal), set logs.startFrom to where shipping ` +
        `should resume (for example -1h or a timestamp), and start again.`,
    );
    this.name = "CorruptCheckpointError";
  }
}

/**
 * The counts of every checkpoint that has none yet, shared (most streams of a large account never
 * count anything); frozen, so a write that forgets to give the checkpoint its own object throws.
 */
const NO_COUNTS: Record<string, number> = Object.freeze({});

/**
 * A checkpoint's own counts: an object without a prototype, which V8 keeps as a dictionary. Keys come
 * in whatever order a stream first counts them, and a plain object gets a hidden class for every
 * order: at 5,000 sites, tens of thousands of them, 6 MB that only grew.
 */
function ownCounts(): Record<string, number> {
  return Object.create(null) as Record<string, number>;
}

/** `counts` as the checkpoint's own, or the shared empty counts when it holds none. */
function countsOrNone(counts: Record<string, number>): Record<string, number> {
  for (const _ in counts) return Object.assign(ownCounts(), counts);
  return NO_COUNTS;
}

export function newCheckpoint(siteId: number, stream: LogStream, floorMs: number): Checkpoint {
  return {
    siteId,
    stream,
    floorMs,
    highWaterMs: floorMs,
    seq: 0,
    recent: new OverlapWindow(),
    counts: NO_COUNTS,
  };
}

/** One delivered record as the checkpoint sees it. */
export interface DeliveredRecord {
  fingerprint: string;
  /** 0-based index among identical entries. */
  occurrence: number;
  timeMs: number;
  /** A log-derived counter key this record adds one to (others come as `counts`, see deltaFor). */
  countKey?: string;
}

/** What one export adds to the checkpoint: the journal's unit. */
export interface CheckpointDelta {
  seq: number;
  highWaterMs: number;
  /** [fingerprint, occurrences delivered, entry time ms] */
  add: Array<[string, number, number]>;
  /** Counter increments. */
  counts: Record<string, number>;
}

/**
 * How long past the high-water mark a late entry's fingerprint is kept (see deltaFor): longer than a
 * read can meet it again among the entries indexed when it was, whatever its own time.
 */
export const LATE_KEPT_MS = 10 * 60_000;

/**
 * The delta that delivering `records` makes, with `counts` (counter increments by key) added to the
 * counters. An entry stamped after `highWaterLimitMs` (the read's
 * time plus a tolerance: clock skew, a bad record) is shipped and remembered but does not move the
 * high-water mark, or every later entry would fall below the window and be skipped. A late entry (older
 * than the mark) is remembered as if stamped LATE_KEPT_MS after the mark: it was indexed among entries
 * of about the mark's time, and reads meet it again until those leave their window, so its own time
 * would let its fingerprint go (and it be shipped again) too soon.
 */
export function deltaFor(
  cp: Checkpoint,
  seq: number,
  records: readonly DeliveredRecord[],
  highWaterLimitMs: number,
  counts: Record<string, number> = {},
): CheckpointDelta {
  let highWater = cp.highWaterMs;
  const add = new Map<string, [string, number, number]>();
  for (const r of records) {
    if (r.timeMs > highWater && r.timeMs <= highWaterLimitMs) highWater = r.timeMs;
    const known = Math.max(deliveredCount(cp, r.fingerprint), add.get(r.fingerprint)?.[1] ?? 0);
    const keptAs = r.timeMs >= cp.highWaterMs ? r.timeMs : cp.highWaterMs + LATE_KEPT_MS;
    add.set(r.fingerprint, [r.fingerprint, Math.max(known, r.occurrence + 1), keptAs]);
    if (r.countKey !== undefined) counts[r.countKey] = (counts[r.countKey] ?? 0) + 1;
  }
  return { seq, highWaterMs: highWater, add: [...add.values()], counts };
}

/** Apply a delta in place. */
export function applyDelta(cp: Checkpoint, delta: CheckpointDelta): void {
  if (delta.highWaterMs > cp.highWaterMs) cp.highWaterMs = delta.highWaterMs;
  for (const [fp, n, t] of delta.add) cp.recent.deliver(fp, n, t);
  for (const [key, inc] of Object.entries(delta.counts)) {
    if (cp.counts === NO_COUNTS) cp.counts = ownCounts();
    cp.counts[key] = (cp.counts[key] ?? 0) + inc;
  }
  cp.seq = delta.seq;
}

/**
 * Forget fingerprints that fell out of the overlap window, from the oldest end (delivery order). A
 * late entry delivered after newer ones is kept a little longer, which only widens the dedupe. An
 * entry stamped ahead of the high-water mark (from the future) stays until the mark passes it: it is
 * read again until then, and must be recognised.
 */
export function prune(cp: Checkpoint, overlapMs: number): void {
  cp.recent.prune(cp.highWaterMs - overlapMs, cp.highWaterMs);
}

/** The snapshot file's text. */
export function serializeSnapshot(cp: Checkpoint): string {
  const parts: string[] = [];
  cp.recent.forEach((fp, n, t) => parts.push(`${JSON.stringify(fp)}:[${n},${t}]`));
  const head = JSON.stringify({
    version: CHECKPOINT_VERSION,
    siteId: cp.siteId,
    stream: cp.stream,
    floorMs: cp.floorMs,
    highWaterMs: cp.highWaterMs,
    seq: cp.seq,
  }).slice(0, -1);
  return `${head},"recent":{${parts.join(",")}},"counts":${JSON.stringify(cp.counts)},"updatedAt":${JSON.stringify(new Date().toISOString())}}`;
}

/** A snapshot file's checkpoint; throws CorruptCheckpointError when it cannot be trusted. */
export function parseSnapshot(text: string, file: string, siteId: number, stream: LogStream): Checkpoint {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new CorruptCheckpointError(file, "not valid JSON");
  }
  const version = (raw as { version?: unknown } | null)?.version;
  if (typeof raw === "object" && raw !== null && version !== 1 && version !== 2) {
    throw new CorruptCheckpointError(file, `unknown version ${JSON.stringify(version)}`);
  }
  const parsed = SnapshotSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new CorruptCheckpointError(
      file,
      `${issue?.path.join(".") || "content"}: ${issue?.message ?? "invalid"}`,
    );
  }
  const data = parsed.data;
  if (data.siteId !== siteId || data.stream !== stream) {
    throw new CorruptCheckpointError(file, "it belongs to another site or stream");
  }
  // Oldest first, so the window prunes from its start.
  const entries = Object.entries(data.recent).sort((a, b) => a[1][1] - b[1][1]);
  const recent = new OverlapWindow();
  for (const [fp, [n, t]] of entries) recent.deliver(fp, n, t);
  return {
    siteId,
    stream,
    floorMs: data.floorMs,
    highWaterMs: data.highWaterMs,
    seq: data.seq ?? 0,
    recent,
    counts: countsOrNone(data.counts),
  };
}
