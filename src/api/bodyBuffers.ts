/**
 * The buffers response bodies with a declared length are read into, handed back once the body is
 * text and read into again. A log page is tens of kilobytes, and a buffer per response lives as long
 * as its body takes to arrive: long enough to reach the old generation, where it waits for a full
 * collection before its memory is freed. Thousands of pages a minute then keep tens of megabytes of
 * malloc'd memory resident for nothing.
 *
 * Only mid-sized bodies are pooled: small ones come from Node.js's own shared slab, large ones are
 * mapped and returned to the system when freed. Pooled buffers have power-of-two sizes, so a buffer
 * fits most later bodies; at most `maxFree` wait to be reused.
 */
export const POOLED_BODY_BYTES = { min: 4 * 1024, max: 256 * 1024 } as const;

const pooledSize = (bytes: number): boolean =>
  bytes >= POOLED_BODY_BYTES.min && bytes <= POOLED_BODY_BYTES.max;

export class BodyBuffers {
  private readonly free: Buffer[] = [];

  constructor(private readonly maxFree: number) {}

  /** A buffer of at least `size` bytes (contents undefined). */
  take(size: number): Buffer {
    if (!pooledSize(size)) return Buffer.allocUnsafe(size);
    const free = this.free;
    for (let i = free.length - 1; i >= 0; i--) {
      const buf = free[i] as Buffer;
      if (buf.length < size) continue;
      free[i] = free[free.length - 1] as Buffer;
      free.pop();
      return buf;
    }
    let bytes = POOLED_BODY_BYTES.min;
    while (bytes < size) bytes *= 2;
    return Buffer.allocUnsafeSlow(bytes);
  }

  /** `buf` (from `take`) is no longer used: keep it for the next body, when it is one of ours. */
  give(buf: Buffer): void {
    // A pooled buffer owns its whole allocation; a slice of Node.js's slab does not.
    if (!pooledSize(buf.length) || buf.byteOffset !== 0 || buf.buffer.byteLength !== buf.length) return;
    if (this.free.length < this.maxFree && !this.free.includes(buf)) this.free.push(buf);
  }

  /** Buffers waiting to be reused. */
  get freeCount(): number {
    return this.free.length;
  }
}
