/**
 * The overlap window keeps the semantics of the two maps it replaced (fingerprint → time in delivery
 * order, fingerprint → occurrences for repeats): checked case by case, then against that Map-based
 * window on random deliveries and prunes, snapshot text included.
 */
import { describe, expect, it } from "vitest";
import {
  applyDelta,
  newCheckpoint,
  parseSnapshot,
  prune,
  serializeSnapshot,
} from "../../../src/logs/checkpoint.js";
import { OverlapWindow } from "../../../src/logs/overlapWindow.js";

/** A 32-hex-character fingerprint for `i` (spread over all its digits, as sha256 ones are). */
const fp = (i: number): string =>
  (i * 0x9e3779b1 + 0x1234567).toString(16).padStart(12, "0").slice(-12) +
  (i * 7919 + 3).toString(16).padStart(12, "0") +
  ((i * 2654435761) % 0x1_0000_0000).toString(16).padStart(8, "0");

/** The window as two maps, as checkpoints held it before (the reference). */
class MapWindow {
  readonly recent = new Map<string, number>();
  readonly repeats = new Map<string, number>();

  count(f: string): number {
    return this.recent.has(f) ? (this.repeats.get(f) ?? 1) : 0;
  }

  deliver(f: string, n: number, t: number): void {
    this.recent.delete(f);
    this.recent.set(f, t);
    if (n > 1) this.repeats.set(f, n);
  }

  prune(cutoff: number, highWater: number): void {
    for (const [f, t] of this.recent) {
      if (t > highWater) continue;
      if (t >= cutoff) break;
      this.recent.delete(f);
      this.repeats.delete(f);
    }
  }

  entries(): Array<[string, number, number]> {
    return [...this.recent].map(([f, t]) => [f, this.count(f), t]);
  }
}

function entries(w: OverlapWindow): Array<[string, number, number]> {
  const out: Array<[string, number, number]> = [];
  w.forEach((f, n, t) => out.push([f, n, t]));
  return out;
}

function windowOf(...deliveries: Array<[string, number, number]>): OverlapWindow {
  const w = new OverlapWindow();
  for (const [f, n, t] of deliveries) w.deliver(f, n, t);
  return w;
}

describe("the overlap window", () => {
  it("holds fingerprints in delivery order, with their times and counts", () => {
    const w = windowOf([fp(3), 1, 300], [fp(1), 1, 100], [fp(2), 2, 200]);
    expect(entries(w)).toEqual([
      [fp(3), 1, 300],
      [fp(1), 1, 100],
      [fp(2), 2, 200],
    ]);
    expect(w.size).toBe(3);
    expect(w.count(fp(2))).toBe(2);
    expect(w.count(fp(1))).toBe(1);
    expect(w.count(fp(4))).toBe(0);
    expect(w.timeOf(fp(3))).toBe(300);
    expect(w.timeOf(fp(4))).toBeUndefined();
  });

  it("moves a fingerprint delivered again to the end, with its new time", () => {
    const w = windowOf([fp(1), 1, 100], [fp(2), 1, 200], [fp(3), 1, 300], [fp(1), 1, 400]);
    expect(w.fingerprints()).toEqual([fp(2), fp(3), fp(1)]);
    expect(w.timeOf(fp(1))).toBe(400);
    expect(w.size).toBe(3);
  });

  it.each([
    ["a repeat raises the count", [3], 3],
    ["a later single delivery keeps the count", [3, 1], 3],
    ["a later repeat replaces it", [3, 2], 2],
    ["single deliveries count one", [1, 1], 1],
  ])("%s", (_, deliveries, expected) => {
    const w = new OverlapWindow();
    deliveries.forEach((n, i) => w.deliver(fp(9), n, 100 + i));
    expect(w.count(fp(9))).toBe(expected);
    expect(w.size).toBe(1);
  });

  it("prunes from the oldest end up to the first entry inside the window, passing over entries ahead of the mark", () => {
    const w = windowOf(
      [fp(1), 1, 100],
      [fp(2), 1, 5000], // ahead of the mark: kept, passed over
      [fp(3), 2, 150],
      [fp(4), 1, 900], // inside the window: pruning stops here
      [fp(5), 1, 120], // late, behind an entry inside the window: kept
    );
    w.prune(500, 1000);
    expect(entries(w)).toEqual([
      [fp(2), 1, 5000],
      [fp(4), 1, 900],
      [fp(5), 1, 120],
    ]);
    expect(w.count(fp(3))).toBe(0);
    expect(w.count(fp(1))).toBe(0);
    // Delivered again after it was pruned: new, counted afresh.
    w.deliver(fp(3), 1, 1000);
    expect(w.count(fp(3))).toBe(1);
  });

  it("holds no arrays while empty, grows as it fills, and lets go once pruned empty", () => {
    const w = new OverlapWindow();
    expect(w.capacity).toBe(0);
    w.prune(0, 0);
    expect(w.capacity).toBe(0);
    for (let i = 0; i < 5000; i++) w.deliver(fp(i), 1, i);
    expect(w.size).toBe(5000);
    expect(w.capacity).toBeGreaterThanOrEqual(5000);
    expect(w.capacity).toBeLessThan(2 * 8192);
    for (let i = 0; i < 5000; i++) expect(w.count(fp(i))).toBe(1);
    w.prune(5000, 5000);
    expect(w.size).toBe(0);
    expect(w.capacity).toBe(0);
    expect(w.count(fp(1))).toBe(0);
  });

  it("shrinks when a busy stream goes quiet, keeping what is left in order", () => {
    const w = new OverlapWindow();
    for (let i = 0; i < 4096; i++) w.deliver(fp(i), i % 7 === 0 ? 2 : 1, i);
    const busy = w.capacity;
    w.prune(4090, 4095);
    expect(w.size).toBe(6);
    expect(w.capacity).toBeLessThanOrEqual(16);
    expect(w.capacity).toBeLessThan(busy);
    expect(entries(w)).toEqual(
      [4090, 4091, 4092, 4093, 4094, 4095].map((i) => [fp(i), i % 7 === 0 ? 2 : 1, i]),
    );
  });

  it("gives memory back once pruning leaves it two-thirds empty, not only when the stream goes quiet", () => {
    const w = new OverlapWindow();
    for (let i = 0; i < 90; i++) w.deliver(fp(i), 1, i);
    expect(w.capacity).toBeGreaterThan(90);
    w.prune(60, 89);
    expect(w.size).toBe(30);
    expect(w.capacity).toBeLessThanOrEqual(3 * 30);
    expect(w.capacity).toBeGreaterThanOrEqual(30);
    for (let i = 60; i < 90; i++) expect(w.count(fp(i))).toBe(1);
    expect(w.count(fp(59))).toBe(0);
    // Lookups past the size a scan covers (an index again) find the same entries.
    for (let i = 90; i < 300; i++) w.deliver(fp(i), 1, i);
    for (let i = 60; i < 300; i++) expect(w.count(fp(i))).toBe(1);
  });

  it("does not grow when fingerprints are delivered again and again (the vacated slots are reused)", () => {
    const w = new OverlapWindow();
    for (let round = 0; round < 1000; round++) for (let i = 0; i < 10; i++) w.deliver(fp(i), 1, round);
    expect(w.size).toBe(10);
    expect(w.capacity).toBeLessThanOrEqual(32);
    expect(w.fingerprints()).toEqual(Array.from({ length: 10 }, (_, i) => fp(i)));
  });

  it("keeps fingerprints that are not 32 lowercase hex characters, in the same order as the rest", () => {
    const upper = fp(2).toUpperCase();
    const odd = ["abc", "", "ü".repeat(32), `${fp(1).slice(0, 31)}g`, upper, `${fp(3)}0`];
    const w = windowOf([fp(1), 1, 10], ...odd.map((f, i): [string, number, number] => [f, i + 1, 20 + i]));
    w.deliver(fp(2), 1, 30);
    expect(w.fingerprints()).toEqual([fp(1), ...odd, fp(2)]);
    expect(w.count(upper)).toBe(5);
    expect(w.count(fp(2))).toBe(1);
    w.deliver("abc", 1, 40); // moved to the end, count kept
    expect(w.fingerprints().at(-1)).toBe("abc");
    w.prune(25, 40);
    expect(entries(w)).toEqual([
      [odd[5], 6, 25],
      [fp(2), 1, 30],
      ["abc", 1, 40],
    ]);
    expect(w.count("")).toBe(0);
  });

  it("behaves like the Map-based window over random deliveries and prunes", () => {
    let seed = 7;
    const random = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    const w = new OverlapWindow();
    const ref = new MapWindow();
    let now = 0;
    for (let step = 0; step < 40_000; step++) {
      const roll = random(100);
      if (roll < 80) {
        // mostly new entries near now, some redeliveries, some late or future ones, a few odd keys
        const key = random(20) === 0 ? `k${random(50)}` : fp(random(3000));
        const t = now - random(200) + (random(50) === 0 ? 5000 : 0);
        const n = random(10) === 0 ? 1 + random(4) : 1;
        w.deliver(key, n, t);
        ref.deliver(key, n, t);
      } else if (roll < 95) {
        const key = random(10) === 0 ? `k${random(50)}` : fp(random(3000));
        expect(w.count(key)).toBe(ref.count(key));
      } else {
        now += random(300);
        const overlap = random(3) === 0 ? 0 : 600;
        w.prune(now - overlap, now);
        ref.prune(now - overlap, now);
        expect(w.size).toBe(ref.recent.size);
      }
      if (step % 5000 === 0) expect(entries(w)).toEqual(ref.entries());
    }
    expect(entries(w)).toEqual(ref.entries());
    // and quiet at the end: everything old goes
    w.prune(now + 10_000, now + 10_000);
    ref.prune(now + 10_000, now + 10_000);
    expect(entries(w)).toEqual(ref.entries());
  });
});

describe("the checkpoint's snapshot with the window", () => {
  const withoutTime = (text: string): string => text.replace(/"updatedAt":"[^"]*"/, "");

  it("is written as the Map-based window wrote it, and reads back", () => {
    const cp = newCheckpoint(4, "server", 1000);
    const ref = new MapWindow();
    for (let seq = 1; seq <= 50; seq++) {
      const add: Array<[string, number, number]> = [];
      for (let i = 0; i < 20; i++) {
        const key = i === 0 && seq % 5 === 0 ? `old-${seq}` : fp((seq * 13 + i * 7) % 400);
        add.push([key, 1 + ((seq + i) % 11 === 0 ? 2 : 0), 1000 + seq * 100 + i]);
      }
      applyDelta(cp, { seq, highWaterMs: 1000 + seq * 100, add, counts: {} });
      for (const [f, n, t] of add) ref.deliver(f, n, t);
      prune(cp, 2000);
      ref.prune(cp.highWaterMs - 2000, cp.highWaterMs);
    }
    const text = serializeSnapshot(cp);
    const parts = ref.entries().map(([f, n, t]) => `${JSON.stringify(f)}:[${n},${t}]`);
    expect(withoutTime(text)).toBe(
      withoutTime(
        `{"version":2,"siteId":4,"stream":"server","floorMs":1000,"highWaterMs":6000,"seq":50,` +
          `"recent":{${parts.join(",")}},"counts":{},"updatedAt":""}`,
      ),
    );
    // Read back oldest first (the file's order is not relied on).
    const back = parseSnapshot(text, "f.json", 4, "server");
    expect(entries(back.recent)).toEqual(ref.entries().sort((a, b) => a[2] - b[2]));
  });
});

describe("a checkpoint's counts", () => {
  it("start empty for every checkpoint, and are the checkpoint's own once it counts", () => {
    const counting = newCheckpoint(1, "server", 1000);
    const idle = newCheckpoint(2, "server", 1000);
    applyDelta(counting, { seq: 1, highWaterMs: 2000, add: [], counts: { "server|2xx|false": 3 } });
    applyDelta(counting, { seq: 2, highWaterMs: 3000, add: [], counts: { "server|2xx|false": 2 } });
    expect(counting.counts).toEqual({ "server|2xx|false": 5 });
    expect(idle.counts).toEqual({});
    expect(parseSnapshot(serializeSnapshot(idle), "f", 2, "server").counts).toEqual({});
  });

  it("are kept without a prototype (a dictionary, whatever order keys come in), also once read back", () => {
    const cp = newCheckpoint(1, "server", 1000);
    applyDelta(cp, { seq: 1, highWaterMs: 2000, add: [], counts: { "4xx|false": 1, "2xx|false": 2 } });
    expect(Object.getPrototypeOf(cp.counts)).toBeNull();
    const back = parseSnapshot(serializeSnapshot(cp), "f", 1, "server");
    expect(Object.getPrototypeOf(back.counts)).toBeNull();
    expect(Object.keys(back.counts)).toEqual(["4xx|false", "2xx|false"]);
    expect(back.counts["2xx|false"]).toBe(2);
  });
});
