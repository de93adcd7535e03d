/**
 * The read path's shared types: what a stream's tailer is given and reports, where a read's pages
 * come from, and what one read of a stream ends with. Modules of the read path import these, never
 * the tailer, so the tailer depends on the read path and not the other way round.
 */
import type { RequestOptions } from "../../api/types.js";
import type { Clock } from "../../util/time.js";
import type { CorruptCheckpointError } from "../checkpoint.js";
import type { StreamEntry } from "../pending.js";
import type { PreparedPage, RecordEncoder } from "../prepared.js";
import type { ReadPace } from "../pace.js";
import type { BufferBudget } from "../spool.js";

export interface ReadLimits {
  /** Pages an oldest-first read fetches before it stops and resumes next time (the page cap). */
  capPages: number;
  /** Pages one read fetches at most, whatever its order (a scroll that never ends). */
  maxPages: number;
  /** Bytes of new records one read holds back at most (a newest-first scroll that never ends). */
  maxHeldBytes: number;
  unusablePages: number;
}

/** A site as the log pipeline names it; a rename is a new identity handed to each part (never mutated). */
export interface SiteIdentity {
  /** 0 for the account's own activity log. */
  readonly id: number;
  readonly name: string;
}

export type ReadOutcome =
  /** New records were shipped; `pace`: what the stream's reads cost lately, to choose the next one's time. */
  | { kind: "found"; shipped: number; pace?: ReadPace }
  /** Nothing new; `pace` once the stream has shipped something (its rate decays with each empty read). */
  | { kind: "empty"; pace?: ReadPace }
  /** Stopped at the page cap with more waiting: read again at once. */
  | { kind: "more"; shipped: number }
  /** The collector is down: read again once it is back. */
  | { kind: "interrupted" }
  /** The checkpoint cannot be trusted: never read again. */
  | { kind: "stopped" };

export interface TailerEvents {
  /** A page's new records were taken (not delivered before): the work the log path does, as read. */
  recordsTaken(n: number): void;
  deduplicated(n: number): void;
  malformed(n: number): void;
  future(n: number): void;
  late(n: number): void;
  /** Entries between these times were not shipped; `skipped`: a page over api.maxResponseSize was given up. */
  gap(fromMs: number, toMs: number, skipped?: "too_large"): void;
  checkpointError(err: CorruptCheckpointError): void;
  /** The stream was read up to its end at `atMs`. */
  readToEnd(atMs: number): void;
  /** The stream had no checkpoint and starts at `fromMs` (logs.startFrom): nothing before is shipped. */
  startedFresh(fromMs: number): void;
  /** A read stopped short of the checkpoint (or failed) because of how the platform paged. */
  pagingProblem(problem: PagingProblem): void;
}

/** A stream's entries, as its fingerprints see them. */
export type Fingerprint = (entry: StreamEntry) => string;

/**
 * For a claimed kind (StreamKind.claimed): may this stream ship an entry that may be new (another
 * stream did not claim it)? `timeMs`: the entry's time by the platform.
 */
export type ClaimEntry = (fingerprint: string, entry: StreamEntry, timeMs: number) => boolean;

/** A tailer's settings, shared by every stream of a kind. */
export interface TailerOptions {
  overlapMs: number;
  /** Where a stream without a checkpoint starts (logs.startFrom resolved at process start). */
  startFromMs: () => number;
  /** Page requests of an oldest-first read before it stops and resumes (a growing cursor could otherwise never end). */
  maxPagesPerRead: number;
  /** Overrides of the hard bounds of one read (tests). */
  readLimits?: Partial<Pick<ReadLimits, "maxPages" | "maxHeldBytes" | "unusablePages">>;
  spoolDir: string;
  bufferBudget: BufferBudget;
  fingerprint: Fingerprint;
  /**
   * The platform's time: a read's bounds (its now, the future-entry tolerance, the high-water limit)
   * compare it with entries the platform stamped. Its sleeps are never used.
   */
  clock: Clock;
  /** Whether the collector is down (then nothing more is fetched). */
  collectorDown: () => boolean;
}

/** What a read needs of its stream besides the settings every stream of its kind shares. */
export interface StreamParts {
  /** Encodes a new record for the collector as soon as it is read. */
  readonly encoder: RecordEncoder;
  /** Activity streams: may this stream ship an entry another stream may also list? */
  readonly claim: ClaimEntry | undefined;
}

/** Where a read's new records go: the stream's shipper (see StreamShipper). */
export interface PageOutlet {
  /** Add a page of records (oldest first); returns once batched. */
  add(page: PreparedPage): Promise<void>;
  /** Send what is batched and wait until every export is acknowledged and committed. */
  flush(): Promise<void>;
}

export type Order = "unknown" | "newest-first" | "oldest-first";

/** Where one pass of a read stops and what it counts as new; fixed for the pass (see bounds.ts). */
export interface ReadBounds {
  /** A newest-first read stops once it has passed this. */
  lowerMs: number;
  /**
   * Entries older than this were delivered (or precede the start point). Between it and `lowerMs`
   * (pages that were fetched anyway) entries are still checked against the fingerprints, so a late
   * arrival there is shipped rather than skipped.
   */
  dedupeFloorMs: number;
  /** The high-water mark when the pass began. */
  highWaterMs: number;
  /** When the read began, by the platform's clock. */
  nowMs: number;
  /** An entry stamped later than now plus this is counted as from the future. */
  futureToleranceMs: number;
  /**
   * How late the stream's entries have come lately, with room to spare (0: none seen): a read out of
   * order goes this far below the bound before it stops.
   */
  lateMs: number;
}

/**
 * A page's entries, newest first or oldest first as the source gives them. Every entry's time can be
 * read without building the entry; an entry is built (and checked against its schema) when asked for.
 */
export interface PageEntries {
  readonly length: number;
  /** Entry i's time, ms, or undefined when it has no usable one. */
  timeMs(i: number): number | undefined;
  /** Entry i, or undefined when its record does not fit the schema (the source reports it). */
  entry(i: number): StreamEntry | undefined;
  /** Entry i as `entry` gives it, without reporting a record that does not fit (a page's identity). */
  quietEntry(i: number): StreamEntry | undefined;
  /** The read is done with the page: no entry or time is asked for after this. */
  release(): void;
}

/** One page as a read sees it. */
export interface SourcePage {
  entries: PageEntries;
  /** Records the page held, valid and skipped. */
  rawCount: number;
  /** Records skipped before the page reached the read (not among `entries`). */
  rejected: number;
  /** The source can give a page after this one (a scroll_id came with it; numbered pages: always). */
  continuation: boolean;
}

/**
 * How the scroll a read is on began: opened by this read, or held from the previous read, either in
 * the middle (an oldest-first scroll cut at the page cap) or at its end (a cursor that may grow).
 */
export type ScrollStart = "fresh" | "held-mid" | "held-at-end";

/** Whether a read keeps its scroll for the next read, and where it leaves it. */
export type Hold = "none" | "mid" | "at-end";

/** The pages of one read. Scroll sources keep a held scroll between reads; numbered ones keep nothing. */
export interface PageCursor {
  /** How the current scroll began (after `restart`, "fresh"). */
  readonly start: ScrollStart;
  /** The scroll was held at its end and has returned entries since: a growing cursor, not a snapshot. */
  readonly grows: boolean;
  next(opts: RequestOptions): Promise<SourcePage>;
  /** Fetch the page after the last one returned while that one is processed. */
  prefetch(opts: RequestOptions): void;
  /** Leave the current scroll: the next page opens a fresh one. */
  restart(): void;
  /** The read is over: keep the scroll for the next read as `hold` says, or let it go. */
  close(hold: Hold): void;
}

export interface PageSource {
  /** Entries a full page holds. */
  readonly pageSize: number;
  /**
   * A read cut short can resume where it stopped next time (a held scroll). Numbered pages cannot:
   * their reads are never cut at the page cap, or the entries between would be skipped.
   */
  readonly resumable: boolean;
  /** Begin a read (continuing the scroll held from the last one, if any). */
  open(): PageCursor;
}

/** Why a read ended. */
export type EndReason =
  /** The source had nothing more. */
  | "end"
  /** A newest-first read passed its lower bound. */
  | "lower"
  /** An oldest-first read reached the page cap (what it read is shipped; it resumes). */
  | "cap"
  /** Pages in a row without one usable entry. */
  | "unusable"
  /** A page repeated one read before: the source loops. */
  | "repeated"
  /** The read reached the most pages one read may fetch. */
  | "pages"
  /** The read held back the most bytes one read may hold. */
  | "bytes"
  /** The collector went down. */
  | "interrupted"
  /** A page over api.maxResponseSize, given up after its bound: what the read holds is shipped (a gap). */
  | "too_large";

/** Why a read stopped short of the checkpoint, or failed, because of how the platform paged. */
export type PagingProblem =
  "no_continuation" | "repeated_page" | "page_limit" | "byte_limit" | "unusable_pages";

export interface ReadResult {
  end: EndReason;
  shipped: number;
  /** The read began on a fresh scroll (not a held one). */
  fresh: boolean;
  reachedLower: boolean;
  oldestSeen: number;
  maxLatenessMs: number;
  /** Malformed entries the read met (no readable time, or not fitting the schema). */
  malformed: number;
  /**
   * The read met malformed entries and nothing it could use: no entry with a readable time at all,
   * or no new entry but some newer than the checkpoint that did not fit the schema.
   */
  malformedOnly: boolean;
}
