/** Entry time and fingerprint: the basis of checkpoints and dedupe. */
import { createHash } from "node:crypto";
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

function canonical(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  const obj = value as Record<string, unknown>;
  return `{${Object.keys(obj)
    .sort()
    .filter((k) => obj[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonical(obj[k])}`)
    .join(",")}}`;
}

/** Stable content hash (128 bits of sha256, hex) of the entry as the API sent it. */
export function fingerprint(entry: unknown): string {
  return createHash("sha256").update(canonical(entry)).digest("hex").slice(0, 32);
}
