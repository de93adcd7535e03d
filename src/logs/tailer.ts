/**
 * One tailer per (site, stream). Each cycle opens a fresh scroll, pages through
 * it (stopping early when the order is newest-first and the checkpoint minus
 * the overlap is passed), drops what was already delivered, ships one page per
 * export oldest-first and advances the checkpoint only after the collector
 * acknowledged. A failed page request abandons the cycle: the next one starts
 * again from the checkpoint and the dedupe absorbs the replay.
 */
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "pino";
import type { LogEntry, ScrollStream, PhpLogEntry, ServerLogEntry } from "../api/schemas.js";
import type { SitehostApi } from "../api/types.js";
import {
  CorruptCheckpointError,
  type Checkpoint,
  type CheckpointStore,
  newCheckpoint,
  type PreparedCheckpoint,
  remember,
} from "./checkpoint.js";
import { entryTimeMs, fingerprint } from "./entry.js";

export const RETENTION_MS = 7 * 86_400_000;
const MAX_EXPORT_RECORDS = 200;

export interface PendingRecord {
  entry: LogEntry;
  timeMs: number;
  fingerprint: string;
  /** Index of this occurrence among identical entries; part of log.record.uid. */
  occurrence: number;
}

export interface TailerHooks {
  /** Ship one batch; resolves only once acknowledged (or immediately when shipping is off). */
  ship(
    site: SiteIdentity,
    stream: ScrollStream,
    records: PendingRecord[],
    signal: AbortSignal,
  ): Promise<void>;
  /** After the checkpoint advanced (counts included): metrics and log-derived counters. */
  delivered(site: SiteIdentity, stream: ScrollStream, records: PendingRecord[], checkpoint: Checkpoint): void;
  deduplicated(stream: ScrollStream, n: number): void;
  malformed(stream: ScrollStream, n: number): void;
  gap(site: SiteIdentity, stream: ScrollStream, fromMs: number, toMs: number): void;
  checkpointError(site: SiteIdentity, stream: ScrollStream, err: CorruptCheckpointError): void;
  cycleFailed(site: SiteIdentity, stream: ScrollStream, err: unknown): void;
  /** True while the collector refuses exports: tailers stop fetching. */
  collectorDown(): boolean;
}

export interface SiteIdentity {
  id: number;
  name: string;
}

export interface TailerOptions {
  overlapMs: number;
  /** Resolved logs.startFrom, used only when there is no checkpoint yet. */
  startFromMs: () => number;
  /** Page requests per cycle at most (a growing cursor could otherwise never end). */
  maxPagesPerCycle: number;
  /** New entries kept in memory per cycle before pages spill to disk. */
  maxBufferedEntries: number;
  spoolDir: string;
  /** Key of the log-derived counter an entry counts into (kept in the checkpoint, so counts survive restarts). */
  countKey?: (entry: LogEntry) => string;
}

/** Buffer of kept pages for newest-first scrolls; the oldest part is shipped first, newer pages spill to disk. */
class CycleBuffer {
  private readonly pages: Array<PendingRecord[] | string> = [];
  private inMemory = 0;
  private spilled = 0;

  constructor(
    private readonly dir: string,
    private readonly prefix: string,
    private readonly limit: number,
  ) {}

  get size(): number {
    return this.pages.length;
  }

  async add(page: PendingRecord[]): Promise<void> {
    if (page.length === 0) return;
    this.pages.push(page);
    this.inMemory += page.length;
    // The earliest-added pages are the newest entries: shipped last, so they spill first.
    for (let i = 0; this.inMemory > this.limit && i < this.pages.length - 1; i++) {
      const p = this.pages[i];
      if (typeof p === "string" || p === undefined) continue;
      await mkdir(this.dir, { recursive: true });
      const file = join(this.dir, `${this.prefix}-${this.spilled++}.json`);
      await writeFile(file, JSON.stringify(p));
      this.pages[i] = file;
      this.inMemory -= p.length;
    }
  }

  /** Pages from the oldest entries to the newest. */
  async *oldestFirst(): AsyncGenerator<PendingRecord[]> {
    for (let i = this.pages.length - 1; i >= 0; i--) {
      const p = this.pages[i] as PendingRecord[] | string;
      const page = typeof p === "string" ? (JSON.parse(await readFile(p, "utf8")) as PendingRecord[]) : p;
      if (typeof p === "string") await rm(p, { force: true });
      this.pages[i] = [];
      yield [...page].reverse();
    }
  }

  async discard(): Promise<void> {
    for (const p of this.pages) if (typeof p === "string") await rm(p, { force: true });
    this.pages.length = 0;
  }
}

type Order = "unknown" | "newest-first" | "oldest-first";

/** Identical entries share their time, so occurrence counts only need the entries near the current one. */
const OCCURRENCE_WINDOW_MS = 60_000;
const OCCURRENCE_PRUNE_FLOOR = 50_000;

/**
 * Occurrences of each fingerprint within one pass over a scroll: identical lines written in the same
 * second are real and each is delivered. Entries far from the current time are pruned, which keeps the
 * map small on a long read without splitting a run of identical entries.
 */
class OccurrenceCounter {
  private readonly seen = new Map<string, { n: number; t: number }>();
  private pruneAt = OCCURRENCE_PRUNE_FLOOR;

  /** 1 for the first occurrence of `fp`, 2 for the second, ... */
  next(fp: string, t: number): number {
    const known = this.seen.get(fp);
    if (known) return ++known.n;
    if (this.seen.size >= this.pruneAt) {
      for (const [k, v] of this.seen) if (Math.abs(v.t - t) > OCCURRENCE_WINDOW_MS) this.seen.delete(k);
      this.pruneAt = Math.max(OCCURRENCE_PRUNE_FLOOR, 2 * this.seen.size);
    }
    this.seen.set(fp, { n: 1, t });
    return 1;
  }

  clear(): void {
    this.seen.clear();
  }
}

/**
 * Advance the checkpoint (in place) past `batch`: high-water mark, the overlap window's fingerprints,
 * the log-derived counts. Done before the export, so the file can be prepared; if the export fails the
 * tailer drops this in-memory state and reloads the committed checkpoint.
 */
export function advanceCheckpoint(
  cp: Checkpoint,
  batch: readonly PendingRecord[],
  overlapMs: number,
  countKey?: (entry: LogEntry) => string,
): void {
  for (const r of batch) {
    if (r.timeMs > cp.highWaterMs) cp.highWaterMs = r.timeMs;
    remember(cp, r.fingerprint, Math.max(cp.recent.get(r.fingerprint)?.n ?? 0, r.occurrence + 1), r.timeMs);
    if (countKey) {
      const key = countKey(r.entry);
      cp.counts[key] = (cp.counts[key] ?? 0) + 1;
    }
  }
  // Forget fingerprints that fell out of the overlap window, from the oldest end (delivery order); a
  // late entry delivered after newer ones is kept a little longer, which only widens the dedupe.
  const cutoff = cp.highWaterMs - overlapMs;
  for (const [fp, e] of cp.recent) {
    if (e.t >= cutoff) break;
    cp.recent.delete(fp);
  }
}

export class Tailer {
  checkpoint: Checkpoint | undefined;
  failed: CorruptCheckpointError | undefined;
  private loaded = false;
  /**
   * Scroll continued next cycle: a cursor read to its end (`atEnd`: it may grow), or an oldest-first
   * scroll cut at the page cap (everything read from it was shipped, so it resumes where it stopped).
   */
  private held: { scrollId: string; atEnd: boolean } | null = null;
  /** Whether a cursor continued from its end ever returned new entries (a growing cursor, not a snapshot). */
  private cursorGrows = false;

  constructor(
    readonly site: SiteIdentity,
    readonly stream: ScrollStream,
    private readonly api: SitehostApi,
    private readonly checkpoints: CheckpointStore,
    private readonly hooks: TailerHooks,
    private readonly opts: TailerOptions,
    private readonly logger: Logger,
  ) {}

  /** Load (or create) the checkpoint. A corrupt one stops this stream for good, loudly. */
  async prepare(): Promise<boolean> {
    if (this.failed) return false;
    if (this.loaded) return true;
    try {
      const existing = await this.checkpoints.load(this.site.id, this.stream);
      if (existing) {
        this.checkpoint = existing;
      } else {
        // Persist the start point at once: a crash before the first export must not move it.
        this.checkpoint = newCheckpoint(this.site.id, this.stream, this.opts.startFromMs());
        await this.checkpoints.save(this.checkpoint);
      }
      this.loaded = true;
      return true;
    } catch (err) {
      if (err instanceof CorruptCheckpointError) {
        this.failed = err;
        this.hooks.checkpointError(this.site, this.stream, err);
        return false;
      }
      throw err;
    }
  }

  private get current(): Checkpoint {
    return this.checkpoint as Checkpoint;
  }

  /** Entries older than this were delivered (or precede the start point); newer ones are checked by fingerprint. */
  private lowerBound(): number {
    return Math.max(this.current.highWaterMs - this.opts.overlapMs, this.current.floorMs);
  }

  /** One poll cycle. Returns true when it stopped at the page cap (more is waiting). */
  async cycle(signal: AbortSignal): Promise<boolean> {
    if (!(await this.prepare())) return false;
    let lower = this.lowerBound();
    // The checkpoint as it was when the cycle began, for the retention-gap check below.
    const highWaterBefore = this.current.highWaterMs;
    const deliveredBefore = this.current.highWaterMs > this.current.floorMs;
    const buffer = new CycleBuffer(
      this.opts.spoolDir,
      `spool-${this.site.id}-${this.stream}-${Date.now()}`,
      this.opts.maxBufferedEntries,
    );
    let order: Order = "unknown";
    // A held scroll is continued; anything else gets a fresh scroll. The checkpoint stays the
    // durable cursor either way.
    let scrollId: string | null = this.held?.scrollId ?? null;
    const heldAtEnd = this.held?.atEnd ?? false;
    let continuing = scrollId !== null;
    this.held = null;
    let hold: string | null = null;
    let pages = 0;
    let lastTime: number | undefined;
    let oldestSeen = Infinity;
    let reachedLower = false;
    let endOfScroll = false;
    const occurrences = new OccurrenceCounter();
    /** Drop this cycle's unshipped reads and look afresh from the checkpoint (the dedupe absorbs re-reads). */
    const restartFresh = async () => {
      scrollId = null;
      continuing = false;
      order = "unknown";
      lastTime = undefined;
      reachedLower = false;
      occurrences.clear();
      await buffer.discard();
      lower = this.lowerBound();
    };

    try {
      for (;;) {
        if (signal.aborted) return false;
        // Backpressure: while the collector refuses, nothing more is fetched.
        if (this.hooks.collectorDown()) {
          // Everything read so far was shipped: continue this scroll next cycle.
          if (scrollId && buffer.size === 0 && (continuing || order === "oldest-first")) {
            this.held = { scrollId, atEnd: heldAtEnd && pages === 0 };
          }
          return false;
        }
        // Only an oldest-first scroll is cut at the cap (a growing cursor could otherwise never end):
        // what it read is shipped, so it resumes next cycle. A newest-first read must reach the
        // checkpoint before anything is shipped, or the unread middle would be skipped.
        if (pages >= this.opts.maxPagesPerCycle && order === "oldest-first") {
          hold = scrollId;
          break;
        }
        let page;
        try {
          page = await (this.stream === "php" ? this.api.phpLogs : this.api.serverLogs)(
            { id: this.site.id, scrollId },
            { signal, source: "logs" },
          );
        } catch (err) {
          if (!continuing || signal.aborted) throw err;
          // The held scroll expired: start over from the checkpoint with a fresh scroll.
          await restartFresh();
          continue;
        }
        pages += 1;
        if (page.rejected > 0) this.hooks.malformed(this.stream, page.rejected);
        if (page.rawCount === 0) {
          if (continuing && heldAtEnd && !this.cursorGrows) {
            // Nothing new on a held scroll that never grew: it may be a snapshot, so look afresh.
            await restartFresh();
            continue;
          }
          endOfScroll = true;
          if (scrollId && (continuing || order === "oldest-first")) hold = scrollId;
          break;
        }
        if (continuing && heldAtEnd && page.items.length > 0) this.cursorGrows = true;
        const kept: PendingRecord[] = [];
        let pageOldest = Infinity;
        let dedup = 0;
        for (const entry of page.items) {
          const t = entryTimeMs(entry.timestamp);
          if (t === undefined) {
            this.hooks.malformed(this.stream, 1);
            continue;
          }
          if (lastTime !== undefined && order === "unknown" && t !== lastTime) {
            order = t < lastTime ? "newest-first" : "oldest-first";
          }
          lastTime = t;
          pageOldest = Math.min(pageOldest, t);
          oldestSeen = Math.min(oldestSeen, t);
          if (t < lower) {
            reachedLower = true;
            continue;
          }
          const fp = fingerprint(entry);
          const n = occurrences.next(fp, t);
          if (n <= (this.current.recent.get(fp)?.n ?? 0)) {
            dedup += 1;
            continue;
          }
          kept.push({ entry, timeMs: t, fingerprint: fp, occurrence: n - 1 });
        }
        if (dedup > 0) this.hooks.deduplicated(this.stream, dedup);

        if (order === "oldest-first") {
          // Stream: ship what was buffered while the order was unknown, then page by page.
          for await (const older of buffer.oldestFirst())
            await this.shipChunked([...older].reverse(), signal);
          await buffer.discard();
          await this.shipChunked(kept, signal);
        } else {
          await buffer.add(kept);
        }
        scrollId = page.scrollId;
        if (order === "newest-first" && (reachedLower || pageOldest < lower)) break;
        if (!scrollId) {
          endOfScroll = true;
          break;
        }
      }
      // Newest-first (or a single-second scroll): ship the buffered entries oldest-first.
      for await (const chunk of buffer.oldestFirst()) await this.shipChunked(chunk, signal);
      if (hold && order !== "newest-first") this.held = { scrollId: hold, atEnd: endOfScroll };
    } finally {
      await buffer.discard();
    }

    // Retention passed the checkpoint: the oldest entry still available is newer than what we delivered.
    if (
      deliveredBefore &&
      !continuing &&
      endOfScroll &&
      !reachedLower &&
      oldestSeen !== Infinity &&
      oldestSeen > highWaterBefore
    ) {
      if (highWaterBefore < Date.now() - RETENTION_MS + 3_600_000)
        this.hooks.gap(this.site, this.stream, highWaterBefore, oldestSeen);
    }
    return hold !== null && !endOfScroll;
  }

  /**
   * Ship records oldest-first, one export per page. The checkpoint that follows each export is
   * written before the export and put in force by the acknowledgement (see CheckpointStore.prepare).
   */
  private async shipChunked(records: PendingRecord[], signal: AbortSignal): Promise<void> {
    if (records.length === 0) return;
    const sorted = [...records].sort((a, b) => a.timeMs - b.timeMs);
    for (let i = 0; i < sorted.length; i += MAX_EXPORT_RECORDS) {
      const batch = sorted.slice(i, i + MAX_EXPORT_RECORDS);
      advanceCheckpoint(this.current, batch, this.opts.overlapMs, this.opts.countKey);
      let prepared: PreparedCheckpoint | undefined;
      try {
        prepared = await this.checkpoints.prepare(this.current);
        await this.hooks.ship(this.site, this.stream, batch, signal);
      } catch (err) {
        await prepared?.discard();
        // The in-memory checkpoint is ahead of what was acknowledged: reload the committed one.
        this.checkpoint = undefined;
        this.loaded = false;
        throw err;
      }
      // Nothing may run between the acknowledgement and this rename (no await): see checkpoint.ts.
      void prepared.commit();
      this.hooks.delivered(this.site, this.stream, batch, this.current);
    }
  }
}

export function isServerEntry(stream: ScrollStream, _entry: LogEntry): _entry is ServerLogEntry {
  return stream === "server";
}

export function isPhpEntry(stream: ScrollStream, _entry: LogEntry): _entry is PhpLogEntry {
  return stream === "php";
}
