/**
 * Test doubles for the log tailer: a scripted platform that serves one site's log stream through
 * scrolls (snapshot or growing cursor, newest-first or oldest-first, like the platform and the
 * simulator: the scroll id stays the same and an empty page marks its end), and a hooks object
 * that records what the tailer shipped and reported.
 */
import pino from "pino";
import type { LogEntry, ScrollStream as LogStream } from "../../../src/api/schemas.js";
import type { LogPage, LogPageRef, RequestOptions, SitehostApi } from "../../../src/api/types.js";
import type { Checkpoint, CorruptCheckpointError } from "../../../src/logs/checkpoint.js";
import type { PendingRecord, SiteIdentity, TailerHooks } from "../../../src/logs/tailer.js";

export const silent = pino({ level: "silent" });

interface Scroll {
  snapshot: LogEntry[];
  pos: number;
  cursor: boolean;
}

export class FakeLogApi {
  /** The stream's entries, oldest first (as written). */
  readonly log: LogEntry[] = [];
  order: "newest-first" | "oldest-first" = "newest-first";
  /** "cursor": an oldest-first scroll that keeps yielding entries appended after it opened. */
  mode: "snapshot" | "cursor" = "snapshot";
  pageSize = 3;
  /** Scroll id of every page request, in order (null = a fresh scroll). */
  readonly requests: Array<string | null> = [];
  /** 1-based request numbers (counted over all requests) that fail with a 5xx. */
  readonly failOn = new Set<number>();
  private readonly scrolls = new Map<string, Scroll>();
  private counter = 0;

  append(...entries: LogEntry[]): void {
    this.log.push(...entries);
  }

  readonly api = {
    logPage: ({ scrollId }: LogPageRef, _opts?: RequestOptions): Promise<LogPage<LogEntry>> => {
      this.requests.push(scrollId);
      if (this.failOn.has(this.requests.length)) {
        return Promise.reject(new Error("HTTP 503 from GET /sites/1/logs/server"));
      }
      let id = scrollId;
      let s: Scroll | undefined;
      if (id === null) {
        id = `scroll-${++this.counter}`;
        const cursor = this.mode === "cursor" && this.order === "oldest-first";
        s = {
          snapshot: this.order === "newest-first" ? [...this.log].reverse() : [...this.log],
          pos: 0,
          cursor,
        };
        this.scrolls.set(id, s);
      } else {
        s = this.scrolls.get(id);
        if (!s) return Promise.reject(new Error("HTTP 404: The scroll_id has expired or is invalid."));
      }
      // A growing cursor sees what was appended since it opened.
      const source = s.cursor ? this.log : s.snapshot;
      const entries = source.slice(s.pos, s.pos + this.pageSize);
      s.pos += entries.length;
      return Promise.resolve({
        items: entries,
        rejected: 0,
        rawCount: entries.length,
        totalResults: source.length,
        scrollId: id,
      });
    },
  };

  asSitehostApi(): SitehostApi {
    const handler: ProxyHandler<object> = {
      get: (_t, prop) => {
        if (prop === "phpLogs" || prop === "serverLogs") return this.api.logPage;
        if (prop === "then") return undefined;
        return () => {
          throw new Error(`the log tailer must not call ${String(prop)}`);
        };
      },
    };
    return new Proxy({}, handler) as SitehostApi;
  }
}

export class RecordingHooks implements TailerHooks {
  readonly batches: PendingRecord[][] = [];
  readonly deliveredCheckpoints: Checkpoint[] = [];
  dedup = 0;
  malformedCount = 0;
  readonly gaps: Array<{ fromMs: number; toMs: number }> = [];
  readonly checkpointErrors: CorruptCheckpointError[] = [];
  /** When set, ship() rejects with this error (the collector refused). */
  refuse: Error | undefined;
  down = false;
  /** Called inside ship(), while the export is "in flight". */
  onShip: (() => void) | undefined;

  get shipped(): PendingRecord[] {
    return this.batches.flat();
  }

  ship(_site: SiteIdentity, _stream: LogStream, records: PendingRecord[]): Promise<void> {
    this.onShip?.();
    if (this.refuse) return Promise.reject(this.refuse);
    this.batches.push([...records]);
    return Promise.resolve();
  }
  delivered(_site: SiteIdentity, _stream: LogStream, _records: PendingRecord[], cp: Checkpoint): void {
    this.deliveredCheckpoints.push(structuredClone(cp));
  }
  deduplicated(_stream: LogStream, n: number): void {
    this.dedup += n;
  }
  malformed(_stream: LogStream, n: number): void {
    this.malformedCount += n;
  }
  gap(_site: SiteIdentity, _stream: LogStream, fromMs: number, toMs: number): void {
    this.gaps.push({ fromMs, toMs });
  }
  checkpointError(_site: SiteIdentity, _stream: LogStream, err: CorruptCheckpointError): void {
    this.checkpointErrors.push(err);
  }
  cycleFailed(): void {}
  collectorDown(): boolean {
    return this.down;
  }
}
