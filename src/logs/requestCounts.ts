/**
 * What a web-server entry adds to its site's log-derived counts, as checkpoint counter keys and
 * increments (the checkpoint keeps them cumulative, so every series stays monotonic across restarts):
 *
 * - `<class>|<cached>` +1: responses by status class (`sitehost_site_http_responses_total`);
 * - `d|<cached>|<le>` +1: the duration's histogram bucket, not cumulative (the smallest bucket whose
 *   upper bound holds it; cumulated when published), and `ds|<cached>` + the duration in seconds;
 * - `du|<cached>` +1 instead, for an entry without a usable `request_time` (missing, negative, not a
 *   number): counted, never guessed;
 * - `b|<cached>` + `body_bytes_sent`, when the entry has it.
 *
 * `request_time` is read in the unit the stream's first values show (`RequestTimeUnit`: seconds, the
 * web server's own unit, or milliseconds), or the one `logs.requestTimeUnit` sets.
 */
import type { ServerLogEntry } from "../api/schemas.js";
import { DURATION_BUCKETS } from "../config/slos.js";
import { counterKeyId } from "./counterKeys.js";
import { FINGERPRINT_WORDS, hex, readFingerprint } from "./fingerprintHex.js";
import { SERVER_COUNTER_KEYS, serverCounterIndex } from "./mapper.js";
import type { PreparedPage } from "./prepared.js";
import type { ChunkWriter } from "../metrics/gzipMembers.js";
import { renderExemplar } from "../metrics/openMetrics.js";
import { formatValue } from "../metrics/render.js";
import { recordUid, recordUidPrefix } from "./recordUid.js";
import type { HistogramLayout } from "./histogramLayout.js";

const BUCKET_LABELS = [...DURATION_BUCKETS.map(String), "+Inf"];

/** Counter keys per record of a web-server entry: status, duration (bucket or untimed), duration sum, bytes. */
export const SERVER_COUNT_SLOTS = 4;

export type RequestTimeSetting = "auto" | "seconds" | "milliseconds";
export type RequestTimeUnitName = "seconds" | "milliseconds";

/** Values the decision looks at, at most: the stream's first ones. */
export const UNIT_SAMPLE = 32;
/** No site's median request takes a minute (the platform's limit): a median above is milliseconds. */
const MEDIAN_MS_ABOVE = 60;
/** Whole numbers with a median of 10 or more: ten-second requests are no site's median either. */
const WHOLE_MEDIAN_MS_FROM = 10;

/**
 * The unit a stream's first `request_time` values (numbers ≥ 0) show, or undefined while they do not
 * tell. Pure. A median above 60 (from 3 values) is milliseconds; then values mostly with a fraction
 * are seconds (nginx's `$request_time`: seconds with millisecond resolution); whole numbers are
 * milliseconds from a median of 10 (3 values) or, once `UNIT_SAMPLE` values are in, any above 0.
 */
export function unitOfValues(values: readonly number[]): RequestTimeUnitName | undefined {
  const n = values.length;
  if (n === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted[Math.floor((n - 1) / 2)] as number;
  if (n >= 3 && median > MEDIAN_MS_ABOVE) return "milliseconds";
  const fractions = values.filter((v) => !Number.isInteger(v)).length;
  if (fractions * 2 >= n) return "seconds";
  if (n >= 3 && median >= WHOLE_MEDIAN_MS_FROM) return "milliseconds";
  if (n >= UNIT_SAMPLE && (sorted[n - 1] as number) > 0) return "milliseconds";
  return undefined;
}

/**
 * The unit of one stream's `request_time`: fixed by the setting, or with `auto` decided from the
 * distribution of the stream's first values (`unitOfValues`), each page's values looked at before
 * any of them is counted (`observe`), and kept. While undecided, a value with a fraction (or 0) is
 * read as seconds and a whole number above 0 is no duration (counted apart, never guessed).
 */
export class RequestTimeUnit {
  private decided: RequestTimeUnitName | undefined;
  private sample: number[] | undefined = [];

  constructor(
    setting: RequestTimeSetting,
    private readonly onDecided?: (unit: RequestTimeUnitName) => void,
  ) {
    if (setting !== "auto") {
      this.decided = setting;
      this.sample = undefined;
    }
  }

  get unit(): RequestTimeUnitName | undefined {
    return this.decided;
  }

  /** The values of a page about to be counted, in order (undecided only). */
  observe(values: Iterable<unknown>): void {
    const sample = this.sample;
    if (!sample) return;
    for (const v of values) {
      if (sample.length >= UNIT_SAMPLE) break;
      if (isDuration(v)) sample.push(v);
    }
    const unit = unitOfValues(sample);
    if (unit) {
      this.decided = unit;
      this.sample = undefined;
      this.onDecided?.(unit);
    }
  }

  /** Seconds, or undefined for a value that is no duration (or a whole number before the unit is known). */
  seconds(value: unknown): number | undefined {
    if (!isDuration(value)) return undefined;
    if (this.decided === "milliseconds") return value / 1000;
    if (this.decided === "seconds" || !Number.isInteger(value) || value === 0) return value;
    return undefined;
  }
}

function isDuration(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0;
}

/** Index of the bucket that holds `seconds` (the last is +Inf). */
export function bucketIndex(seconds: number): number {
  let i = 0;
  while (i < DURATION_BUCKETS.length && seconds > (DURATION_BUCKETS[i] as number)) i++;
  return i;
}

const CACHED = ["false", "true"] as const;
const keysOf = (prefix: string) => CACHED.map((c) => `${prefix}|${c}`);
const idsOf = (prefix: string) => Uint16Array.from(keysOf(prefix), counterKeyId);
const STATUS_IDS = Uint16Array.from(SERVER_COUNTER_KEYS, counterKeyId);
const SUM_IDS = idsOf("ds");
const UNTIMED_IDS = idsOf("du");
const BYTES_IDS = idsOf("b");
/** `d|<cached>|<le>` by cached × buckets + bucket. */
const BUCKET_KEYS = CACHED.flatMap((c) => BUCKET_LABELS.map((le) => `d|${c}|${le}`));
const BUCKET_IDS = Uint16Array.from(BUCKET_KEYS, counterKeyId);

/** Writes one record's counter key ids and increments into slots `at` … `at + SERVER_COUNT_SLOTS - 1`. */
export function serverCounts(
  entry: ServerLogEntry,
  unit: RequestTimeUnit,
  ids: Uint16Array,
  values: Float64Array,
  at: number,
): void {
  const status = serverCounterIndex(entry);
  const cached = status & 1;
  ids[at] = STATUS_IDS[status] as number;
  values[at] = 1;
  const seconds = unit.seconds(entry.request_time);
  if (seconds === undefined) {
    ids[at + 1] = UNTIMED_IDS[cached] as number;
    values[at + 1] = 1;
    ids[at + 2] = 0;
  } else {
    ids[at + 1] = BUCKET_IDS[cached * BUCKET_LABELS.length + bucketIndex(seconds)] as number;
    values[at + 1] = 1;
    ids[at + 2] = SUM_IDS[cached] as number;
    values[at + 2] = seconds;
  }
  const bytes = entry.body_bytes_sent;
  if (typeof bytes === "number" && Number.isFinite(bytes) && bytes >= 0) {
    ids[at + 3] = BYTES_IDS[cached] as number;
    values[at + 3] = bytes;
  } else ids[at + 3] = 0;
}

/**
 * The record an exemplar names (its fingerprint and occurrence make its `log.record.uid`, built when
 * published: the fingerprint string is the one the checkpoint holds anyway), its value (seconds, or 1
 * for a count) and time.
 */
export interface RecentRecord {
  fingerprint: string;
  occurrence: number;
  value: number;
  timeMs: number;
}

/**
 * The newest shipped record behind each published duration bucket and each 5xx count of a site, in
 * arrays of fixed size (thousands of sites keep one each: no object or map entry per record). Slots
 * are the histogram layout's (`HistogramLayout.exemplarSlot`).
 */
export class RecentRecords {
  /**
   * Per key, the fingerprint's 128 bits as four numbers (a 32-hex-digit string would cost four times
   * as much, at thousands of sites); a fingerprint of another form is kept as it is in `others`.
   */
  private readonly fingerprintBits: Uint32Array;
  private others: Map<number, string> | undefined;
  /** Per key: occurrence, value, time (ms); NaN time: none yet. */
  private readonly numbers: Float64Array;
  /** Goes up whenever a key gets a newer record: exemplars made at the same version are the same. */
  version = 0;

  constructor(private readonly layout: HistogramLayout) {
    this.fingerprintBits = new Uint32Array(layout.exemplarSlots * 4);
    this.numbers = new Float64Array(layout.exemplarSlots * 3).fill(NaN);
  }

  private setFingerprint(k: number, fp: string): void {
    if (readFingerprint(fp)) {
      this.fingerprintBits.set(FINGERPRINT_WORDS, k * 4);
      this.others?.delete(k);
    } else (this.others ??= new Map()).set(k, fp);
  }

  private fingerprint(k: number): string {
    const other = this.others?.get(k);
    if (other !== undefined) return other;
    let text = "";
    for (let i = 0; i < 4; i++) text += hex(this.fingerprintBits[k * 4 + i] as number, 8);
    return text;
  }

  /**
   * Take the newest record of each key from these pages (oldest first, as shipped), read from the
   * newest record back and only until every key has one.
   */
  take(pages: readonly PreparedPage[]): void {
    const slots = this.layout.slotByKeyId;
    const found = new Uint8Array(this.layout.exemplarSlots);
    let left = this.layout.exemplarSlots;
    for (let p = pages.length - 1; p >= 0 && left > 0; p--) {
      const page = pages[p] as PreparedPage;
      const c = page.counts;
      if (c?.slots !== SERVER_COUNT_SLOTS) continue;
      for (let i = page.count - 1; i >= 0 && left > 0; i--) {
        const at = i * SERVER_COUNT_SLOTS;
        for (let slot = at; slot <= at + 1; slot++) {
          const k = slots[c.ids[slot] as number] ?? -1;
          if (k < 0 || found[k]) continue;
          found[k] = 1;
          left -= 1;
          this.version += 1;
          this.setFingerprint(k, page.fingerprints[i] as string);
          this.numbers[k * 3] = page.occurrences[i] as number;
          // The bucket's: the duration (the sum's increment); the status count's: 1.
          this.numbers[k * 3 + 1] = slot === at ? 1 : (c.values[at + 2] as number);
          this.numbers[k * 3 + 2] = page.times[i] as number;
        }
      }
    }
  }

  /**
   * The exemplar of slot `k` (exemplarSlot) as OpenMetrics writes it after a line, naming the record by
   * its `log.record.uid` (recordUid), or nothing while no record was taken for it. Written straight
   * into the exposition: at every scrape of thousands of sites.
   */
  writeExemplar(out: ChunkWriter, k: number, siteId: number): void {
    if (k < 0) return;
    const n = this.numbers;
    const occurrence = n[k * 3] as number;
    const value = n[k * 3 + 1] as number;
    const timeMs = n[k * 3 + 2] as number;
    if (Number.isNaN(timeMs)) return;
    const other = this.others?.get(k);
    if (other !== undefined) {
      const uid = recordUid(siteId, "server", other, occurrence);
      out.text(renderExemplar({ labels: { log_record_uid: uid }, value, timestampMs: timeMs }));
      return;
    }
    // A site id, a fingerprint of 32 characters and an occurrence stay far below OpenMetrics' 128.
    out.text(' # {log_record_uid="');
    out.text(recordUidPrefix(siteId, "server"));
    for (let i = 0; i < 4; i++) out.hex(this.fingerprintBits[k * 4 + i] as number, 8);
    out.text("-");
    out.number(occurrence, String);
    out.text('"} ');
    out.number(value, formatValue);
    out.text(` ${(timeMs / 1000).toFixed(3)}`);
  }

  /** The newest record counted under `key` (or another key of its slot), if one was shipped. */
  get(key: string): RecentRecord | undefined {
    const k = this.layout.exemplarSlot(key);
    if (k < 0 || Number.isNaN(this.numbers[k * 3 + 2])) return undefined;
    const n = this.numbers;
    return {
      fingerprint: this.fingerprint(k),
      occurrence: n[k * 3] as number,
      value: n[k * 3 + 1] as number,
      timeMs: n[k * 3 + 2] as number,
    };
  }
}
