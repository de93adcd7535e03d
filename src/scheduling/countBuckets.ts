/**
 * Counts by key in fixed time buckets (say a minute each), only the newest `size` buckets kept: one
 * ring of numbers per key, so a window of hours costs `size` numbers a key, and a bucket that falls
 * out of the ring is cleared before it is used again.
 */
export class CountBuckets<K> {
  private readonly rings = new Map<K, Float64Array>();
  /** The index (time / bucketMs) of the newest bucket, once a time was seen. */
  private newest: number | undefined;

  constructor(
    readonly bucketMs: number,
    readonly size: number,
  ) {}

  /** Moves the newest bucket up to the one holding `at`, clearing the buckets it passes over. */
  advance(at: number): void {
    const index = Math.floor(at / this.bucketMs);
    if (this.newest === undefined) {
      this.newest = index;
      return;
    }
    if (index <= this.newest) return;
    const passed = Math.min(index - this.newest, this.size);
    for (const ring of this.rings.values()) {
      for (let i = 1; i <= passed; i++) ring[this.slot(this.newest + i)] = 0;
    }
    this.newest = index;
  }

  /** Adds `count` to the key's bucket holding `at` (a time before the ring's oldest bucket is dropped). */
  add(key: K, at: number, count: number): void {
    this.advance(at);
    const index = Math.floor(at / this.bucketMs);
    if (this.newest === undefined || index <= this.newest - this.size) return;
    let ring = this.rings.get(key);
    if (!ring) {
      ring = new Float64Array(this.size);
      this.rings.set(key, ring);
    }
    ring[this.slot(index)] = (ring[this.slot(index)] ?? 0) + count;
  }

  /** The key's count over the newest `buckets` buckets, the newest included (at most `size`). */
  sum(key: K, buckets: number): number {
    const ring = this.rings.get(key);
    if (!ring || this.newest === undefined) return 0;
    let total = 0;
    for (let i = 0; i < Math.min(buckets, this.size); i++) total += ring[this.slot(this.newest - i)] ?? 0;
    return total;
  }

  private slot(index: number): number {
    return ((index % this.size) + this.size) % this.size;
  }
}
