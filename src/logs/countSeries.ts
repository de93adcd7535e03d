/**
 * A site's log-derived counter keys read back as the series they publish, in one order that depends
 * only on which keys there are (counts only ever gain keys). Called for every site at every read of
 * the metric store, so nothing is allocated per key: each key is read once into a small table for the
 * process, and every label set is a constant.
 *
 * Series at 0 before their first count: a series that appears with its first event hides that event
 * from rate(), and a site whose series stay the same has its values written in place instead of all
 * its lines rendered anew. So:
 * - web server, from the stream's first read: `5xx`, untimed requests and response bytes of
 *   `cached="false"`; once an entry of a cache state was counted, every status class from 2xx to 5xx,
 *   untimed requests, response bytes and the duration histogram of that state (1xx and `other` appear
 *   when counted);
 * - PHP: `fatal` and `parse` from the stream's first read; every severity once any entry was counted.
 */
import { DURATION_BUCKETS } from "../config/slos.js";
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
const LE = [...DURATION_BUCKETS.map(String), "+Inf"];
/** Status classes published at 0 once their cache state has been counted. */
const SEEDED_CLASSES = ["2xx", "3xx", "4xx", "5xx"] as const;

type Cached = 0 | 1;
const NONE = -1;

/** What one counter key feeds. */
interface KeyInfo {
  kind: "response" | "bucket" | "sum" | "untimed" | "bytes" | "other";
  /** 0 `false`, 1 `true`, NONE for a cache state other than those. */
  cached: Cached | typeof NONE;
  /** A bucket's index in LE; a response: whether it is one of the seeded classes. */
  bucket: number;
  seeded: boolean;
  /** A response's labels. */
  labels: Readonly<Record<string, string>>;
}

const frozen = <T extends Record<string, string>>(labels: T): Readonly<T> => Object.freeze(labels);
const NO_LABELS: Readonly<Record<string, string>> = Object.freeze({});
const CACHED_LABELS = CACHED.map((cached) => frozen({ cached }));
const BUCKET_LABELS = CACHED.map((cached) => LE.map((le) => frozen({ cached, le })));
/** `d|<cached>|<le>`, the bucket's counter key: its exemplar's key too. */
const BUCKET_KEYS = CACHED.map((cached) => LE.map((le) => `d|${cached}|${le}`));
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
const PHP_SEEDED = new Set<string>(PHP_SEVERITY_LABELS);
/** PHP severities published from a stream's first read. */
const PHP_BASE = PHP_LABELS.filter(({ severity }) => severity === "fatal" || severity === "parse");

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

/** The web-server stream's series (`keepCached`: whether the `cached="true"` histogram is published). */
export function eachServerSeries(
  counts: Readonly<Record<string, number>>,
  keepCached: boolean,
  emit: EmitSeries,
): void {
  const seen = statesCounted(counts);
  const responses = "sitehost_site_http_responses_total";
  for (const c of STATES) {
    if (seen & (1 << c)) {
      const keys = RESPONSE_KEYS[c] as string[];
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i] as string;
        emit(responses, undefined, RESPONSE_LABELS[c]?.[i] as Record<string, string>, counts[key] ?? 0, key);
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
    if (!(seen & (1 << c)) || (c === 1 && !keepCached)) continue;
    scratch.fill(0);
    for (const key in counts) {
      const info = keyInfo(key);
      if (info.kind === "bucket" && info.cached === c)
        scratch[info.bucket] = (scratch[info.bucket] as number) + (counts[key] as number);
    }
    let cumulative = 0;
    const labels = BUCKET_LABELS[c] as Array<Record<string, string>>;
    const keys = BUCKET_KEYS[c] as string[];
    for (let i = 0; i < LE.length; i++) {
      cumulative += scratch[i] as number;
      emit(duration, "_bucket", labels[i] as Record<string, string>, cumulative, keys[i]);
    }
    const of = CACHED_LABELS[c] as Record<string, string>;
    emit(duration, "_sum", of, counts[SUM_KEYS[c] as string] ?? 0);
    emit(duration, "_count", of, cumulative);
  }
  for (const [name, keys] of PER_STATE) {
    for (const c of STATES) {
      if (c === 1 && !(seen & 2)) continue;
      emit(name, undefined, CACHED_LABELS[c] as Record<string, string>, counts[keys[c] as string] ?? 0);
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
  for (const labels of any ? PHP_LABELS : PHP_BASE)
    emit(name, undefined, labels, counts[labels.severity] ?? 0);
  for (const severity in counts) {
    if (!PHP_SEEDED.has(severity)) emit(name, undefined, { severity }, counts[severity] as number);
  }
}
