/** Entry time and fingerprint: the basis of checkpoints and dedupe. */
import { hash } from "node:crypto";
import { isEpochMs } from "../api/times.js";

const ZONELESS = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/;

/**
 * The entry's own time in ms. Numbers (or numeric strings) are epoch seconds,
 * or epoch ms when too large to be seconds; other strings are ISO 8601 (UTC when no zone is given).
 */
export function entryTimeMs(value: unknown): number | undefined {
  let n: number;
  if (typeof value === "number") n = value;
  else if (typeof value === "string" && /^\s*\d+(\.\d+)?\s*$/.test(value)) n = Number(value);
  else if (typeof value === "string") {
    // The platform's times are UTC; a string without a zone must not be read in the host's zone.
    const text = ZONELESS.test(value.trim()) ? `${value.trim().replace(" ", "T")}Z` : value;
    const t = Date.parse(text);
    return Number.isNaN(t) ? undefined : t;
  } else return undefined;
  if (!Number.isFinite(n) || n <= 0) return undefined;
  return isEpochMs(n) ? Math.round(n) : Math.round(n * 1000);
}

/**
 * The entry as text with its keys sorted, at every depth, and the keys whose value is null or
 * undefined left out: a field sent as null and a field not sent are the same entry (a platform that
 * starts sending nulls for fields it used to leave out sends no new entries).
 */
export function canonical(value: unknown): string {
  return canonicalText(value, false);
}

function canonicalText(value: unknown, keepNulls: boolean): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map((v) => canonicalText(v, keepNulls)).join(",")}]`;
  const obj = value as Record<string, unknown>;
  return `{${Object.keys(obj)
    .sort()
    .filter((k) => obj[k] !== undefined && (keepNulls || obj[k] !== null))
    .map((k) => `${JSON.stringify(k)}:${canonicalText(obj[k], keepNulls)}`)
    .join(",")}}`;
}

/**
 * A fingerprint is a flat string of its own: a slice of the 64-character digest would keep the whole
 * digest alive for as long as a checkpoint remembers the entry (about 60 bytes more each, times every
 * entry of every stream's overlap window). JSON.parse of the quoted slice is the cheapest copy (about
 * 0.2 µs; a Buffer digest costs 2 µs more).
 */
const sha = (text: string): string => JSON.parse(`"${hash("sha256", text, "hex").slice(0, 32)}"`) as string;

/** Stable content hash (128 bits of sha256, hex) of the entry as the API sent it (after validation). */
export function fingerprint(entry: unknown): string {
  return sha(canonical(entry));
}

function hasNullField(value: unknown): boolean {
  if (value === null || typeof value !== "object") return false;
  for (const v of Object.values(value)) if (v === null || hasNullField(v)) return true;
  return false;
}

/**
 * The fingerprint earlier releases gave an entry with null fields (they kept the nulls), or undefined
 * for an entry without any (its fingerprint never changed). Checkpoints written by those releases hold
 * these: a re-read looks them up too, so what they delivered is not shipped again.
 */
export function fingerprintKeepingNulls(entry: unknown): string | undefined {
  return hasNullField(entry) ? sha(canonicalText(entry, true)) : undefined;
}

/**
 * `fingerprint` for the entries of one schema, whose possible keys are known. For an entry whose values
 * are all plain (strings, finite numbers, booleans, null) JSON.stringify writes the canonical text
 * itself: directly when its keys are already in sorted order (a validated entry's are, see the log
 * schemas) and none is null, else with the sorted keys that have a value as its allowlist (it keeps the
 * list's order). Anything else takes the general walk. Same text, same hash.
 */
export function fingerprinter(keys: readonly string[]): (entry: object) => string {
  const sorted = [...keys].sort();
  const known = new Set(keys);
  return (entry) => {
    const obj = entry as Record<string, unknown>;
    // Keys in sorted order are found walking the sorted list once (identity comparisons of
    // property names); only an entry out of that order asks the set.
    let ordered = true;
    let nulls = false;
    let at = 0;
    for (const k in obj) {
      const v = obj[k];
      if (v === null) nulls = true;
      const plain =
        typeof v === "string" ||
        typeof v === "boolean" ||
        v === null ||
        v === undefined ||
        (typeof v === "number" && Number.isFinite(v));
      if (!plain) return fingerprint(entry); // not this schema's flat shape
      if (ordered) {
        while (at < sorted.length && sorted[at] !== k) at++;
        if (at < sorted.length) {
          at++;
          continue;
        }
        ordered = false;
      }
      if (!known.has(k)) return fingerprint(entry);
    }
    if (ordered && !nulls) return sha(JSON.stringify(obj));
    return sha(JSON.stringify(obj, nulls ? sorted.filter((k) => obj[k] !== null) : sorted));
  };
}
