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
import type { LogEntry, LogStream, PhpLogEntry, ServerLogEntry } from "../api/schemas.js";
import type { SitehostApi } from "../api/types.js";
import {
  CorruptCheckpointError,
  type Checkpoint,
  type CheckpointStore,
  newCheckpoint,
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
  ship(site: SiteIdentity, stream: LogStream, records: PendingRecord[], signal: AbortSignal): Promise<void>;
  /** After the checkpoint advanced: metrics and log-derived counters. */
  delivered(site: SiteIdentity, stream: LogStream, records: PendingRecord[], checkpoint: Checkpoint): void;
  deduplicated(stream: LogStream, n: number): void;
  malformed(stream: LogStream, n: number): void;
  gap(site: SiteIdentity, stream: LogStream, fromMs: number, toMs: number): void;
  checkpointError(site: SiteIdentity, stream: LogStream, err: CorruptCheckpointError): void;
  cycleFailed(site: SiteIdentity, stream: LogStream, err: unknown): void;
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

export class Tailer {
  checkpoint: Checkpoint | undefined;
  failed: CorruptCheckpointError | undefined;
  private loaded = false;
  /** Scroll id of a cursor read to its end, continued next cycle. */
  private heldScroll: string | null = null;
  /** Whether a continued scroll ever returned new entries (a growing cursor, not a snapshot). */
  private cursorGrows = false;

  constructor(
    readonly site: SiteIdentity,
    readonly stream: LogStream,
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

  /** One poll cycle. Returns true when it stopped at the page cap (more is waiting). */
  async cycle(signal: AbortSignal): Promise<boolean> {
    if (!(await this.prepare())) return false;
    const cp = this.checkpoint as Checkpoint;
    const lower = Math.max(cp.highWaterMs - this.opts.overlapMs, cp.floorMs);
    // The checkpoint as it was when the cycle began: shipping below advances cp in place, and the
    // retention-gap check compares what this cycle found with what had been delivered before it.
    const highWaterBefore = cp.highWaterMs;
    const deliveredBefore = cp.highWaterMs > cp.floorMs;
    const buffer = new CycleBuffer(
      this.opts.spoolDir,
      `spool-${this.site.id}-${this.stream}-${Date.now()}`,
      this.opts.maxBufferedEntries,
    );
    let order: Order = "unknown";
    // A growing cursor is continued across cycles (it only ever yields entries after the ones already
    // read); anything else gets a fresh scroll. The checkpoint stays the durable cursor either way.
    let scrollId: string | null = this.heldScroll;
    let continuing = scrollId !== null;
    this.heldScroll = null;
    let pages = 0;
    let lastTime: number | undefined;
    let oldestSeen = Infinity;
    let reachedLower = false;
    let endOfScroll = false;
    // Occurrences of identical entries seen in this cycle (identical lines share a time, so this stays small).
    let occurrences = new Map<string, number>();
    let occurrenceAnchor = NaN;

    try {
      for (;;) {
        if (signal.aborted) return false;
        // Backpressure: while the collector refuses, nothing more is fetched.
        if (this.hooks.collectorDown()) {
          // Everything read so far from an oldest-first scroll is shipped: continue it next cycle.
          if (scrollId && (continuing || order === "oldest-first")) this.heldScroll = scrollId;
          return false;
        }
        if (pages >= this.opts.maxPagesPerCycle) break;
        let page;
        try {
          page = await this.api.getLogPage(this.site.id, this.stream, scrollId, { signal });
        } catch (err) {
          if (!continuing || signal.aborted) throw err;
          // The held cursor expired: start over from the checkpoint with a fresh scroll.
          scrollId = null;
          continuing = false;
          continue;
        }
        pages += 1;
        if (page.rejected.length > 0) this.hooks.malformed(this.stream, page.rejected.length);
        if (page.rawCount === 0) {
          if (continuing && !this.cursorGrows) {
            // Nothing new on the held scroll, and it never grew: it may be a snapshot, so look afresh.
            scrollId = null;
            continuing = false;
            continue;
          }
          endOfScroll = true;
          if (scrollId && (continuing || order === "oldest-first")) this.heldScroll = scrollId;
          break;
        }
        if (continuing && page.entries.length > 0) this.cursorGrows = true;
        const kept: PendingRecord[] = [];
        let pageOldest = Infinity;
        let dedup = 0;
        for (const entry of page.entries) {
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
          if (Math.abs(t - occurrenceAnchor) > 1000) {
            occurrences = new Map();
            occurrenceAnchor = t;
          }
          const fp = fingerprint(entry);
          const n = (occurrences.get(fp) ?? 0) + 1;
          occurrences.set(fp, n);
          const delivered = cp.recent[fp]?.[0] ?? 0;
          if (n <= delivered) {
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
      if (!endOfScroll || order === "newest-first") this.heldScroll = null;
      // Newest-first (or a single-second scroll): ship the buffered entries oldest-first.
      for await (const chunk of buffer.oldestFirst()) await this.shipChunked(chunk, signal);
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
    return pages >= this.opts.maxPagesPerCycle && !endOfScroll;
  }

  private async shipChunked(records: PendingRecord[], signal: AbortSignal): Promise<void> {
    if (records.length === 0) return;
    const sorted = [...records].sort((a, b) => a.timeMs - b.timeMs);
    for (let i = 0; i < sorted.length; i += MAX_EXPORT_RECORDS) {
      const batch = sorted.slice(i, i + MAX_EXPORT_RECORDS);
      await this.hooks.ship(this.site, this.stream, batch, signal);
      await this.advance(batch);
    }
  }

  /** Only after an acknowledged export: move the high-water mark and remember the window's fingerprints. */
  private async advance(batch: PendingRecord[]): Promise<void> {
    const cp = this.checkpoint as Checkpoint;
    for (const r of batch) {
      if (r.timeMs > cp.highWaterMs) cp.highWaterMs = r.timeMs;
      const prev = cp.recent[r.fingerprint];
      cp.recent[r.fingerprint] = [Math.max(prev?.[0] ?? 0, r.occurrence + 1), r.timeMs];
    }
    // Forget fingerprints that fell out of the overlap window. Keys keep insertion order, which is
    // delivery order (oldest first), so the scan stops at the first one still inside the window: a
    // late entry delivered after newer ones is kept a little longer, which only widens the dedupe.
    const cutoff = cp.highWaterMs - this.opts.overlapMs;
    for (const fp in cp.recent) {
      if ((cp.recent[fp] as [number, number])[1] >= cutoff) break;
      delete cp.recent[fp];
    }
    this.hooks.delivered(this.site, this.stream, batch, cp);
    await this.checkpoints.save(cp);
  }
}

export function isServerEntry(stream: LogStream, _entry: LogEntry): _entry is ServerLogEntry {
  return stream === "server";
}

export function isPhpEntry(stream: LogStream, _entry: LogEntry): _entry is PhpLogEntry {
  return stream === "php";
}
