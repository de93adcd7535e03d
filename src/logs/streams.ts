/**
 * What each kind of stream is: where its pages come from (a scroll for PHP and web-server logs,
 * numbered pages for activity logs), how long the platform keeps its entries, how an entry is
 * fingerprinted, and how it becomes an OTLP record carrying its site and stream. The account's own
 * activity log is the stream of "site" 0.
 */
import {
  ActivityEntrySchema,
  LOG_TIME_FORMS,
  PhpLogEntrySchema,
  ServerLogEntrySchema,
  type LogEntry,
  type LogStream,
  type PhpLogEntry,
  type ScrollStream,
  type ServerLogEntry,
  type Site,
} from "../api/schemas.js";
import type { SitehostApi } from "../api/types.js";
import { siteKind } from "../discovery/kind.js";
import { parseDuration } from "../config/duration.js";
import { entryFingerprinter } from "./canonicalEntry.js";
import type { EntryFingerprint } from "./entry.js";
import { knownHttpMethods } from "../config/otelEnv.js";
import {
  ACTIVITY_MAPPING,
  counterKey,
  PHP_MAPPING,
  phpSeverity,
  serverMapping,
  type EntryMapping,
} from "./mapper.js";
import { errorGroupFingerprint, GROUPED_SEVERITIES } from "./errorGroup.js";
import type { ErrorGroupBook } from "./errorGroups.js";
import {
  AttributeObject,
  type AttributeWriter,
  type OutgoingRecord,
  type RecordHead,
} from "./otlp/encode.js";
import type { ProtoWriter } from "./otlp/protoWriter.js";
import type { LogSink } from "./otlp/sink.js";
import type { PendingRecord, StreamEntry } from "./pending.js";
import type { RecordCounter, RecordEncoder } from "./prepared.js";
import { recordUid } from "./recordUid.js";
import { counterKeyId } from "./counterKeys.js";
import {
  type FetchSiteNumberedPage,
  type FetchSiteScrollPage,
  NumberedSource,
  ScrollSource,
} from "./read/sources.js";
import type { PageSource, SiteIdentity } from "./read/types.js";
import {
  RequestTimeUnit,
  SERVER_COUNT_SLOTS,
  serverCounts,
  type RequestTimeSetting,
  type RequestTimeUnitName,
} from "./requestCounts.js";
import type { ResourceIdentity } from "./resource.js";

/** The account's own activity log is tailed as a stream of "site" 0. */
export const ACCOUNT: SiteIdentity = { id: 0, name: "" };

/** What the pipeline does differently for each kind of stream; nothing else asks which kind it has. */
export interface StreamKind {
  readonly stream: LogStream;
  /** The account has a stream of this kind of its own (read by shard 0 alone: it is one for all shards). */
  readonly account: boolean;
  /**
   * An entry the account's stream and a site's stream may both list is shipped by the first to claim
   * it (the platform lists a site's activity in both).
   */
  readonly claimed: boolean;
  /** Its records feed the log-derived counters (sitehost_site_http_* and sitehost_site_php_*). */
  readonly counted: boolean;
}

export const STREAM_KINDS: Readonly<Record<LogStream, StreamKind>> = {
  php: { stream: "php", account: false, claimed: false, counted: true },
  server: { stream: "server", account: false, claimed: false, counted: true },
  activity: { stream: "activity", account: true, claimed: true, counted: false },
};

/** One stream the configuration and the sites call for. */
export interface StreamSpec {
  key: string;
  site: SiteIdentity;
  kind: StreamKind;
  /** What its records' resource says of the site (or the account). */
  resource: ResourceIdentity;
}

/** A site as discovery gives it; only the id and name are required. */
export type SiteOfStreams = SiteIdentity &
  Partial<Pick<Site, "datacenterCode" | "accountId" | "staging" | "sandbox" | "kit">>;

function resourceOf(site: SiteOfStreams): ResourceIdentity {
  const flags = { staging: site.staging === true, sandbox: site.sandbox === true, kit: site.kit === true };
  // Every field in the literal (unset ones undefined): one shape, no property array added later.
  return {
    siteId: site.id,
    siteName: site.name,
    kind: siteKind(flags),
    datacenter: site.datacenterCode || undefined,
    accountId: site.accountId,
  };
}

/** Whether two specs of one stream differ in what its records say of the site. */
export function identityChanged(a: StreamSpec, b: StreamSpec): boolean {
  const x = a.resource;
  const y = b.resource;
  return (
    a.site.name !== b.site.name ||
    x.datacenter !== y.datacenter ||
    x.kind !== y.kind ||
    x.accountId !== y.accountId
  );
}

/**
 * The streams wanted: each configured stream of each site, and the account's own streams on shard 0
 * (the account's log is one for all shards: the first shard ships it, alone).
 */
export function wantedStreams(
  sites: readonly SiteOfStreams[],
  streams: readonly LogStream[],
  shardIndex: number,
): StreamSpec[] {
  const kinds = streams.map((s) => STREAM_KINDS[s]);
  const wanted: StreamSpec[] = [];
  let accountId: number | undefined;
  for (const site of sites) {
    const identity = { id: site.id, name: site.name };
    const resource = resourceOf(site);
    accountId ??= site.accountId;
    for (const kind of kinds)
      wanted.push({ key: streamKey(site, kind.stream), site: identity, kind, resource });
  }
  if (shardIndex === 0) {
    const resource: ResourceIdentity = { siteId: 0, siteName: "" };
    if (accountId !== undefined) resource.accountId = accountId;
    for (const kind of kinds) {
      if (kind.account) wanted.push({ key: streamKey(ACCOUNT, kind.stream), site: ACCOUNT, kind, resource });
    }
  }
  return wanted;
}

/** Activity pages hold at most 50 entries. */
const ACTIVITY_PER_PAGE = 50;

const FINGERPRINTS: Record<LogStream, EntryFingerprint> = {
  php: entryFingerprinter(PhpLogEntrySchema, LOG_TIME_FORMS.php),
  server: entryFingerprinter(ServerLogEntrySchema, LOG_TIME_FORMS.server),
  activity: entryFingerprinter(ActivityEntrySchema, LOG_TIME_FORMS.activity),
};

export function streamKey(site: Pick<SiteIdentity, "id">, stream: LogStream): string {
  return `${site.id}/${stream}`;
}

/** The labels of the per-stream self-metrics (empty site labels for the account's log). */
export function streamLabels(site: SiteIdentity, stream: LogStream) {
  return site.id === 0
    ? { site_id: "", site: "", stream }
    : { site_id: String(site.id), site: site.name, stream };
}

export function fingerprintOf(stream: LogStream): EntryFingerprint {
  return FINGERPRINTS[stream];
}

/** Where the stream's pages come from, through the API client. */
/** The page fetchers of one API, shared by all its streams. */
interface SitePages {
  php: FetchSiteScrollPage;
  server: FetchSiteScrollPage;
  activity: FetchSiteNumberedPage;
}

const sitePagesByApi = new WeakMap<SitehostApi, SitePages>();

function sitePagesOf(api: SitehostApi): SitePages {
  let pages = sitePagesByApi.get(api);
  if (!pages) {
    pages = {
      php: (id, scrollId, opts) => api.phpLogs({ id, scrollId }, opts),
      server: (id, scrollId, opts) => api.serverLogs({ id, scrollId }, opts),
      activity: (id, page, opts) =>
        id === 0
          ? api.accountActivity({ page, perPage: ACTIVITY_PER_PAGE }, opts)
          : api.siteActivity({ id, page, perPage: ACTIVITY_PER_PAGE }, opts),
    };
    sitePagesByApi.set(api, pages);
  }
  return pages;
}

export function sourceFor(api: SitehostApi, site: SiteIdentity, stream: LogStream): PageSource {
  const pages = sitePagesOf(api);
  if (stream === "activity") return new NumberedSource(pages.activity, site.id);
  return new ScrollSource(stream === "php" ? pages.php : pages.server, site.id);
}

/** logs.startFrom → epoch ms. */
export function resolveStartFrom(startFrom: string, now: number): number {
  // Entry times have one-second precision (web-server logs carry epoch seconds): start at a whole
  // second so an entry written in the same second as "now" is not mistaken for history.
  const second = (ms: number) => Math.floor(ms / 1000) * 1000;
  if (startFrom === "now") return second(now);
  if (startFrom.startsWith("-")) return second(now - (parseDuration(startFrom.slice(1)) ?? 0));
  return Date.parse(startFrom);
}

const MAPPINGS = {
  php: PHP_MAPPING,
  // OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS replaces the known HTTP methods for the process's life.
  server: serverMapping(knownHttpMethods()),
  activity: ACTIVITY_MAPPING,
} as Record<LogStream, EntryMapping<StreamEntry>>;

/** A PHP error record's group (errorGroup.ts), and whether it is the group's first record. */
export interface RecordGroup {
  fingerprint: string;
  first: boolean;
}

/** A record's attributes: its entry's own, its PHP error group, then its site, stream and unique id. */
function addAttributes(
  out: AttributeWriter,
  site: SiteIdentity,
  stream: LogStream,
  r: PendingRecord,
  group: RecordGroup | undefined,
): void {
  MAPPINGS[stream].attributes(r.entry, out);
  if (group) {
    out.add("sitehost.php.error_group", group.fingerprint);
    if (group.first) out.add("sitehost.php.error_group.first", true);
  }
  if (site.id !== 0) {
    out.add("sitehost.site.id", String(site.id));
    out.add("sitehost.site.name", site.name);
  }
  out.add("sitehost.log.stream", stream);
  out.add("log.record.uid", recordUid(site.id, stream, r.fingerprint, r.occurrence));
}

/** The record shipped for a new entry: the mapped entry plus its site, stream and unique id. */
export function outgoingRecord(
  site: SiteIdentity,
  stream: LogStream,
  r: PendingRecord,
  observedMs: number,
  group?: RecordGroup,
): OutgoingRecord {
  const attributes = new AttributeObject();
  addAttributes(attributes, site, stream, r, group);
  return { ...MAPPINGS[stream].head(r.entry, r.timeMs), observedMs, attributes: attributes.attributes };
}

/**
 * Encodes a stream's new records for the sink as they are read, with their counter keys. The site's
 * name in the records changes only through `rename`.
 */
export interface StreamEncoder extends RecordEncoder {
  rename(site: SiteIdentity): void;
}

export function encoderFor(
  sink: LogSink,
  site: SiteIdentity,
  stream: LogStream,
  now: () => number,
  counting: ServerCounting = { requestTime: "auto", durations: true },
  errorGroups?: ErrorGroupBook,
): StreamEncoder {
  return new SinkEncoder(sink, site, stream, now, counting, stream === "php" ? errorGroups : undefined);
}

/** One per stream, so its parts are methods and fields rather than closures (thousands of streams). */
class SinkEncoder implements StreamEncoder {
  /** The record being encoded, for `writeAttributes`. */
  private current: PendingRecord | undefined;
  // One function for every record of the stream (no closure per record): it reads `current`.
  private readonly writeAttributes = (out: AttributeWriter): void =>
    addAttributes(out, this.named, this.stream, this.current as PendingRecord, this.group);
  /** The group of the record being encoded (one object reused: no allocation per record). */
  private readonly groupSlot: RecordGroup = { fingerprint: "", first: false };
  private group: RecordGroup | undefined;
  private readonly mapping: EntryMapping<StreamEntry>;

  constructor(
    private readonly sink: LogSink,
    private named: SiteIdentity,
    private readonly stream: LogStream,
    private readonly now: () => number,
    counting: ServerCounting,
    private readonly errorGroups: ErrorGroupBook | undefined,
  ) {
    this.mapping = MAPPINGS[stream];
    this.counter = counterFor(stream, counting, () => this.named);
  }

  readonly counter: RecordCounter | undefined;

  encode(w: ProtoWriter, r: PendingRecord): void {
    this.group = this.errorGroups && this.groupOf(r, this.errorGroups);
    if (!this.sink.encodeFrom) {
      this.sink.encode(w, outgoingRecord(this.named, this.stream, r, this.now(), this.group));
      return;
    }
    const head = this.mapping.head(r.entry, r.timeMs) as RecordHead;
    head.observedMs = this.now();
    this.current = r;
    this.sink.encodeFrom(w, head, this.writeAttributes);
    this.current = undefined;
  }

  rename(site: SiteIdentity): void {
    this.named = site;
  }

  /** A PHP error entry's group, counted in the book; undefined for the severities not grouped. */
  private groupOf(r: PendingRecord, book: ErrorGroupBook): RecordGroup | undefined {
    const entry = r.entry as PhpLogEntry;
    const severity = phpSeverity(entry.severity).label;
    if (!GROUPED_SEVERITIES.has(severity)) return undefined;
    const slot = this.groupSlot;
    slot.fingerprint = errorGroupFingerprint(entry.message, entry.file);
    slot.first = book.observe(
      this.named.id,
      slot.fingerprint,
      severity,
      r.timeMs,
      r.fingerprint,
      r.occurrence,
    );
    return slot;
  }
}

/** How web-server records are counted: `request_time`'s unit, and whether durations are counted at all. */
export interface ServerCounting {
  requestTime: RequestTimeSetting;
  /** `auto`: a stream's unit was decided from its first values. */
  unitDecided?: (unit: RequestTimeUnitName, site: SiteIdentity) => void;
  /** false: the status alone, as for the other counted kinds. */
  durations: boolean;
}

/** What a record of the stream adds to the log-derived counters (none for uncounted kinds). */
function counterFor(
  stream: LogStream,
  counting: ServerCounting,
  site: () => SiteIdentity,
): RecordCounter | undefined {
  if (!STREAM_KINDS[stream].counted) return undefined;
  if (stream === "server" && counting.durations) {
    const decided = counting.unitDecided;
    const unit = new RequestTimeUnit(counting.requestTime, decided && ((u) => decided(u, site())));
    return {
      slots: SERVER_COUNT_SLOTS,
      prepare: (records) => {
        if (unit.unit === undefined) unit.observe(requestTimes(records));
      },
      write: (r, ids, values, at) => serverCounts(r.entry as ServerLogEntry, unit, ids, values, at),
    };
  }
  return KEY_COUNTERS[stream as ScrollStream];
}

function* requestTimes(records: readonly PendingRecord[]): Iterable<unknown> {
  for (const r of records) yield (r.entry as ServerLogEntry).request_time;
}

/** A record that counts once, by its key (PHP entries; web-server entries without durations). */
function keyCounter(stream: ScrollStream): RecordCounter {
  return {
    slots: 1,
    write: (r, ids, values, at) => {
      ids[at] = counterKeyId(counterKey(stream, r.entry as LogEntry));
      values[at] = 1;
    },
  };
}

/** Stateless, so one per kind for every stream of it. */
const KEY_COUNTERS: Record<ScrollStream, RecordCounter> = {
  php: keyCounter("php"),
  server: keyCounter("server"),
};
