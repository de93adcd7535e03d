/**
 * A read builds only the entries that may be new: entries older than the dedupe floor are known
 * delivered, so only their times are read; a record that may be new but does not fit its schema is
 * counted as malformed, as is one without a usable time.
 */
import { describe, expect, it } from "vitest";
import { fingerprint } from "../../../../src/logs/entry.js";
import type { StreamEntry } from "../../../../src/logs/pending.js";
import { PageReader } from "../../../../src/logs/read/pageReader.js";
import type { PageEntries, ReadBounds } from "../../../../src/logs/read/types.js";

const HIGH = 1_795_000_000_000;
const bounds: ReadBounds = {
  lowerMs: HIGH - 10_000,
  dedupeFloorMs: HIGH - 60_000,
  highWaterMs: HIGH,
  nowMs: HIGH + 5_000,
  futureToleranceMs: 60_000,
};

/** A page whose entries are counted as they are built; `null` is a record that does not fit. */
function page(rows: Array<{ t: number | undefined; entry: StreamEntry | null }>) {
  const built: number[] = [];
  const entries: PageEntries = {
    length: rows.length,
    timeMs: (i) => rows[i]?.t,
    entry: (i) => {
      built.push(i);
      return rows[i]?.entry ?? undefined;
    },
    quietEntry: (i) => rows[i]?.entry ?? undefined,
    release: () => undefined,
  };
  return { entries, built };
}

const at = (t: number, message = `at ${t}`) => ({ t, entry: { timestamp: t / 1000, message } });

describe("a page read", () => {
  it("builds no entry older than the dedupe floor, and keeps the new ones", () => {
    const rows = [
      at(HIGH + 2_000),
      at(HIGH + 1_000),
      at(HIGH), // delivered before (see below)
      at(HIGH - 20_000), // below the lower bound, above the floor: checked, a late arrival
      ...Array.from({ length: 50 }, (_, i) => at(HIGH - 61_000 - i * 1_000)),
    ];
    const deliveredFp = fingerprint(rows[2]?.entry);
    const reader = new PageReader(bounds, (fp) => (fp === deliveredFp ? 1 : 0), fingerprint);
    const { entries, built } = page(rows);
    const v = reader.accept(entries);
    expect(built).toEqual([0, 1, 2, 3]);
    expect(v.kept.map((k) => k.timeMs)).toEqual([HIGH + 2_000, HIGH + 1_000, HIGH - 20_000]);
    expect(v.deduplicated).toBe(1);
    expect(v.late).toBe(1);
    expect(reader.order).toBe("newest-first");
    expect(reader.reachedLower).toBe(true);
    expect(reader.oldestSeen).toBe(HIGH - 61_000 - 49_000);
  });

  it("counts a record that may be new but does not fit, and one without a usable time, as malformed", () => {
    const rows = [
      at(HIGH + 3_000),
      { t: HIGH + 2_000, entry: null },
      { t: undefined, entry: null },
      at(HIGH + 1_000),
    ];
    const reader = new PageReader(bounds, () => 0, fingerprint);
    const { entries, built } = page(rows);
    const v = reader.accept(entries);
    expect(v.malformed).toBe(2);
    expect(v.kept.map((k) => k.timeMs)).toEqual([HIGH + 3_000, HIGH + 1_000]);
    // The record without a time is built too: so one that does not fit its schema is reported.
    expect(built).toEqual([0, 1, 2, 3]);
  });
});
