/**
 * A site's log-derived counter keys read back as the series they publish, in one order that depends
 * only on which keys there are (counts only ever gain keys). Called for every site at every read of
 * the metric store, so nothing is allocated per key: each key is read once into a small table for the
 * process, and every label set is a constant.
 *
 * Series at 0 before their first count: a series that appears with its first event hides that event
 * from rate(), and a site whose series stay the same has its values written in place instead of all
 * its lines rendered anew. But every series is one more per site at thousands of sites, so only those
 * a shipped alert, SLO rule or error-rate panel reads are seeded; the others appear when counted:
 * - web server, from the stream's first read: `5xx`, untimed requests and response bytes of
 *   `cached="false"`; once an entry of `cached="false"` was counted, every status class from 2xx to
 *   5xx and its duration histogram; once an entry of `cached="true"` was counted, its `5xx`, response
 *   bytes, and its histogram and untimed requests when the histogram's `cached="true"` half is
 *   published (`histogram.cacheHits`). 1xx, `other`, and `cached="true"`'s 2xx to 4xx and untimed
 *   requests otherwise, appear when counted;
 * - PHP: `fatal` and `parse` from the stream's first read; `error` and `warning` too once any entry
 *   was counted; `notice`, `deprecated` and `other` when counted.
 */
import { FINE_LE as LE, type HistogramLayout } from "./histogramLayout.js";
import { bucketIndex } from "./requestCounts.js";
import { PHP_SEVERITY_LABELS } from "./mapper.js";

export type SeriesFamily =
  | "sitehost_site_http_responses_total"
  | "sitehost_site_http_request_duration_seconds"
  | "sitehost_site_http_requests_without_duration_total"
  | "sitehost_site_http_response_size_bytes_total"
  | "sitehost_site_php_log_entries_total";

/** One series: its family (and histogram suffix), its labels beside the site's, its value, its exemplar's key. */
export type EmitSeries = (
  name: SeriesFamily,
  suffix: "_bucket" | "_sum" | "_count" | undefined,
  labels: Readonly<Record<string, string>>,
  value: number,
  exemplarKey?: string,
) => void;

const CACHED = ["false", "true"] as const;
/** The cache states by index (a constant: a literal in a loop's head is a new array each time). */
const STATES = [0, 1] as const;
/** Status classes kept in this order, those of `cached="false"` published at 0 once that state was counted. */
const SEEDED_CLASSES = ["2xx", "3xx", "4xx", "5xx"] as const;
/** The one of them published at 0 once `cached="true"` was counted (the others when counted). */
const CACHED_SEEDED = SEEDED_CLASSES.indexOf("5xx");

type Cached = 0 | 1;
const NONE = -1;

/** What one counter key feeds. */
interface KeyInfo {
  kind: "response" | "bucket" | "sum" | "untimed" | "bytes" | "other";
  /** 0 `false`, 1 `true`, NONE for a cache state other than those. */
  cached: Cached | typeof NONE;
  /** A bucket's index in LE (the fine buckets); a response: whether it is one of the seeded classes. */
  bucket: number;
  seeded: boolean;
  /** A response's labels. */
  labels: Readonly<Record<string, string>>;
}

const frozen = <T extends Record<string, string>>(labels: T): Readonly<T> => Object.freeze(labels);
const NO_LABELS: Readonly<Record<string, string>> = Object.freeze({});
const CACHED_LABELS = CACHED.map((cached) => frozen({ cached }));
const SUM_KEYS = CACHED.map((cached) => `ds|${cached}`);
const UNTIMED_KEYS = CACHED.map((cached) => `du|${cached}`);
const BYTES_KEYS = CACHED.map((cached) => `b|${cached}`);
const RESPONSE_KEYS = CACHED.map((cached) => SEEDED_CLASSES.map((cls) => `${cls}|${cached}`));
const RESPONSE_LABELS = CACHED.map((cached) =>
  SEEDED_CLASSES.map((status_class) => frozen({ status_class, cached })),
);
/** Families with one series per cache state, and their keys. */
const PER_STATE = [
  ["sitehost_site_http_requests_without_duration_total", UNTIMED_KEYS],
  ["sitehost_site_http_response_size_bytes_total", BYTES_KEYS],
] as const;
const PHP_LABELS = PHP_SEVERITY_LABELS.map((severity) => frozen({ severity }));
const PHP_KNOWN = new Set<string>(PHP_SEVERITY_LABELS);
/** When a PHP severity is published: from the stream's first read, once any entry was counted, or when counted. */
const FIRST_READ = 0;
const ANY_COUNTED = 1;
const WHEN_COUNTED = 2;
/** Alerts read fatal and parse; the error-rate panels error and warning too. */
const PHP_SEEDING = Uint8Array.from(PHP_SEVERITY_LABELS, (severity) =>
  severity === "fatal" || severity === "parse"
    ? FIRST_READ
    : severity === "error" || severity === "warning"
      ? ANY_COUNTED
      : WHEN_COUNTED,
);

const cachedOf = (text: string | undefined): Cached | typeof NONE =>
  text === "false" ? 0 : text === "true" ? 1 : NONE;

function readKey(key: string): KeyInfo {
  const parts = key.split("|");
  const [head = "", second, third] = parts;
  const cached = cachedOf(second);
  const info: KeyInfo = { kind: "other", cached, bucket: 0, seeded: false, labels: NO_LABELS };
  if (parts.length === 3 && head === "d") {
    info.kind = "bucket";
    // A bound no longer in the table (another version's buckets) counts in the next one up.
    const le = third === "+Inf" ? Infinity : Number(third);
    info.bucket = Number.isNaN(le) ? LE.length - 1 : bucketIndex(le);
  } else if (parts.length === 2 && head === "ds") info.kind = "sum";
  else if (parts.length === 2 && head === "du") info.kind = "untimed";
  else if (parts.length === 2 && head === "b") info.kind = "bytes";
  else if (parts.length === 2) {
    info.kind = "response";
    info.seeded = cached !== NONE && (SEEDED_CLASSES as readonly string[]).includes(head);
    info.labels = frozen({ status_class: head, cached: second as string });
  }
  return info;
}

/** Keys read so far. Every key comes from a small fixed table; a bound keeps odd ones from piling up. */
const known = new Map<string, KeyInfo>();
const KNOWN_MAX = 4096;

function keyInfo(key: string): KeyInfo {
  let info = known.get(key);
  if (info === undefined) {
    info = readKey(key);
    if (known.size < KNOWN_MAX) known.set(key, info);
  }
  return info;
}

/** Bit 1: some key of `cached="false"` was counted; bit 2: of `cached="true"`. */
function statesCounted(counts: Readonly<Record<string, number>>): number {
  let seen = 0;
  for (const key in counts) {
    const { cached } = keyInfo(key);
    if (cached !== NONE) seen |= 1 << cached;
    if (seen === 3) break;
  }
  return seen;
}

/** Per-bucket counts of one cache state, reused (one call at a time; nothing here awaits). */
const scratch = new Float64Array(LE.length);

/** The web-server stream's series, the duration histogram's buckets as `histogram` publishes them. */
export function eachServerSeries(
  counts: Readonly<Record<string, number>>,
  histogram: HistogramLayout,
  emit: EmitSeries,
): void {
  const seen = statesCounted(counts);
  const responses = "sitehost_site_http_responses_total";
  for (const c of STATES) {
    if (seen & (1 << c)) {
      const keys = RESPONSE_KEYS[c] as string[];
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i] as string;
        const value = counts[key];
        if (value === undefined && c === 1 && i !== CACHED_SEEDED) continue;
        emit(responses, undefined, RESPONSE_LABELS[c]?.[i] as Record<string, string>, value ?? 0, key);
      }
    } else if (c === 0) {
      const key = RESPONSE_KEYS[0]?.[3] as string;
      emit(responses, undefined, RESPONSE_LABELS[0]?.[3] as Record<string, string>, counts[key] ?? 0, key);
    }
  }
  for (const key in counts) {
    const info = keyInfo(key);
    if (info.kind === "response" && !(info.seeded && seen & (1 << info.cached)))
      emit(responses, undefined, info.labels, counts[key] as number, key);
  }
  const duration = "sitehost_site_http_request_duration_seconds";
  for (const c of STATES) {
    if (!(seen & (1 << c)) || (c === 1 && !histogram.cacheHits)) continue;
    scratch.fill(0);
    for (const key in counts) {
      const info = keyInfo(key);
      if (info.kind === "bucket" && info.cached === c)
        scratch[info.bucket] = (scratch[info.bucket] as number) + (counts[key] as number);
    }
    let cumulative = 0;
    const labels = histogram.labels[c] as ReadonlyArray<Readonly<Record<string, string>>>;
    const keys = histogram.keys[c] as readonly string[];
    for (let i = 0, p = 0; i < LE.length; i++) {
      cumulative += scratch[i] as number;
      if (histogram.ends[i] === 0) continue;
      emit(duration, "_bucket", labels[p] as Record<string, string>, cumulative, keys[p]);
      p += 1;
    }
    const of = CACHED_LABELS[c] as Record<string, string>;
    emit(duration, "_sum", of, counts[SUM_KEYS[c] as string] ?? 0);
    emit(duration, "_count", of, cumulative);
  }
  for (const [name, keys] of PER_STATE) {
    for (const c of STATES) {
      const value = counts[keys[c] as string];
      if (c === 1 && value === undefined) {
        if (!(seen & 2)) continue;
        // Untimed cache hits: beside their histogram, or once counted.
        if (keys === UNTIMED_KEYS && !histogram.cacheHits) continue;
      }
      emit(name, undefined, CACHED_LABELS[c] as Record<string, string>, value ?? 0);
    }
  }
}

/** The PHP stream's series: by severity. */
export function eachPhpSeries(counts: Readonly<Record<string, number>>, emit: EmitSeries): void {
  const name = "sitehost_site_php_log_entries_total";
  let any = false;
  for (const _ in counts) {
    any = true;
    break;
  }
  for (let i = 0; i < PHP_LABELS.length; i++) {
    const labels = PHP_LABELS[i] as Readonly<Record<string, string>>;
    const value = counts[labels.severity as string];
    const seeding = PHP_SEEDING[i] as number;
    if (value !== undefined || seeding === FIRST_READ || (any && seeding === ANY_COUNTED))
      emit(name, undefined, labels, value ?? 0);
  }
  for (const severity in counts) {
    if (!PHP_KNOWN.has(severity)) emit(name, undefined, { severity }, counts[severity] as number);
  }
}
