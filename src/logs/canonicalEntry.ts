/**
 * A log entry's values in the forms its stream documents, for its fingerprint: the same entry sent in
 * another form (a time as epoch milliseconds instead of seconds, with `+00:00` instead of `Z`, an id as
 * text instead of a number, a flag as `false` instead of `"false"`) has the same fingerprint, so the same
 * `log.record.uid`, and is not shipped again.
 *
 * The documented forms are what entries had before: an entry already in them is given back as it is
 * (the same object), so its fingerprint is the one earlier releases gave it. Only the other forms are
 * rewritten:
 * - a time field (LOG_TIME_FORMS) is read as any API time (src/api/times.ts), to the millisecond, and
 *   written as its stream documents it: ISO 8601 as `toISOString` writes it (`2026-05-01T10:00:00.000Z`),
 *   or epoch seconds (`1777629600`, with a fraction for milliseconds); a time that cannot be read is left
 *   as it came;
 * - a field of two types (a union in the schema) is written as its first type when the value reads as
 *   it: `"4711"` as 4711 where an integer comes first, `false` as `"false"` where a string does.
 * Fields of one type need nothing here: the schema reads them as their type (src/api/valueForms.ts).
 */
import type { z } from "zod";
import type { LogTimeForm } from "../api/schemas.js";
import { readBoolean, readInteger, readNumber } from "../api/valueForms.js";
import { entryTimeMs, fingerprinter, type DocumentedForms, type EntryFingerprint } from "./entry.js";

/** The entry in its documented forms: the entry itself when it already is. */
export type Canonicalise = (entry: object) => object;

interface DefLike {
  type: string;
  checks?: Array<{ _zod: { def: { format?: string } } }>;
  innerType?: { _zod: { def: DefLike } };
  options?: Array<{ _zod: { def: DefLike } }>;
}

/**
 * `text` has the punctuation of `toISOString`'s `YYYY-MM-DDTHH:MM:SS.mmmZ` and is no end-of-day `24:00` or
 * leap second. Such a text needs no rewriting: it is either no time at all (a character that is no digit
 * where one belongs, an impossible date: left as it came anyway) or the text `toISOString` writes for its
 * own milliseconds. The two readable exceptions are the ones checked: hour 24 and second 60 are read
 * as the next day and the next minute, which are written otherwise.
 */
function isIsoText(text: string): boolean {
  return (
    text.length === 24 &&
    text.charCodeAt(23) === 90 && // Z
    text.charCodeAt(19) === 46 && // .
    text.charCodeAt(16) === 58 && // :
    text.charCodeAt(13) === 58 &&
    text.charCodeAt(10) === 84 && // T
    text.charCodeAt(7) === 45 && // -
    text.charCodeAt(4) === 45 &&
    !(text.charCodeAt(11) === 50 && text.charCodeAt(12) === 52) && // 24
    !(text.charCodeAt(17) === 54 && text.charCodeAt(18) === 48) // 60
  );
}

/** Dates from the year 0 to 275760, the range of a Date. */
const DATE_RANGE_MS = 8.64e15;

// What a field's value is rewritten as (numbers, not closures: one loop, the usual case inline).
/** A time, as ISO 8601 text. */
const ISO_TIME = 0;
/** A time, as epoch seconds. */
const EPOCH_SECONDS = 1;
/** A union whose first type is a string: a number or boolean as its text. */
const AS_TEXT = 2;
/** A union whose first type is an integer: text that reads as one, as it. */
const AS_INTEGER = 3;
/** A union whose first type is a number: text that reads as one, as it. */
const AS_NUMBER = 4;
/** A union whose first type is a boolean: a value that reads as one, as it. */
const AS_BOOLEAN = 5;
type Kind =
  | typeof ISO_TIME
  | typeof EPOCH_SECONDS
  | typeof AS_TEXT
  | typeof AS_INTEGER
  | typeof AS_NUMBER
  | typeof AS_BOOLEAN;

/** A value not in its documented form, written in it (as it came when it cannot be read so). */
function rewritten(kind: Kind, value: unknown): unknown {
  switch (kind) {
    case ISO_TIME: {
      const ms = entryTimeMs(value);
      return ms === undefined || ms > DATE_RANGE_MS ? value : new Date(ms).toISOString();
    }
    case EPOCH_SECONDS: {
      const ms = entryTimeMs(value);
      return ms === undefined ? value : ms / 1000;
    }
    case AS_TEXT:
      return typeof value === "number" || typeof value === "boolean" ? String(value) : value;
    case AS_INTEGER:
      return readInteger(value) ?? value;
    case AS_NUMBER:
      return readNumber(value) ?? value;
    case AS_BOOLEAN:
      return readBoolean(value) ?? value;
  }
}

/**
 * A value already in its documented form (the usual case: one test). One function for every stream, so
 * the fingerprint's walk calls the same one whichever stream it fingerprints.
 */
function documented(kind: number, value: unknown): boolean {
  switch (kind) {
    case ISO_TIME:
      return typeof value === "string" && isIsoText(value);
    case EPOCH_SECONDS:
      return typeof value === "number" && value > 0 && value <= 1e11 && Number.isInteger(value);
    case AS_TEXT:
      return typeof value === "string";
    case AS_INTEGER:
    case AS_NUMBER:
      return typeof value !== "string";
    case AS_BOOLEAN:
      return typeof value === "boolean";
    default:
      return true;
  }
}

/** The definition under optional and nullable. */
function unwrapped(def: DefLike): DefLike {
  let at = def;
  while ((at.type === "optional" || at.type === "nullable") && at.innerType) at = at.innerType._zod.def;
  return at;
}

/** How a union's value is written as its first type, or undefined when the field needs no rewriting. */
function unionKind(def: DefLike): Kind | undefined {
  const inner = unwrapped(def);
  if (inner.type !== "union") return undefined;
  const first = inner.options?.[0]?._zod.def;
  switch (first?.type) {
    case "number":
      return (first.checks ?? []).some((c) => c._zod.def.format === "safeint") ? AS_INTEGER : AS_NUMBER;
    case "string":
      return AS_TEXT;
    case "boolean":
      return AS_BOOLEAN;
    default:
      return undefined;
  }
}

/** Each key of a schema that has a documented form, with how its value is checked and rewritten. */
function kindsOf(schema: z.ZodObject, times: Readonly<Record<string, LogTimeForm>>): Map<string, Kind> {
  const kinds = new Map<string, Kind>();
  for (const [key, field] of Object.entries(schema.shape)) {
    const form = times[key];
    const kind = form
      ? form === "iso"
        ? ISO_TIME
        : EPOCH_SECONDS
      : unionKind((field as z.ZodType)._zod.def as DefLike);
    if (kind !== undefined) kinds.set(key, kind);
  }
  return kinds;
}

/** The canonicaliser of one stream's entries: `schema` their schema, `times` their time fields' forms. */
export function canonicaliser(
  schema: z.ZodObject,
  times: Readonly<Record<string, LogTimeForm>>,
): Canonicalise {
  const kinds = kindsOf(schema, times);
  const keys = [...kinds.keys()];
  const kindList = [...kinds.values()];
  return (entry) => {
    const record = entry as Record<string, unknown>;
    let out: Record<string, unknown> | undefined;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      const value = record[key];
      const kind = kindList[i] as Kind;
      if (value === undefined || value === null || documented(kind, value)) continue;
      const written = rewritten(kind, value);
      if (!Object.is(written, value)) (out ??= { ...record })[key] = written;
    }
    return out ?? entry;
  };
}

/**
 * The fingerprint of one stream's entries: of the entry in its documented forms. `earlier` gives, for an
 * entry that was not in them, the fingerprint of the entry as it came (what releases before this one
 * gave it), so an upgrade ships nothing they delivered.
 */
export function entryFingerprinter(
  schema: z.ZodObject,
  times: Readonly<Record<string, LogTimeForm>>,
): EntryFingerprint {
  const keys = Object.keys(schema.shape);
  const kinds = kindsOf(schema, times);
  const canonicalise = canonicaliser(schema, times);
  const forms: DocumentedForms = {
    // By key in sorted order, as the fingerprint walks them.
    kinds: Int8Array.from([...keys].sort(), (key) => kinds.get(key) ?? -1),
    documented,
    canonicalise,
  };
  const plain = fingerprinter(keys);
  return Object.assign(fingerprinter(keys, forms), {
    earlier: (entry: object) => (canonicalise(entry) === entry ? undefined : plain(entry)),
  });
}
