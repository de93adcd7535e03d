/**
 * Simulated PHP and web-server logs: entries are a pure function of (site, stream, second),
 * materialised only when read (logEntries.ts), plus entries appended by tests. An optional model of
 * indexing lateness decides when each entry becomes visible to readers. Scrolls: scrolls.ts.
 */
import {
  healthCheck,
  phpEntry,
  serverEntry,
  type Entry,
  type LogSource,
  type Traffic,
} from "./logEntries.js";
import type { WebFault } from "./options.js";
import { unit } from "./random.js";

export type { LogSource } from "./logEntries.js";

export type SimStream = "php" | "server";
export type { LogOrder, ScrollMode } from "./options.js";

export const LOG_PAGE_SIZE = 200;
export const RETENTION_SECONDS = 7 * 86_400;

interface Appended {
  seq: number;
  entry: Entry;
  /** Epoch ms from which readers see it. */
  visibleAt: number;
}

/**
 * Indexing lateness: entries of second s are visible from s + delaySeconds; a `fraction` of them
 * later still, by 1..maxSeconds more. All zero: everything of a second is visible at its start.
 */
export interface Lateness {
  delaySeconds: number;
  fraction: number;
  maxSeconds: number;
}

export class SimLogs {
  private readonly appended = new Map<string, Map<number, Appended[]>>();
  private seq = 0;

  constructor(
    /** Generated entries per second per site and stream. */
    public ratePerSecond: number,
    /** Read on every use, so the fault knobs take effect at once. */
    private readonly lateness: () => Lateness = () => ({ delaySeconds: 0, fraction: 0, maxSeconds: 0 }),
    private readonly webFaults: () => readonly WebFault[] = () => [],
  ) {}

  /** The web fault of a site at a second (the last one listed that covers it). */
  private faultAt(siteId: number, second: number): WebFault | undefined {
    let found: WebFault | undefined;
    for (const f of this.webFaults()) {
      if (f.siteId !== siteId) continue;
      if ((f.fromSecond ?? -Infinity) <= second && second <= (f.toSecond ?? Infinity)) found = f;
    }
    return found;
  }

  /**
   * Add an entry at `second`, visible from `visibleAtMs`; by default from the moment it is appended
   * (`appendedAtMs`) or, with an indexing delay, from second + delay, whichever is later.
   */
  append(
    siteId: number,
    stream: SimStream,
    entry: Entry,
    second: number,
    appendedAtMs: number,
    visibleAtMs?: number,
  ): void {
    const key = `${siteId}/${stream}`;
    let bySecond = this.appended.get(key);
    if (!bySecond) this.appended.set(key, (bySecond = new Map()));
    const list = bySecond.get(second) ?? [];
    const visibleAt = visibleAtMs ?? Math.max(appendedAtMs, (second + this.lateness().delaySeconds) * 1000);
    list.push({ seq: ++this.seq, entry, visibleAt });
    bySecond.set(second, list);
  }

  get currentSeq(): number {
    return this.seq;
  }

  appendedCount(siteId: number, stream: SimStream, from: number, to: number): number {
    let n = 0;
    for (const [second, list] of this.appended.get(`${siteId}/${stream}`) ?? []) {
      if (second >= from && second <= to) n += list.length;
    }
    return n;
  }

  /**
   * Entries of one second as a reader sees them at `viewMs`: the generated ones (fixed forever) that
   * are visible by then, then the appended ones up to `maxSeq` that are visible by then.
   */
  entriesAt(
    src: LogSource,
    stream: SimStream,
    second: number,
    maxSeq: number,
    viewMs = Number.POSITIVE_INFINITY,
  ): Entry[] {
    return this.visibleAt(src, stream, second, maxSeq, viewMs).map((v) => v.entry);
  }

  /**
   * The entries that became visible during `second` (as a reader at `viewMs` sees them), newest
   * stamped first: those of the seconds the indexing delay and lateness reach back to.
   */
  entriesIndexedAt(
    src: LogSource,
    stream: SimStream,
    second: number,
    maxSeq: number,
    viewMs: number,
  ): Entry[] {
    const late = this.lateness();
    const out: Array<{ entry: Entry; at: number }> = [];
    const inSecond = (visibleAt: number) => Math.floor(visibleAt / 1000) === second;
    // Generated entries (no appended one: seq 0) of the seconds the delay and lateness reach back to.
    for (let s = second - late.delaySeconds; s >= second - late.delaySeconds - late.maxSeconds; s--) {
      for (const v of this.visibleAt(src, stream, s, 0, viewMs))
        if (inSecond(v.visibleAt)) out.push({ entry: v.entry, at: s });
    }
    // Appended entries may have been made visible any time after their second.
    for (const [s, list] of this.appended.get(`${src.siteId}/${stream}`) ?? [])
      for (const a of list)
        if (a.seq <= maxSeq && a.visibleAt <= viewMs && inSecond(a.visibleAt))
          out.push({ entry: a.entry, at: s });
    return out.sort((a, b) => b.at - a.at).map((o) => o.entry);
  }

  /** Entries of one second visible by `viewMs`, each with the moment it became visible. */
  private visibleAt(
    src: LogSource,
    stream: SimStream,
    second: number,
    maxSeq: number,
    viewMs: number,
  ): Array<{ entry: Entry; visibleAt: number }> {
    const out: Array<{ entry: Entry; visibleAt: number }> = [];
    const fault = stream === "server" ? this.faultAt(src.siteId, second) : undefined;
    const rate = fault?.rate ?? this.ratePerSecond;
    const traffic: Traffic | undefined = fault && {
      ...(fault.slow ? { slow: true } : {}),
      ...(fault.errorRate !== undefined ? { errorRate: fault.errorRate } : {}),
    };
    const streamNo = stream === "php" ? 1 : 2;
    const base = Math.floor(rate);
    const count = base + (unit(src.seed, streamNo, second) < rate - base ? 1 : 0);
    const late = this.lateness();
    // k numbers the second's generated entries (health checks after the others) for their lateness.
    const add = (k: number, entry: () => Entry) => {
      const at = visibleAtOf(src.seed, streamNo, second, k, late);
      if (at <= viewMs) out.push({ entry: entry(), visibleAt: at });
    };
    for (let k = 0; k < count; k++)
      add(k, () => (stream === "server" ? serverEntry(src, second, k, traffic) : phpEntry(src, second, k)));
    // Health checks: twice in the same second, byte-identical, once a minute.
    if (stream === "server" && rate > 0 && second % 60 === src.seed % 60) {
      const check = healthCheck(src, second);
      add(count, () => check);
      add(count + 1, () => ({ ...check }));
    }
    const extra = this.appended.get(`${src.siteId}/${stream}`)?.get(second);
    if (extra)
      for (const a of extra)
        if (a.seq <= maxSeq && a.visibleAt <= viewMs) out.push({ entry: a.entry, visibleAt: a.visibleAt });
    return out;
  }

  /**
   * total_results of a scroll over [from, to]: the expected number of generated entries (the rate is a
   * mean), plus the exact number of health checks and appended entries. Approximate, as a search
   * engine's hit count is; filters are not taken into account.
   */
  estimateTotal(src: LogSource, stream: SimStream, from: number, to: number): number {
    let checks = 0;
    if (stream === "server" && this.ratePerSecond > 0 && to >= from) {
      // Seconds s in [from, to] with s % 60 === seed % 60, two entries each.
      const phase = src.seed % 60;
      const first = from + ((((phase - from) % 60) + 60) % 60);
      checks = first > to ? 0 : 2 * (Math.floor((to - first) / 60) + 1);
    }
    return (
      Math.round(this.ratePerSecond * (to - from + 1)) +
      checks +
      this.appendedCount(src.siteId, stream, from, to)
    );
  }
}

/** When the k-th generated entry of a second becomes visible, epoch ms. */
export function visibleAtOf(
  seed: number,
  streamNo: number,
  second: number,
  k: number,
  late: Lateness,
): number {
  let extra = 0;
  if (late.fraction > 0 && late.maxSeconds > 0 && unit(seed, streamNo, second, k, 0x1a7e) < late.fraction)
    extra = 1 + Math.floor(unit(seed, streamNo, second, k, 0x1a7f) * late.maxSeconds);
  return (second + late.delaySeconds + Math.min(extra, late.maxSeconds)) * 1000;
}
