/**
 * Which shard a site belongs to. Every replica and every release must compute the same split,
 * and changing the shard count should move as few sites as possible: a moved site's logs restart
 * on its new shard from logs.startFrom.
 */

/** FNV-1a (32 bits) of a string: consecutive or even ids still spread. */
export function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (const ch of text) {
    h ^= ch.charCodeAt(0);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

const MASK_64 = (1n << 64n) - 1n;

/**
 * Jump consistent hash (Lamping and Veach, 2014) of a 64-bit key into `buckets` buckets: growing
 * from n to n + 1 buckets moves only the keys that land in the new bucket (1 in n + 1 of them).
 */
export function jumpHash(key: bigint, buckets: number): number {
  let k = key & MASK_64;
  let bucket = -1;
  for (let next = 0; next < buckets;) {
    bucket = next;
    k = (k * 2862933555777941757n + 1n) & MASK_64;
    next = Math.floor((bucket + 1) * (2 ** 31 / (Number(k >> 33n) + 1)));
  }
  return bucket;
}

/** The shard (0 … count − 1) of a site: jump consistent hash of the FNV-1a hash of its decimal id. */
export function shardOf(siteId: number, count: number): number {
  return count <= 1 ? 0 : jumpHash(BigInt(fnv1a32(String(siteId))), count);
}
