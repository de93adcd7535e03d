/**
 * The group of a PHP error entry: a fingerprint of its message and file with what varies between
 * occurrences of one error taken out, so that "Undefined array key "page" in /www/a.php on line 12"
 * and the same with "id" on line 14 are one group, and a new fatal error after an update is a new one.
 *
 * Taken out, in order: the stack trace (the first line says the error); quoted values ('x', "x");
 * the location "in <file> on line <n>" / "in <file>:<n>" (the entry's own `file` field is the
 * location); hexadecimal runs of 8 or more (addresses, hashes); every other run of digits (ids, sizes,
 * line numbers, release directories). Whitespace runs become one space. The file is kept without its
 * digits. Only errors are grouped: fatal, parse, error and warning (notices and deprecations are many
 * and rarely break a site).
 *
 * The fingerprint is 16 hex characters (64 bits of two 32-bit FNV-1a hashes of the normalised text),
 * computed on the log path once per grouped record.
 */
import type { PhpSeverityLabel } from "./mapper.js";

export const GROUPED_SEVERITIES: ReadonlySet<PhpSeverityLabel> = new Set([
  "fatal",
  "parse",
  "error",
  "warning",
]);

/** What a group shows of an error: its message and file with the varying parts taken out. */
export function normalisedError(message: string, file: string | null | undefined): string {
  return `${normaliseMessage(message)}|${(file ?? "").replace(/\d+/g, "N")}`;
}

const STACK = /\r?\nStack trace:[\s\S]*$/;
const QUOTED = /'(?:[^'\\\n]|\\.){0,200}'|"(?:[^"\\\n]|\\.){0,200}"/g;
const LOCATION = /\s+in\s+\S+?(?:\s+on\s+line\s+\d+|:\d+)(?=\s|$)/g;
const HEX = /\b(?:0x)?[0-9a-f]{8,}\b/gi;
const DIGITS = /\d+/g;
const SPACE = /\s+/g;

function normaliseMessage(message: string): string {
  return message
    .replace(STACK, "")
    .replace(QUOTED, "?")
    .replace(LOCATION, "")
    .replace(HEX, "H")
    .replace(DIGITS, "N")
    .replace(SPACE, " ")
    .trim();
}

const HEX_DIGITS = "0123456789abcdef";

function hex32(n: number): string {
  let out = "";
  for (let shift = 28; shift >= 0; shift -= 4) out += HEX_DIGITS[(n >>> shift) & 15];
  return out;
}

/** The group's fingerprint: 16 lowercase hex characters of its normalised text. */
export function errorGroupFingerprint(message: string, file: string | null | undefined): string {
  const text = normalisedError(message, file);
  // Two FNV-1a passes with different offsets: 64 bits, enough for the groups of one site.
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 15);
  }
  return hex32(a >>> 0) + hex32(b >>> 0);
}
