/** A page's records as a read sees them: their times read once, in an array; the entries built on demand. */
import type { LogRecords } from "../../api/logRecords.js";
import { entryTimeMs } from "../entry.js";
import type { StreamEntry } from "../pending.js";
import type { PageEntries } from "./types.js";

export class RecordEntries implements PageEntries {
  /** Each entry's time, NaN for none: read when first asked for (the page may be a repeat). */
  private times: Float64Array | undefined;

  constructor(private readonly records: LogRecords<StreamEntry>) {}

  get length(): number {
    return this.records.length;
  }

  timeMs(i: number): number | undefined {
    const t = (this.times ??= this.readTimes())[i] ?? Number.NaN;
    return Number.isNaN(t) ? undefined : t;
  }

  entry(i: number): StreamEntry | undefined {
    return this.records.record(i);
  }

  quietEntry(i: number): StreamEntry | undefined {
    return this.records.quietRecord(i);
  }

  release(): void {
    this.records.release?.();
  }

  private readTimes(): Float64Array {
    const times = new Float64Array(this.records.length);
    for (let i = 0; i < times.length; i++) times[i] = entryTimeMs(this.records.timestamp(i)) ?? Number.NaN;
    return times;
  }
}
