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
  lateMs: 0,
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

describe("entries listed by when they were indexed, not by their time", () => {
  it("a late entry amid newer ones ends nothing: the read goes on below the bound by the lateness seen", () => {
    // Entries below the bound were delivered before, but the late one.
    const delivered = new Set<string>();
    const reader = new PageReader(bounds, (fp) => (delivered.has(fp) ? 1 : 0), fingerprint);
    const old = (t: number) => {
      const row = at(t);
      delivered.add(fingerprint(row.entry));
      return row;
    };
    // Newest first, with one entry 20 s late (below the lower bound) among them.
    const first = reader.accept(
      page([at(HIGH + 5_000), at(HIGH - 20_000, "late"), at(HIGH + 4_000), at(HIGH + 3_000)]).entries,
    );
    expect(first.kept.map((k) => (k.entry as { message?: string }).message)).toEqual([
      `at ${HIGH + 5_000}`,
      "late",
      `at ${HIGH + 4_000}`,
      `at ${HIGH + 3_000}`,
    ]);
    expect(reader.order).toBe("newest-first");
    expect(reader.complete).toBe(false);
    // Once out of order, a page whose last entries are below the bound does not end the read, unless
    // they go further below it than the lateness seen (the late entry: 20 s) ...
    reader.accept(page([at(HIGH + 2_000), old(HIGH - 11_000), old(HIGH - 12_000)]).entries);
    expect(reader.complete).toBe(false);
    reader.accept(page([at(HIGH + 1_000), old(HIGH - 13_000), old(HIGH - 29_000)]).entries);
    expect(reader.complete).toBe(false);
    reader.accept(page([at(HIGH + 500), old(HIGH - 14_000), old(HIGH - 31_000)]).entries);
    expect(reader.complete).toBe(true);
  });

  it("out of order, a page wholly below the bound ends the read, however late the entries were", () => {
    const reader = new PageReader(bounds, () => 0, fingerprint);
    reader.accept(page([at(HIGH + 5_000), at(HIGH - 50_000, "late"), at(HIGH + 4_000)]).entries);
    reader.accept(page([at(HIGH - 13_000), at(HIGH - 14_000)]).entries);
    expect(reader.complete).toBe(true);
  });

  it("an entry older than the dedupe floor indexed among newer ones is checked, and shipped when new", () => {
    const old = at(HIGH - 600_000, "ten minutes late");
    const delivered = at(HIGH - 700_000, "indexed late, shipped before");
    const deliveredFp = fingerprint(delivered.entry);
    const reader = new PageReader(bounds, (fp) => (fp === deliveredFp ? 1 : 0), fingerprint);
    const newer = (i: number) => at(HIGH + 9_000 - i * 1_000);
    const { entries, built } = page([
      newer(0),
      newer(1),
      old,
      newer(2),
      newer(3),
      delivered,
      newer(4),
      newer(5),
    ]);
    const v = reader.accept(entries);
    expect(built).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(v.kept.map((k) => (k.entry as { message?: string }).message)).toContain("ten minutes late");
    expect(v.deduplicated).toBe(1);
    expect(v.maxLatenessMs).toBe(600_000);
  });

  it("a late entry shipped before, met again, does not end the late ones: one indexing second may be listed oldest stamp first", () => {
    // The entries the platform indexed in one second, oldest stamp first: one shipped by the last read
    // (it came 5 minutes late), one indexed after that read began, then the second's own entries.
    const shippedLate = at(HIGH - 300_000, "late, shipped by the last read");
    const newest = at(HIGH, "the newest delivered");
    const known = new Set([fingerprint(shippedLate.entry), fingerprint(newest.entry)]);
    const reader = new PageReader(bounds, (fp) => (known.has(fp) ? 1 : 0), fingerprint);
    const { entries } = page([
      at(HIGH + 2_000),
      shippedLate,
      at(HIGH - 200_000, "late, indexed after the last read began"),
      at(HIGH + 1_000),
      newest,
      at(HIGH - 400_000, "listed after the newest delivered: delivered long ago"),
      // The seconds indexed before, in descending order but for a few entries.
      ...Array.from({ length: 12 }, (_, i) => at(HIGH - 70_000 - i * 1_000)),
    ]);
    const v = reader.accept(entries);
    expect(v.kept.map((k) => (k.entry as { message?: string }).message)).toEqual([
      `at ${HIGH + 2_000}`,
      "late, indexed after the last read began",
      `at ${HIGH + 1_000}`,
    ]);
    expect(v.deduplicated).toBe(2);
  });

  it("in time order, the entries below the floor at a page's end are not built, and end the read", () => {
    const newestDelivered = fingerprint(at(HIGH).entry);
    const reader = new PageReader(bounds, (fp) => (fp === newestDelivered ? 1 : 0), fingerprint);
    const { entries, built } = page([at(HIGH + 1_000), at(HIGH), at(HIGH - 70_000), at(HIGH - 80_000)]);
    const v = reader.accept(entries);
    expect(built).toEqual([0, 1]);
    expect(v.kept.map((k) => k.timeMs)).toEqual([HIGH + 1_000]);
    expect(reader.complete).toBe(true);
  });

  it("an entry below the floor before the newest delivered one, last on its page, is late: shipped, and the read goes on", () => {
    const reader = new PageReader(bounds, () => 0, fingerprint);
    const { entries } = page([at(HIGH + 2_000), at(HIGH + 1_000), at(HIGH - 600_000)]);
    const v = reader.accept(entries);
    expect(v.kept.map((k) => k.timeMs)).toEqual([HIGH + 2_000, HIGH + 1_000, HIGH - 600_000]);
    expect(v.late).toBe(1);
    expect(reader.complete).toBe(false);
  });

  it("a stream that never delivered takes entries below its start point for history, not late ones", () => {
    const fresh = { ...bounds, lowerMs: HIGH, dedupeFloorMs: HIGH, highWaterMs: HIGH };
    const reader = new PageReader(fresh, () => 0, fingerprint);
    const { entries } = page([at(HIGH + 2_000), at(HIGH + 1_000), at(HIGH - 600_000)]);
    expect(reader.accept(entries).kept.map((k) => k.timeMs)).toEqual([HIGH + 2_000, HIGH + 1_000]);
    expect(reader.complete).toBe(true);
  });

  it("the order is what most of a page says, whatever its first two entries", () => {
    const reader = new PageReader(bounds, () => 0, fingerprint);
    reader.accept(
      page([at(HIGH - 30_000), at(HIGH + 4_000), at(HIGH + 3_000), at(HIGH + 2_000), at(HIGH + 1_000)])
        .entries,
    );
    expect(reader.order).toBe("newest-first");
  });

  it("a stream late before reads on to a page wholly below the bound, and a shuffled page is not taken for late entries", () => {
    const reader = new PageReader({ ...bounds, lateMs: 5_000 }, () => 0, fingerprint);
    reader.accept(page([at(HIGH + 2_000), at(HIGH + 1_000), at(HIGH - 11_000)]).entries);
    expect(reader.complete).toBe(false);
    // Shuffled: as often up as down. Entries below the floor there are taken as delivered long ago.
    const shuffled = new PageReader(bounds, () => 0, fingerprint);
    const { entries, built } = page([
      at(HIGH - 70_000),
      at(HIGH + 1_000),
      at(HIGH - 90_000),
      at(HIGH + 3_000),
      at(HIGH - 80_000),
      at(HIGH + 2_000),
    ]);
    shuffled.accept(entries);
    expect(built).toEqual([1, 3, 5]);
    // And it never ends the read: any page after it may hold new entries.
    shuffled.accept(page([at(HIGH - 95_000), at(HIGH - 96_000)]).entries);
    expect(shuffled.complete).toBe(false);
  });
});
