/**
 * A log page's records, each built and checked against its schema only when asked for. A read looks
 * at every record's time but builds only the records it may ship (most of a page was read before), so
 * a page from the wire is kept as its text with the records' places in it (jsonScan.ts).
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
  /** Record i's text as sent, when the records came as text (a page's identity is made of it). */
  text?(i: number): string;
}

/** Records already checked (a page decoded whole). */
export function checkedRecords<T extends { timestamp: unknown }>(items: readonly T[]): LogRecords<T> {
  return {
    length: items.length,
    timestamp: (i) => items[i]?.timestamp,
    record: (i) => items[i],
  };
}

/** Records of a page's text, at the places its scan found (four numbers a record: see LogPageSpans). */
export class TextRecords<T> implements LogRecords<T> {
  /** Records built so far: the record, or null for one that did not fit. */
  private built: Array<T | null> | undefined;
  private tally: Validated<T> = { items: [], rejected: 0 };

  constructor(
    private readonly page: string,
    private readonly places: Int32Array,
    private readonly check: RecordCheck<T>,
    private readonly report: (problems: Validated<unknown>) => void,
  ) {}

  get length(): number {
    return this.places.length / 4;
  }

  timestamp(i: number): unknown {
    const start = this.places[4 * i + 2] ?? -1;
    if (start < 0) return undefined;
    const end = this.places[4 * i + 3] as number;
    const text = this.page;
    if (text.charCodeAt(start) === 0x22) {
      let plain = true;
      for (let k = start + 1; k < end - 1 && plain; k++) plain = text.charCodeAt(k) !== 0x5c;
      if (plain) return text.slice(start + 1, end - 1);
    }
    return JSON.parse(text.slice(start, end)) as unknown;
  }

  text(i: number): string {
    return this.page.slice(this.places[4 * i], this.places[4 * i + 1]);
  }

  record(i: number): T | undefined {
    const built = (this.built ??= new Array<T | null>(this.length));
    const known = built[i];
    if (known !== undefined) return known ?? undefined;
    const value = JSON.parse(this.text(i)) as unknown;
    const item = this.check(value, i, this.tally);
    if (hasProblems(this.tally)) {
      this.report(this.tally);
      this.tally = { items: [], rejected: 0 };
    }
    built[i] = item ?? null;
    return item;
  }
}
