/**
 * A fingerprint (`fingerprint()` in entry.ts: 128 bits of sha256 as 32 lowercase hex characters) read
 * as numbers and written back, for what keeps thousands of them (overlap windows, exemplars) as
 * numbers rather than strings. Reading allocates nothing: it is on the log path, once per record.
 */

/** Characters in a fingerprint. */
const FINGERPRINT_HEX_CHARS = 32;

/** Value of each ASCII character as a hex digit, or -1. Lowercase only: a fingerprint with capitals is another string. */
const HEX_VALUE = new Int8Array(128).fill(-1);
for (let d = 0; d < 16; d++) HEX_VALUE["0123456789abcdef".charCodeAt(d)] = d;

/** The 8 hex characters of `fp` from `at` as an unsigned 32-bit number, or -1 when they are not all hex. */
function hexWord(fp: string, at: number): number {
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

/** The four 32-bit words `readFingerprint` read last (module scope: reading allocates nothing). */
export const FINGERPRINT_WORDS = new Uint32Array(4);

/** Read `fp` into FINGERPRINT_WORDS, first word first; false when it is not 32 lowercase hex characters. */
export function readFingerprint(fp: string): boolean {
  if (fp.length !== FINGERPRINT_HEX_CHARS) return false;
  const w0 = hexWord(fp, 0);
  const w1 = hexWord(fp, 8);
  const w2 = hexWord(fp, 16);
  const w3 = hexWord(fp, 24);
  if (w0 < 0 || w1 < 0 || w2 < 0 || w3 < 0) return false;
  FINGERPRINT_WORDS[0] = w0;
  FINGERPRINT_WORDS[1] = w1;
  FINGERPRINT_WORDS[2] = w2;
  FINGERPRINT_WORDS[3] = w3;
  return true;
}

/** `n` as `digits` lowercase hex characters, zeros in front. */
export function hex(n: number, digits: number): string {
  return n.toString(16).padStart(digits, "0");
}
