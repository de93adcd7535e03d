/**
 * A log page's records, each built and checked against its schema only when asked for. A read looks
 * at every record's time but builds only the records it may ship (most of a page was read before), so
 * a page from the wire is kept as its bytes with the records' places in them (jsonScan.ts).
 */
import { hasProblems, type RecordCheck, type Validated } from "./validate.js";

export interface LogRecords<T> {
  readonly length: number;
  /** Record i's `timestamp` as sent, unchecked: undefined when it has none (or is no object). */
  timestamp(i: number): unknown;
  /**
   * Record i as its schema gives it, or undefined when it does not fit the schema: reported once (the
   * first time it is asked for), with the record's index in the page.
   */
  record(i: number): T | undefined;
  /**
   * Record i as `record` gives it, but a record that does not fit is not reported (nor remembered):
   * for a page's identity, which must not report a record at every read of a page that holds it.
   */
  quietRecord(i: number): T | undefined;
  /** No record is read any more: what holds the page's bytes may have them back. */
  release?(): void;
}

/** Records already checked (a page decoded whole). */
export function checkedRecords<T extends { timestamp: unknown }>(items: readonly T[]): LogRecords<T> {
  return {
    length: items.length,
    timestamp: (i) => items[i]?.timestamp,
    record: (i) => items[i],
    quietRecord: (i) => items[i],
  };
}

/** A page's bytes, lent: handed back (to be read into again) once no record is read from them. */
export interface PageBytes {
  readonly bytes: Buffer;
  release(): void;
}

/** Integers up to this many digits are read from the bytes themselves (exact: below 2^53). */
const PLAIN_INTEGER_DIGITS = 15;

/** Records of a page's bytes, at the places its scan found (four numbers a record: see LogPageSpans). */
export class BytesRecords<T> implements LogRecords<T> {
  /** Records built so far: the record, or null for one that did not fit. */
  private built: Array<T | null> | undefined;
  private tally: Validated<T> = { items: [], rejected: 0 };
  private page: PageBytes | undefined;

  constructor(
    page: PageBytes,
    private readonly places: Int32Array,
    private readonly check: RecordCheck<T>,
    private readonly report: (problems: Validated<unknown>) => void,
  ) {
    this.page = page;
  }

  get length(): number {
    return this.places.length / 4;
  }

  private get bytes(): Buffer {
    if (!this.page) throw new Error("a log page's records were read after its bytes were handed back");
    return this.page.bytes;
  }

  timestamp(i: number): unknown {
    const start = this.places[4 * i + 2] ?? -1;
    if (start < 0) return undefined;
    const end = this.places[4 * i + 3] as number;
    const b = this.bytes;
    if (b[start] === 0x22) {
      let plain = true;
      for (let k = start + 1; k < end - 1 && plain; k++) plain = b[k] !== 0x5c;
      if (plain) return b.toString("utf8", start + 1, end - 1);
    } else if (end - start <= PLAIN_INTEGER_DIGITS) {
      // Epoch seconds, mostly: read without making a string of them.
      let n = 0;
      let k = start;
      for (; k < end; k++) {
        const c = b[k] as number;
        if (c < 0x30 || c > 0x39) break;
        n = n * 10 + (c - 0x30);
      }
      if (k === end) return n;
    }
    return JSON.parse(b.toString("utf8", start, end)) as unknown;
  }

  private text(i: number): string {
    return this.bytes.toString("utf8", this.places[4 * i], this.places[4 * i + 1]);
  }

  /** Record i parsed and checked, its problems noted in `tally`. */
  private build(i: number, tally: Validated<T>): T | undefined {
    return this.check(JSON.parse(this.text(i)) as unknown, i, tally);
  }

  quietRecord(i: number): T | undefined {
    const known = this.built?.[i];
    if (known !== undefined) return known ?? undefined;
    const item = this.build(i, { items: [], rejected: 0 });
    // Kept only when it fits: one that does not is still reported when a read asks for it.
    if (item !== undefined) (this.built ??= new Array<T | null>(this.length))[i] = item;
    return item;
  }

  record(i: number): T | undefined {
    const built = (this.built ??= new Array<T | null>(this.length));
    const known = built[i];
    if (known !== undefined) return known ?? undefined;
    const item = this.build(i, this.tally);
    if (hasProblems(this.tally)) {
      this.report(this.tally);
      this.tally = { items: [], rejected: 0 };
    }
    built[i] = item ?? null;
    return item;
  }

  release(): void {
    this.page?.release();
    this.page = undefined;
  }
}
