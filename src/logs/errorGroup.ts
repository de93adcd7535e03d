/**
 * The group of a PHP error entry: a fingerprint of its message and file with what varies between
 * occurrences of one error taken out, so that "Undefined array key "page" in /www/a.php on line 12"
 * and the same with "id" on line 14 are one group, and a new fatal error after an update is a new one.
 *
 * Taken out, in one pass over the text: the stack trace (from a line "Stack trace:" on: the first
 * line says the error); quoted values ('x', "x", up to 200 characters on one line) become `?`; a word
 * of 8 or more hexadecimal digits, `0x` first or with both digits and letters (an address, a hash),
 * becomes `H`; every other run of digits becomes `N` (ids, sizes, line numbers in the message's
 * location, release directories); runs of whitespace become one space. The file is kept, its digits as `N`. Only errors are grouped:
 * fatal, parse and error (warnings, notices and deprecations are many, rarely break a site, and would
 * cost the log path about as much again).
 *
 * The fingerprint is 16 hex characters: two 32-bit FNV-1a hashes of the normalised text. The text is
 * written into a scratch buffer, not a string: on the log path this runs once per grouped record.
 */
import type { PhpSeverityLabel } from "./mapper.js";

export const GROUPED_SEVERITIES: ReadonlySet<PhpSeverityLabel> = new Set(["fatal", "parse", "error"]);

/** Characters of message and file read at most (what is past this is not part of the group). */
const MAX_CHARS = 4096;
const QUOTED_MAX = 200;
const HEX_WORD_MIN = 8;
/** The normalised text of the last call, as UTF-16 code units (read by `normalisedError`). */
const scratch = new Uint16Array(MAX_CHARS * 2 + 2);
let length = 0;
// Two FNV-1a hashes of the normalised text, updated as each unit is written.
const FNV_PRIME = 0x01000193;
let hashA = 0;
let hashB = 0;

function put(c: number): void {
  scratch[length++] = c;
  hashA = Math.imul(hashA ^ c, FNV_PRIME);
  hashB = Math.imul(hashB ^ c, FNV_PRIME) ^ (hashB >>> 15);
}

const SPACE = 32;
const TAB = 9;
const NEWLINE = 10;
const CR = 13;
const DQUOTE = 34;
const SQUOTE = 39;
const BACKSLASH = 92;
const ZERO = 48;
const NINE = 57;
const UNDERSCORE = 95;
const X = 120;
const N = 78;
const H = 72;
const QUESTION = 63;
const BAR = 124;

/** Where a quote opened at `at` closes on its line within QUOTED_MAX characters, or -1. */
function quoteEnd(text: string, at: number, end: number): number {
  const quote = text.charCodeAt(at);
  const limit = Math.min(end, at + QUOTED_MAX + 2);
  for (let i = at + 1; i < limit; i++) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) i++;
    else if (c === quote) return i;
    else if (c === NEWLINE) return -1;
  }
  return -1;
}

/**
 * Write text[from, end) with each run of digits as one `N`, up to the end of the word that starts at
 * `from` when `word` (a word: letters, digits, `_`), or to `end`. Returns where it stopped.
 */
function putDigitsAsN(text: string, from: number, end: number, word: boolean): number {
  let inDigits = false;
  let i = from;
  for (; i < end; i++) {
    const c = text.charCodeAt(i);
    const digit = c >= ZERO && c <= NINE;
    if (word && !digit && !((c | 32) >= 97 && (c | 32) <= 122) && c !== UNDERSCORE) break;
    if (digit) {
      if (!inDigits) put(N);
      inDigits = true;
    } else {
      put(c);
      inDigits = false;
    }
  }
  return i;
}

/**
 * At a word's start: its end when it is a hex run of HEX_WORD_MIN or more (`0x` and hex digits, or hex
 * digits with both a digit and a letter: digits alone are a number), else -1.
 */
function hexWordEnd(text: string, from: number, end: number): number {
  let i = from;
  const prefixed = text.charCodeAt(i) === ZERO && text.charCodeAt(i + 1) === X;
  if (prefixed) i += 2;
  const start = i;
  let digit = false;
  let letter = false;
  for (; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c >= ZERO && c <= NINE) digit = true;
    else if ((c | 32) >= 97 && (c | 32) <= 102) letter = true;
    else if (((c | 32) >= 103 && (c | 32) <= 122) || c === UNDERSCORE) return -1;
    else break;
  }
  return i - start >= HEX_WORD_MIN && (prefixed || (digit && letter)) ? i : -1;
}

function putMessage(text: string): void {
  const end = Math.min(text.length, MAX_CHARS);
  let pendingSpace = false;
  let i = 0;
  while (i < end) {
    const c = text.charCodeAt(i);
    if (c === SPACE || c === TAB || c === NEWLINE || c === CR) {
      // The stack trace ends what the group reads.
      if (c === NEWLINE && text.startsWith("Stack trace:", i + 1)) return;
      if (length > 0) pendingSpace = true;
      i++;
      continue;
    }
    if (pendingSpace) {
      put(SPACE);
      pendingSpace = false;
    }
    if (c === SQUOTE || c === DQUOTE) {
      const close = quoteEnd(text, i, end);
      if (close > 0) {
        put(QUESTION);
        i = close + 1;
        continue;
      }
      put(c);
      i++;
      continue;
    }
    const lower = c | 32;
    const digit = c >= ZERO && c <= NINE;
    if (digit || (lower >= 97 && lower <= 122) || c === UNDERSCORE) {
      const hexEnd = digit || lower <= 102 ? hexWordEnd(text, i, end) : -1;
      if (hexEnd > 0) {
        put(H);
        i = hexEnd;
      } else i = putDigitsAsN(text, i, end, true);
      continue;
    }
    put(c);
    i++;
  }
}

/** The normalised text (into `scratch`) and its hashes: the message, `|`, the file. */
function normalise(message: string, file: string | null | undefined): void {
  length = 0;
  hashA = 0x811c9dc5;
  hashB = FNV_PRIME ^ 0x5bd1e995;
  putMessage(message);
  put(BAR);
  if (file) putDigitsAsN(file, 0, Math.min(file.length, MAX_CHARS), false);
}

/** What a group shows of an error: its message and file with the varying parts taken out. */
export function normalisedError(message: string, file: string | null | undefined): string {
  normalise(message, file);
  let out = "";
  for (let i = 0; i < length; i++) out += String.fromCharCode(scratch[i] as number);
  return out;
}

const HEX_DIGITS = "0123456789abcdef";

function hex32(n: number): string {
  let out = "";
  for (let shift = 28; shift >= 0; shift -= 4) out += HEX_DIGITS[(n >>> shift) & 15];
  return out;
}

/** The group's fingerprint: 16 lowercase hex characters (the two hashes) of its normalised text. */
export function errorGroupFingerprint(message: string, file: string | null | undefined): string {
  normalise(message, file);
  return hex32(hashA >>> 0) + hex32(hashB >>> 0);
}
