/**
 * The fingerprints a stream delivered within its overlap window, with their entry times and occurrence
 * counts, in delivery order (delivering one again moves it to the end), pruned from the oldest end.
 *
 * Thousands of streams each hold one, busy ones thousands of entries, and every record read looks one
 * up, so it is kept in flat arrays rather than a Map of strings: a fingerprint (32 hex characters, 128
 * bits) is stored as three numbers (48, 48 and 32 bits) beside its time, 32 bytes a slot, found through
 * an open-addressing index; an entry costs about 50 bytes with the arrays' slack, a map entry of
 * strings 110 to 180 (docs/benchmarks.md). Slots are appended in delivery order; one delivered again
 * or pruned is marked empty, and the arrays are compacted (or grown) when they fill, and shrunk once
 * pruning leaves them two-thirds empty. An empty window holds no arrays.
 *
 * Anything that is not 32 lowercase hex characters (checkpoints written by other versions, tests) is
 * kept as its string in a map created for it, in the same order as the rest.
 */
import { FINGERPRINT_WORDS, hex, readFingerprint } from "./fingerprintHex.js";

/** Numbers per slot: time, then the fingerprint's three parts. */
const STRIDE = 4;
const TIME = 0;
const K0 = 1;
const K1 = 2;
const K2 = 3;
/** K0 of a slot whose entry was delivered again later or pruned. */
const VACANT = -1;
/** K0 of a slot whose fingerprint is not hex; its string is in `otherBySlot`. */
const OTHER = -2;
/** Index cells: no slot, a slot pruned (the probe goes on past it). */
const FREE = -1;
const GONE = -2;
/** Slots of the smallest arrays. */
const MIN_SLOTS = 4;
/**
 * Up to this many slots, a lookup scans them: no index (8 to 16 bytes a slot), and a scan of 64 slots
 * costs under 0.1 µs. Most streams hold a few dozen fingerprints.
 */
const SCANNED_SLOTS = 64;

/** Hashes are keyed per process, so entries crafted to collide in one index cannot be written ahead. */
const SEED_A = (Math.random() * 0x1_0000_0000) | 0;
const SEED_B = (Math.random() * 0x1_0000_0000) | 0;

/** The parts of the fingerprint `parseHex` read last (module scope: a lookup allocates nothing). */
let p0 = 0;
let p1 = 0;
let p2 = 0;

/** Read a 32-hex-character fingerprint into p0, p1, p2; false when `fp` is anything else. */
function parseHex(fp: string): boolean {
  if (!readFingerprint(fp)) return false;
  const w = FINGERPRINT_WORDS;
  const w1 = w[1] as number;
  p0 = (w[0] as number) * 0x1_0000 + (w1 >>> 16);
  p1 = (w1 & 0xffff) * 0x1_0000_0000 + (w[2] as number);
  p2 = w[3] as number;
  return true;
}

/** Index cell to start probing at, for parts b (48 bits) and c (32 bits), in an index of mask + 1 cells. */
function cellOf(b: number, c: number, mask: number): number {
  const h = Math.imul(c ^ SEED_A, 0x9e3779b1) ^ Math.imul((b % 0x1_0000_0000) ^ SEED_B, 0x85ebca6b);
  return (h ^ (h >>> 15)) & mask;
}

export class OverlapWindow {
  /** STRIDE numbers per slot, slots in delivery order; undefined while empty. */
  private slots: Float64Array | undefined;
  /** Slot of each hex fingerprint by its hash (linear probing), twice as many cells as slots. */
  private index: Int32Array | undefined;
  /** Slots in use: [head, tail); before head all are vacant. */
  private head = 0;
  private tail = 0;
  private live = 0;
  /** Occurrences of the slots delivered more than once (most are delivered once). */
  private counts: Map<number, number> | undefined;
  /** Fingerprints that are not hex: slot by fingerprint and back. */
  private other: Map<string, number> | undefined;
  private otherBySlot: Map<number, string> | undefined;

  /** Fingerprints held. */
  get size(): number {
    return this.live;
  }

  /** Occurrences of `fp` delivered (0 when it is not in the window). */
  count(fp: string): number {
    const slot = this.find(fp);
    return slot < 0 ? 0 : this.countAt(slot);
  }

  /** Time of the entry `fp` (ms), or undefined when it is not in the window. */
  timeOf(fp: string): number | undefined {
    const slot = this.find(fp);
    return slot < 0 ? undefined : (this.slots as Float64Array)[slot * STRIDE + TIME];
  }

  /**
   * `fp` was delivered (again): it moves to the newest end with time `timeMs`; its count becomes
   * `occurrences` when that is more than one, and otherwise stays what it was (1 for a new one).
   */
  deliver(fp: string, occurrences: number, timeMs: number): void {
    this.reserveSlot();
    const hexKey = parseHex(fp);
    const slots = this.slots as Float64Array;
    const at = this.tail++;
    const o = at * STRIDE;
    slots[o + TIME] = timeMs;
    let was: number;
    if (hexKey) {
      slots[o + K0] = p0;
      slots[o + K1] = p1;
      slots[o + K2] = p2;
      was = this.placeInIndex(at);
    } else {
      slots[o + K0] = OTHER;
      this.other ??= new Map();
      this.otherBySlot ??= new Map();
      was = this.other.get(fp) ?? -1;
      this.other.set(fp, at);
      this.otherBySlot.set(at, fp);
    }
    let n = occurrences > 1 ? occurrences : 1;
    if (was >= 0) {
      if (n === 1) n = this.countAt(was);
      this.vacate(was);
    } else {
      this.live += 1;
    }
    if (n > 1) (this.counts ??= new Map()).set(at, n);
  }

  /**
   * Forget entries from the oldest end that are older than `cutoffMs`, up to the first one that is
   * not; entries stamped after `highWaterMs` (ahead of the mark) are kept and passed over.
   */
  prune(cutoffMs: number, highWaterMs: number): void {
    const slots = this.slots;
    if (!slots) return;
    for (let at = this.head; at < this.tail; at++) {
      const o = at * STRIDE;
      if (slots[o + K0] === VACANT) continue;
      const t = slots[o + TIME] as number;
      if (t > highWaterMs) continue;
      if (t >= cutoffMs) break;
      this.forget(at);
    }
    while (this.head < this.tail && slots[this.head * STRIDE + K0] === VACANT) this.head += 1;
    if (this.live === 0) this.clear();
    else if (this.capacity > MIN_SLOTS && this.live * 3 <= this.capacity)
      this.resize(this.slotsFor(this.live));
  }

  /** Every entry, oldest delivery first. */
  forEach(visit: (fp: string, occurrences: number, timeMs: number) => void): void {
    const slots = this.slots;
    if (!slots) return;
    for (let at = this.head; at < this.tail; at++) {
      const o = at * STRIDE;
      const k0 = slots[o + K0] as number;
      if (k0 === VACANT) continue;
      const fp =
        k0 === OTHER
          ? (this.otherBySlot?.get(at) as string)
          : hex(k0, 12) + hex(slots[o + K1] as number, 12) + hex(slots[o + K2] as number, 8);
      visit(fp, this.countAt(at), slots[o + TIME] as number);
    }
  }

  /** The fingerprints, oldest delivery first. */
  fingerprints(): string[] {
    const out: string[] = [];
    this.forEach((fp) => out.push(fp));
    return out;
  }

  /** Slots the arrays hold (0 while the window is empty: it holds no arrays then). */
  get capacity(): number {
    return this.slots ? this.slots.length / STRIDE : 0;
  }

  private countAt(slot: number): number {
    return this.counts?.get(slot) ?? 1;
  }

  /** The slot holding `fp`, or -1. */
  private find(fp: string): number {
    if (!parseHex(fp)) return this.other?.get(fp) ?? -1;
    const { slots, index } = this;
    if (!slots) return -1;
    if (!index) return this.scan(p0, p1, p2, this.tail);
    const mask = index.length - 1;
    for (let cell = cellOf(p1, p2, mask); ; cell = (cell + 1) & mask) {
      const at = index[cell] as number;
      if (at === FREE) return -1;
      if (at === GONE) continue;
      const o = at * STRIDE;
      if (slots[o + K2] === p2 && slots[o + K1] === p1 && slots[o + K0] === p0) return at;
    }
  }

  /** The slot before `end` holding the hex fingerprint a, b, c, or -1 (a small window has no index). */
  private scan(a: number, b: number, c: number, end: number): number {
    const slots = this.slots as Float64Array;
    for (let at = end - 1; at >= this.head; at--) {
      const o = at * STRIDE;
      if (slots[o + K2] === c && slots[o + K1] === b && slots[o + K0] === a) return at;
    }
    return -1;
  }

  /**
   * Point the index at slot `at` for its (hex) fingerprint: the cell of the slot that held it before,
   * whose number is returned, or a free cell (-1 returned).
   */
  private placeInIndex(at: number): number {
    const slots = this.slots as Float64Array;
    const o = at * STRIDE;
    const a = slots[o + K0] as number;
    const b = slots[o + K1] as number;
    const c = slots[o + K2] as number;
    const index = this.index;
    if (!index) return this.scan(a, b, c, at);
    const mask = index.length - 1;
    for (let cell = cellOf(b, c, mask); ; cell = (cell + 1) & mask) {
      const was = index[cell] as number;
      if (was === FREE) {
        index[cell] = at;
        return -1;
      }
      if (was === GONE) continue;
      const w = was * STRIDE;
      if (slots[w + K2] === c && slots[w + K1] === b && slots[w + K0] === a) {
        index[cell] = at;
        return was;
      }
    }
  }

  /** Mark a slot empty after its fingerprint moved on to a newer slot (the index already points there). */
  private vacate(at: number): void {
    (this.slots as Float64Array)[at * STRIDE + K0] = VACANT;
    if (this.counts?.delete(at) && this.counts.size === 0) this.counts = undefined;
    this.otherBySlot?.delete(at);
  }

  /** Remove a slot's entry from the window. */
  private forget(at: number): void {
    const slots = this.slots as Float64Array;
    const o = at * STRIDE;
    if (slots[o + K0] === OTHER) {
      this.other?.delete(this.otherBySlot?.get(at) as string);
    } else if (this.index) {
      const index = this.index;
      const mask = index.length - 1;
      let cell = cellOf(slots[o + K1] as number, slots[o + K2] as number, mask);
      while (index[cell] !== at) cell = (cell + 1) & mask;
      index[cell] = GONE;
    }
    this.vacate(at);
    this.live -= 1;
  }

  /** Room for one more slot at the tail: compact in place when a third is vacant, else grow by half. */
  private reserveSlot(): void {
    const capacity = this.capacity;
    if (this.tail < capacity) return;
    this.resize(this.live * 3 <= capacity * 2 ? Math.max(capacity, MIN_SLOTS) : this.slotsFor(this.live));
  }

  /** Slots for `live` entries and half as many more. */
  private slotsFor(live: number): number {
    return Math.max(MIN_SLOTS, Math.ceil(live * 1.5));
  }

  /** Copy the entries into arrays of `capacity` slots, oldest first from slot 0, and index them anew. */
  private resize(capacity: number): void {
    const from = this.slots;
    // The same size: compacted in place (each entry moves down, never onto one not yet moved).
    const slots = from?.length === capacity * STRIDE ? from : new Float64Array(capacity * STRIDE);
    let index: Int32Array | undefined;
    if (capacity > SCANNED_SLOTS) {
      // at least twice as many cells as slots: probes stay short
      let cells = 2;
      while (cells < capacity * 2) cells *= 2;
      index = this.index?.length === cells ? this.index.fill(FREE) : new Int32Array(cells).fill(FREE);
    }
    const counts = this.counts;
    const otherBySlot = this.otherBySlot;
    this.counts = undefined;
    if (otherBySlot) this.otherBySlot = new Map();
    this.slots = slots;
    this.index = index;
    let to = 0;
    if (from) {
      for (let at = this.head; at < this.tail; at++) {
        const o = at * STRIDE;
        if (from[o + K0] === VACANT) continue;
        if (slots !== from || to !== at) {
          for (let k = 0; k < STRIDE; k++) slots[to * STRIDE + k] = from[o + k] as number;
        }
        const n = counts?.get(at);
        if (n !== undefined) (this.counts ??= new Map()).set(to, n);
        if (from[o + K0] === OTHER) {
          const fp = otherBySlot?.get(at) as string;
          this.otherBySlot?.set(to, fp);
          this.other?.set(fp, to);
        } else {
          this.placeInIndex(to);
        }
        to += 1;
      }
    }
    this.head = 0;
    this.tail = to;
  }

  /** Let go of every array and map (the window is empty). */
  private clear(): void {
    this.slots = undefined;
    this.index = undefined;
    this.counts = undefined;
    this.other = undefined;
    this.otherBySlot = undefined;
    this.head = 0;
    this.tail = 0;
    this.live = 0;
  }
}
