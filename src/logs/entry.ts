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

/** The entry as text with its keys sorted and undefined values left out, at every depth. */
export function canonical(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  const obj = value as Record<string, unknown>;
  return `{${Object.keys(obj)
    .sort()
    .filter((k) => obj[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonical(obj[k])}`)
    .join(",")}}`;
}

/** Stable content hash (128 bits of sha256, hex) of the entry as the API sent it (after validation). */
export function fingerprint(entry: unknown): string {
  return hash("sha256", canonical(entry), "hex").slice(0, 32);
}

/**
 * `fingerprint` for the entries of one schema, whose possible keys are known. For an entry whose values
 * are all plain (strings, finite numbers, booleans, null) JSON.stringify writes the canonical text
 * itself: directly when its keys are already in sorted order (a validated entry's are, see the log
 * schemas), else with the sorted keys as its allowlist (it skips undefined values and keeps the list's
 * order). Anything else takes the general walk. Same text, same hash.
 */
export function fingerprinter(keys: readonly string[]): (entry: object) => string {
  const sorted = [...keys].sort();
  const known = new Set(keys);
  return (entry) => {
    const obj = entry as Record<string, unknown>;
    // Keys in sorted order are found walking the sorted list once (identity comparisons of
    // property names); only an entry out of that order asks the set.
    let ordered = true;
    let at = 0;
    for (const k in obj) {
      const v = obj[k];
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
    const text = ordered ? JSON.stringify(obj) : JSON.stringify(obj, sorted);
    return hash("sha256", text, "hex").slice(0, 32);
  };
}
