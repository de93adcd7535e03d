/** Deterministic pseudo-random numbers (mulberry32) and a stable integer hash. */
export type Rng = () => number;

export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A stable 32-bit hash of a few integers (for per-second, per-site randomness without state). */
export function hash32(...values: number[]): number {
  let h = 0x811c9dc5;
  for (const v of values) {
    h ^= v | 0;
    h = Math.imul(h, 0x01000193);
    h ^= Math.floor(v / 4294967296) | 0;
    h = Math.imul(h ^ (h >>> 13), 0x5bd1e995);
  }
  h ^= h >>> 15;
  return h >>> 0;
}

export function unit(...values: number[]): number {
  return hash32(...values) / 4294967296;
}

export function pick<T>(rng: Rng, items: readonly T[]): T {
  return items[Math.floor(rng() * items.length)] as T;
}

export function between(rng: Rng, min: number, max: number): number {
  return min + rng() * (max - min);
}
