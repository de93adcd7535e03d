/**
 * New records of one page, ready to ship: each record encoded once, as soon as it is read, into one
 * buffer for the page (the sink's wire format), beside what the checkpoint needs of it. Shipping a
 * page then copies bytes, and a page held for later (in memory or spooled to disk) is a few buffers,
 * not thousands of objects.
 */
import { ProtoWriter } from "./otlp/protoWriter.js";
import type { PendingRecord } from "./pending.js";
import { counterKeyCount, counterKeyId, counterKeyOf } from "./counterKeys.js";
import { ownedBytes } from "../util/ownedBytes.js";

export interface PreparedPage {
  count: number;
  /** The encoded records, one after the other. */
  bytes: Buffer;
  /** End offset of record i in `bytes` (record i starts where i - 1 ends). */
  ends: Uint32Array;
  fingerprints: string[];
  occurrences: Uint32Array;
  times: Float64Array;
  /** What each record adds to the log-derived counters, for streams with counters. */
  counts?: PageCounts;
}

/**
 * Counter key ids (see counterKeys.ts) and increments, `slots` per record (record i's are at i × slots
 * …); id 0 is an unused slot.
 */
export interface PageCounts {
  slots: number;
  ids: Uint16Array;
  values: Float64Array;
}

/** What a record adds to its stream's counters: `slots` key ids and increments, written at `at`. */
export interface RecordCounter {
  slots: number;
  /** Sees a page's records before any of them is written (a unit decided from their values). */
  prepare?(records: readonly PendingRecord[]): void;
  write(r: PendingRecord, ids: Uint16Array, values: Float64Array, at: number): void;
}

export interface RecordEncoder {
  /** Append record `r`'s encoding to `w`. */
  encode(w: ProtoWriter, r: PendingRecord): void;
  counter?: RecordCounter;
}

/** The counter increments of every record of these pages, added up by key. */
export function addCounts(pages: readonly PreparedPage[]): Record<string, number> {
  const totals = new Float64Array(counterKeyCount());
  const used = new Uint8Array(totals.length);
  for (const page of pages) {
    const c = page.counts;
    if (!c) continue;
    const { ids, values } = c;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i] as number;
      totals[id] = (totals[id] as number) + (values[i] as number);
      used[id] = 1;
    }
  }
  const sums: Record<string, number> = {};
  for (let id = 1; id < totals.length; id++) if (used[id]) sums[counterKeyOf(id)] = totals[id] as number;
  return sums;
}

/**
 * Where every page is encoded before its bytes are copied out: one for the process, since a page is
 * prepared in one synchronous call. A scratch buffer per read (thousands of mostly idle reads a minute
 * at a large account) was 64 KB of malloc each that outlived the read until a full collection, and
 * held tens of megabytes of freed but resident heap between collections.
 */
const scratch = new ProtoWriter(64 * 1024);

/** Encode the page's new records (in the order given). */
export function preparePage(records: readonly PendingRecord[], encoder: RecordEncoder): PreparedPage {
  const writer = scratch;
  const n = records.length;
  const ends = new Uint32Array(n);
  const occurrences = new Uint32Array(n);
  const times = new Float64Array(n);
  const fingerprints = new Array<string>(n);
  const counter = encoder.counter;
  const counts: PageCounts | undefined = counter
    ? {
        slots: counter.slots,
        ids: new Uint16Array(n * counter.slots),
        values: new Float64Array(n * counter.slots),
      }
    : undefined;
  counter?.prepare?.(records);
  writer.reset();
  for (let i = 0; i < n; i++) {
    const r = records[i] as PendingRecord;
    encoder.encode(writer, r);
    ends[i] = writer.pos;
    occurrences[i] = r.occurrence;
    times[i] = r.timeMs;
    fingerprints[i] = r.fingerprint;
    if (counts) (counter as RecordCounter).write(r, counts.ids, counts.values, i * counts.slots);
  }
  // Copied out of the scratch writer into a buffer of its own.
  const bytes = ownedBytes(writer.view());
  const page: PreparedPage = {
    count: n,
    bytes,
    ends,
    fingerprints,
    occurrences,
    times,
  };
  if (counts) page.counts = counts;
  return page;
}

/** Records `from` (inclusive) to `to` (exclusive) of a page, as a page of their own. */
export function slicePage(page: PreparedPage, from: number, to: number): PreparedPage {
  const start = from === 0 ? 0 : (page.ends[from - 1] as number);
  const end = to === 0 ? 0 : (page.ends[to - 1] as number);
  const ends = page.ends.slice(from, to);
  for (let i = 0; i < ends.length; i++) ends[i] = (ends[i] as number) - start;
  const slice: PreparedPage = {
    count: to - from,
    bytes: page.bytes.subarray(start, end),
    ends,
    fingerprints: page.fingerprints.slice(from, to),
    occurrences: page.occurrences.slice(from, to),
    times: page.times.slice(from, to),
  };
  if (page.counts) {
    const { slots, ids, values } = page.counts;
    slice.counts = {
      slots,
      ids: ids.slice(from * slots, to * slots),
      values: values.slice(from * slots, to * slots),
    };
  }
  return slice;
}

/** Byte range of record i. */
export function recordBytes(page: PreparedPage, i: number): Buffer {
  return page.bytes.subarray(i === 0 ? 0 : (page.ends[i - 1] as number), page.ends[i] as number);
}

// ------------------------------------------------------------------ spool frames

/** A typed array's bytes, as a Buffer over the same memory (no copy). */
function bytesOf(a: ArrayBufferView): Buffer {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}

/** Binary sections of a spool frame, in order after the header. */
const SECTIONS = 5;

/**
 * A page as bytes for the spool: [u32 header length][header JSON][u32 length × 5][ends][occurrences]
 * [times][counter key indices][counter increments][records]. The header holds the fingerprints and
 * the counter slots and keys (each distinct key once: a record's keys are indices into them); the
 * numbers are written as their bytes, not as JSON. Given as parts, to be written one after the other
 * (no copy of the records into one buffer first).
 */
export function serializePage(page: PreparedPage): Buffer[] {
  const c = page.counts;
  const dictionary = [""];
  let indices = new Uint16Array(0);
  if (c) {
    // The frame names its keys: ids are this process's, a frame may be read by the next one.
    const local = new Int32Array(counterKeyCount()).fill(-1);
    local[0] = 0;
    indices = new Uint16Array(c.ids.length);
    for (let i = 0; i < c.ids.length; i++) {
      const id = c.ids[i] as number;
      let k = local[id] as number;
      if (k < 0) {
        k = local[id] = dictionary.length;
        dictionary.push(counterKeyOf(id));
      }
      indices[i] = k;
    }
  }
  const json = JSON.stringify([page.fingerprints, c ? [c.slots, dictionary] : null]);
  const sections = [page.ends, page.occurrences, page.times, indices, c?.values ?? new Float64Array(0)];
  const head = Buffer.allocUnsafe(4 + Buffer.byteLength(json, "utf8") + 4 * SECTIONS);
  let at = 4 + head.write(json, 4, "utf8");
  head.writeUInt32LE(at - 4, 0);
  for (const section of sections) at = head.writeUInt32LE(section.byteLength, at);
  return [head.subarray(0, at), ...sections.map(bytesOf), page.bytes];
}

export function deserializePage(frame: Buffer): PreparedPage {
  const headerLength = frame.readUInt32LE(0);
  const [fingerprints, counts] = JSON.parse(frame.subarray(4, 4 + headerLength).toString("utf8")) as [
    string[],
    [number, string[]] | null,
  ];
  let at = 4 + headerLength;
  const lengths: number[] = [];
  for (let i = 0; i < SECTIONS; i++, at += 4) lengths.push(frame.readUInt32LE(at));
  // Copied: the frame's offset need not be aligned for the typed arrays.
  const section = (i: number): ArrayBuffer => {
    const from = frame.byteOffset + at;
    at += lengths[i] as number;
    return frame.buffer.slice(from, from + (lengths[i] as number)) as ArrayBuffer;
  };
  const ends = new Uint32Array(section(0));
  const occurrences = new Uint32Array(section(1));
  const times = new Float64Array(section(2));
  const indices = new Uint16Array(section(3));
  const values = new Float64Array(section(4));
  const page: PreparedPage = {
    count: fingerprints.length,
    bytes: frame.subarray(at),
    ends,
    fingerprints,
    occurrences,
    times,
  };
  if (counts) {
    const [slots, dictionary] = counts;
    const global = Uint16Array.from(dictionary, counterKeyId);
    for (let i = 0; i < indices.length; i++) indices[i] = global[indices[i] as number] as number;
    page.counts = { slots, ids: indices, values };
  }
  return page;
}
