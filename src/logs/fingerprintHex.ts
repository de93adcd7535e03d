/**
 * A fingerprint (`fingerprint()` in entry.ts: 128 bits of sha256 as 32 lowercase hex characters) read
 * as numbers and written back, for what keeps thousands of them (overlap windows, exemplars) as
 * numbers rather than strings. Reading allocates nothing: it is on the log path, once per record.
 */

/** Characters in a fingerprint. */
export const FINGERPRINT_HEX_CHARS = 32;

/** Value of each ASCII character as a hex digit, or -1. Lowercase only: a fingerprint with capitals is another string. */
const HEX_VALUE = new Int8Array(128).fill(-1);
for (let d = 0; d < 16; d++) HEX_VALUE["0123456789abcdef".charCodeAt(d)] = d;

/** The 8 hex characters of `fp` from `at` as an unsigned 32-bit number, or -1 when they are not all hex. */
export function hexWord(fp: string, at: number): number {
  let word = 0;
  let bad = 0;
  for (let i = at; i < at + 8; i++) {
    const code = fp.charCodeAt(i);
    const d = HEX_VALUE[code & 127] as number;
    // a code past ASCII sets a bit above 127; -1 sets them all
    bad |= code | d;
    word = (word << 4) | d;
  }
  return (bad & ~127) === 0 ? word >>> 0 : -1;
}

/** `n` as `digits` lowercase hex characters, zeros in front. */
export function hex(n: number, digits: number): string {
  return n.toString(16).padStart(digits, "0");
}
