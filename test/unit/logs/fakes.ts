/**
 * Test doubles for the log tailer: a scripted platform that serves one site's log stream through
 * scrolls (snapshot or growing cursor, newest-first or oldest-first, like the platform and the
 * simulator: the scroll id stays the same and an empty page marks its end), a sink that records what
 * it was sent and answers as scripted, and a tailer wired to both on a temporary directory.
 */
import pino from "pino";
import type { LogEntry, LogStream } from "../../../src/api/schemas.js";
import type { LogPage, RequestOptions } from "../../../src/api/types.js";
import { ApiResponseTooLargeError } from "../../../src/api/errors.js";
import { checkedRecords } from "../../../src/api/logRecords.js";
import { fingerprint } from "../../../src/logs/entry.js";
import { CheckpointStore, type StreamCheckpoint } from "../../../src/logs/journal.js";
import type { OutgoingRecord } from "../../../src/logs/otlp/encode.js";
import type { ExportOutcome } from "../../../src/logs/otlp/outcome.js";
import type { Batch } from "../../../src/logs/otlp/batch.js";
import type { ProtoWriter } from "../../../src/logs/otlp/protoWriter.js";
import type { LogSink } from "../../../src/logs/otlp/sink.js";
import type { PendingRecord } from "../../../src/logs/pending.js";
import { CollectorHealth, StreamShipper } from "../../../src/logs/shipper.js";
import { NumberedSource, ScrollSource } from "../../../src/logs/read/sources.js";
import { BufferBudget } from "../../../src/logs/spool.js";
import {
  type SiteIdentity,
  type TailedParts,
  Tailer,
  type TailerEvents,
  type TailerOptions,
} from "../../../src/logs/tailer.js";
import type { PageSource } from "../../../src/logs/read/types.js";
import { systemClock } from "../../../src/util/time.js";

export const silent = pino({ level: "silent" });

interface Scroll {
  snapshot: LogEntry[];
  pos: number;
  cursor: boolean;
  /** Pages served since the scroll opened or last looped back. */
  served: number;
  /** The page just served, to serve again (see servedTwice). */
  again?: LogEntry[];
}

/** The entries in an order that only depends on `seed` and their number. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let x = seed * 2654435761;
  for (let i = out.length - 1; i > 0; i--) {
    x = (x * 1664525 + 1013904223) >>> 0;
    const j = x % (i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
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
  /** Whether each page request said most of its records would be new (the client then decodes it whole). */
  readonly mostlyNew: boolean[] = [];
  /** 1-based request numbers (counted over all requests) that fail with a 5xx. */
  readonly failOn = new Set<number>();
  /** Raw records per page that did not fit the schema (counted as rejected by the client). */
  rejectedPerPage = 0;
  /** Every record of every page fails validation (all counted as rejected; no entries). */
  allRejected = false;
  /** A page holding an entry this picks is answered over api.maxResponseSize (the read never sees it). */
  tooLarge: (entry: LogEntry) => boolean = () => false;
  /** Entries this picks have a time but do not fit the schema (built as undefined, reported by the read). */
  unfit: (entry: LogEntry) => boolean = () => false;
  /** Pages come without a scroll_id (a platform whose paging broke). */
  dropScrollId = false;
  /** After this many pages a scroll starts again from its first page (0: never). */
  loopAfterPages = 0;
  /** Pages (1-based, per scroll) answered a second time by the request after theirs. */
  readonly servedTwice = new Set<number>();
  /** Each page's entries in a shuffled order (the same shuffle for the same page), or a whole scroll's. */
  shuffle: false | "page" | "scroll" = false;
  private readonly scrolls = new Map<string, Scroll>();
  private counter = 0;

  append(...entries: LogEntry[]): void {
    this.log.push(...entries);
  }

  readonly page = (scrollId: string | null, opts?: RequestOptions): Promise<LogPage<LogEntry>> => {
    this.requests.push(scrollId);
    this.mostlyNew.push(opts?.recordsMostlyNew === true);
    if (this.failOn.has(this.requests.length)) {
      return Promise.reject(new Error("HTTP 503 from GET /sites/1/logs/server"));
    }
    let id = scrollId;
    let s: Scroll | undefined;
    if (id === null) {
      id = `scroll-${++this.counter}`;
      const cursor = this.mode === "cursor" && this.order === "oldest-first";
      s = {
        snapshot:
          this.shuffle === "scroll"
            ? shuffled(this.log, this.counter)
            : this.order === "newest-first"
              ? [...this.log].reverse()
              : [...this.log],
        pos: 0,
        cursor,
        served: 0,
      };
      this.scrolls.set(id, s);
    } else {
      s = this.scrolls.get(id);
      if (!s) return Promise.reject(new Error("HTTP 404: The scroll_id has expired or is invalid."));
    }
    // A growing cursor sees what was appended since it opened.
    const source = s.cursor ? this.log : s.snapshot;
    if (this.loopAfterPages > 0 && s.served === this.loopAfterPages) s.pos = s.served = 0;
    let items = s.again ?? source.slice(s.pos, s.pos + this.pageSize);
    if (s.again) s.again = undefined;
    else {
      s.pos += items.length;
      s.served += 1;
      if (this.servedTwice.has(s.served)) s.again = items;
      if (this.shuffle === "page") items = shuffled(items, s.served);
    }
    if (items.some(this.tooLarge)) {
      const where = "GET https://api.example/v1/sites/1/logs/server";
      return Promise.reject(new ApiResponseTooLargeError("/sites/{id}/logs/server", 32 * 1024 ** 2, where));
    }
    if (this.allRejected) {
      return Promise.resolve({
        records: checkedRecords<LogEntry>([]),
        rejected: items.length,
        rawCount: items.length,
        totalResults: null,
        scrollId: id,
      });
    }
    const rejected = items.length > 0 ? this.rejectedPerPage : 0;
    const checked = checkedRecords(items);
    const fit = (i: number) => (items[i] && this.unfit(items[i]) ? undefined : checked.record(i));
    return Promise.resolve({
      records: { ...checked, record: fit, quietRecord: fit },
      rejected,
      rawCount: items.length + rejected,
      totalResults: source.length,
      scrollId: this.dropScrollId ? null : id,
    });
  };

  /** Forget every scroll (as the platform does after its idle expiry). */
  expireScrolls(): void {
    this.scrolls.clear();
  }
}

/** A sink that keeps what it is sent and answers with `answer` (default: accepted). */
export class MemorySink implements LogSink {
  readonly sent: OutgoingRecord[][] = [];
  answer: (records: readonly OutgoingRecord[], attempt: number) => ExportOutcome | Promise<ExportOutcome> =
    () => ({
      kind: "accepted",
      rejected: 0,
    });
  attempts = 0;
  /** Records accepted, in order. */
  readonly accepted: OutgoingRecord[] = [];

  encode(w: ProtoWriter, record: OutgoingRecord): void {
    w.raw(Buffer.from(`${JSON.stringify(record)}\n`, "utf8"));
  }
  async send(batch: Batch): Promise<ExportOutcome> {
    this.attempts += 1;
    const records = batch
      .concat()
      .toString("utf8")
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as OutgoingRecord);
    this.sent.push(records);
    const outcome = await this.answer(records, this.attempts);
    if (outcome.kind === "accepted") this.accepted.push(...records);
    return outcome;
  }
  async shutdown(): Promise<void> {}

  /** Accepted request paths (web-server entries), in order. */
  paths(): string[] {
    return this.accepted.map((r) => String(r.attributes["url.path"] ?? r.body));
  }
}

export class RecordingEvents implements TailerEvents {
  taken = 0;
  dedup = 0;
  malformedCount = 0;
  futureCount = 0;
  lateCount = 0;
  readonly gaps: Array<{ fromMs: number; toMs: number }> = [];
  readonly checkpointErrors: Error[] = [];
  readonly readsToEnd: number[] = [];
  readonly freshStarts: number[] = [];
  readonly pagingProblems: string[] = [];
  pagingProblem(problem: string): void {
    this.pagingProblems.push(problem);
  }
  recordsTaken(n: number): void {
    this.taken += n;
  }
  deduplicated(n: number): void {
    this.dedup += n;
  }
  malformed(n: number): void {
    this.malformedCount += n;
  }
  future(n: number): void {
    this.futureCount += n;
  }
  late(n: number): void {
    this.lateCount += n;
  }
  gap(fromMs: number, toMs: number): void {
    this.gaps.push({ fromMs, toMs });
  }
  checkpointError(err: Error): void {
    this.checkpointErrors.push(err);
  }
  readToEnd(atMs: number): void {
    this.readsToEnd.push(atMs);
  }
  startedFresh(fromMs: number): void {
    this.freshStarts.push(fromMs);
  }
}

/** A tailer given its parts one by one (in the exporter, the stream's own object gives them). */
export class PartsTailer extends Tailer {
  constructor(
    readonly site: SiteIdentity,
    readonly stream: LogStream,
    protected readonly source: PageSource,
    protected readonly checkpoints: CheckpointStore,
    private readonly given: TailedParts,
    readonly events: TailerEvents,
    readonly opts: TailerOptions,
  ) {
    super();
  }
  get encoder() {
    return this.given.encoder;
  }
  get claim() {
    return this.given.claim;
  }
  shipperFor(cp: StreamCheckpoint): StreamShipper {
    return this.given.shipperFor(cp);
  }
}

export interface TailerRig {
  tailer: Tailer;
  api: FakeLogApi;
  sink: MemorySink;
  events: RecordingEvents;
  health: CollectorHealth;
  store: CheckpointStore;
  rejected: Array<{ count: number; reason: string }>;
  /** Checkpoints after each commit. */
  commits: number;
  /** Records the collector took, as the commits reported them. */
  delivered: number;
}

/** A record as the tests look at it: its path (or message) and its uid. */
function outgoing(r: PendingRecord): OutgoingRecord {
  const entry = r.entry as { request_url?: string; message?: string };
  return {
    timeMs: r.timeMs,
    observedMs: Date.now(),
    severityNumber: 9,
    severityText: "INFO",
    body: String(entry.request_url ?? entry.message),
    attributes: { "url.path": String(entry.request_url ?? ""), uid: `${r.fingerprint}-${r.occurrence}` },
  };
}

export function makeTailer(
  dir: string,
  opts: Partial<TailerOptions> & {
    api?: FakeLogApi;
    sink?: MemorySink;
    store?: CheckpointStore;
    stream?: LogStream;
    maxRecords?: number;
  } = {},
): TailerRig {
  const api = opts.api ?? new FakeLogApi();
  const sink = opts.sink ?? new MemorySink();
  const events = new RecordingEvents();
  const health = new CollectorHealth();
  const store = opts.store ?? new CheckpointStore(`${dir}/checkpoints`);
  const rig: TailerRig = {
    tailer: undefined as unknown as Tailer,
    api,
    sink,
    events,
    health,
    store,
    rejected: [],
    commits: 0,
    delivered: 0,
  };
  const stop = new AbortController();
  const shipper = (cp: StreamCheckpoint) =>
    new StreamShipper(
      sink,
      cp,
      health,
      {
        delivered: (count) => {
          rig.commits += 1;
          rig.delivered += count;
        },
        rejected: (count, reason) => void rig.rejected.push({ count, reason }),
        retrying: () => undefined,
      },
      {
        maxRecords: opts.maxRecords ?? 2000,
        maxBytes: 1024 * 1024,
        depth: 2,
        backoff: { baseMs: 1, capMs: 5 },
        clock: systemClock,
      },
      stop.signal,
    );
  const stream = opts.stream ?? "server";
  rig.tailer = new PartsTailer(
    { id: 1, name: "shop" },
    stream,
    stream === "activity"
      ? new NumberedSource(() => Promise.reject(new Error("no activity")), 1)
      : new ScrollSource((_site, scrollId, opts) => api.page(scrollId, opts), 1),
    store,
    { shipperFor: shipper, encoder: { encode: (w, r) => sink.encode(w, outgoing(r)) }, claim: undefined },
    events,
    {
      overlapMs: 120_000,
      startFromMs: () => 0,
      maxPagesPerRead: 5000,
      spoolDir: `${dir}/spool`,
      bufferBudget: new BufferBudget(16 * 1024 * 1024),
      fingerprint: (e) => fingerprint(e),
      clock: systemClock,
      collectorDown: () => health.down,
      ...opts,
    },
  );
  return rig;
}
