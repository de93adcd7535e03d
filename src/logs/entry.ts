/** Entry time and fingerprint: the basis of checkpoints and dedupe. */
import { hash } from "node:crypto";
import { apiTimeMs } from "../api/times.js";

/**
 * The entry's own time in whole ms, in any of the API's time forms (src/api/times.ts): epoch seconds,
 * milliseconds, microseconds or nanoseconds told apart by magnitude, as numbers or numeric strings
 * (rounded to the millisecond), or ISO 8601 (UTC when no zone is given; digits of the fraction past the
 * millisecond dropped).
 */
export function entryTimeMs(value: unknown): number | undefined {
  const ms = apiTimeMs(value);
  return ms === undefined ? undefined : Math.round(ms);
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
 * A stream's fingerprint of its entries; `earlier`, when it has one, gives the fingerprint the release
 * before gave an entry whose fingerprint has changed since (undefined when it has not).
 */
export type EntryFingerprint<E extends object = object> = ((entry: E) => string) & {
  readonly earlier?: (entry: E) => string | undefined;
};

/**
 * The fingerprint an earlier release gave the entry, when it differs from what `fingerprint` gives it
 * now: the release before's (values in another form than documented were fingerprinted as they came),
 * else the nulls-keeping one's. Undefined when the entry's fingerprint never changed.
 */
export function earlierFingerprint<E extends object>(
  fingerprint: EntryFingerprint<E>,
  entry: E,
): string | undefined {
  return fingerprint.earlier?.(entry) ?? fingerprintKeepingNulls(entry);
}

/**
 * How the values of one schema's entries are checked to be in their documented forms as the fingerprint
 * walks them (src/logs/canonicalEntry.ts): `kinds[i]` is how the value of the i-th key in sorted order is
 * checked (-1: it may come in any form), `documented` checks it, and `canonicalise` writes an entry with
 * a value in another form in the documented ones.
 */
export interface DocumentedForms {
  readonly kinds: Int8Array;
  documented(kind: number, value: unknown): boolean;
  canonicalise(entry: object): object;
}

/**
 * `fingerprint` for the entries of one schema, whose possible keys are known. For an entry whose values
 * are all plain (strings, finite numbers, booleans, null) JSON.stringify writes the canonical text
 * itself: directly when its keys are already in sorted order (a validated entry's are, see the log
 * schemas) and none is null, else with the sorted keys that have a value as its allowlist (it keeps the
 * list's order). Anything else takes the general walk. Same text, same hash.
 *
 * With `forms`, the fingerprint is that of the entry in its documented forms: an entry with a value in
 * another form is rewritten first (found on the same walk, so an entry in the documented forms costs
 * next to nothing more).
 */
export function fingerprinter(keys: readonly string[], forms?: DocumentedForms): (entry: object) => string {
  const sorted = [...keys].sort();
  const index = new Map(sorted.map((k, i) => [k, i]));
  /** For an entry with a value in another form: the fingerprint of it in the documented ones. */
  const plain = forms && fingerprinter(keys);
  const general = (entry: object) => fingerprint(forms ? forms.canonicalise(entry) : entry);
  return (entry) => {
    const obj = entry as Record<string, unknown>;
    // Keys in sorted order are found walking the sorted list once (identity comparisons of
    // property names); only an entry out of that order asks the map.
    let ordered = true;
    let nulls = false;
    let at = 0;
    for (const k in obj) {
      const v = obj[k];
      if (v === null) nulls = true;
      const isPlain =
        typeof v === "string" ||
        typeof v === "boolean" ||
        v === null ||
        v === undefined ||
        (typeof v === "number" && Number.isFinite(v));
      if (!isPlain) return general(entry); // not this schema's flat shape
      let i = -1;
      if (ordered) {
        while (at < sorted.length && sorted[at] !== k) at++;
        if (at < sorted.length) i = at++;
        else ordered = false;
      }
      if (i < 0) {
        i = index.get(k) ?? -1;
        if (i < 0) return general(entry);
      }
      if (forms && v !== null && v !== undefined) {
        const kind = forms.kinds[i] as number;
        if (kind >= 0 && !forms.documented(kind, v) && plain) return plain(forms.canonicalise(entry));
      }
    }
    if (ordered && !nulls) return sha(JSON.stringify(obj));
    return sha(JSON.stringify(obj, nulls ? sorted.filter((k) => obj[k] !== null) : sorted));
  };
}
