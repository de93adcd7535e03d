/**
 * Bytes kept for long in memory of their own. Node.js puts small buffers (Buffer.from, allocUnsafe,
 * zlib's output) in shared slabs of `Buffer.poolSize` (64 KB on Node.js 24), and a buffer that is
 * kept keeps its whole slab, with whatever else was cut from it: 15,000 request frames of a few
 * hundred bytes held 279 slabs, 18 MB, at 5,000 sites (docs/benchmarks.md).
 */
export function ownedBytes(bytes: Uint8Array): Buffer {
  // Always a copy (not zero-filled first: the copy writes every byte): callers pass views of writers
  // they go on to reuse.
  const out = Buffer.allocUnsafeSlow(bytes.byteLength);
  out.set(bytes);
  return out;
}
