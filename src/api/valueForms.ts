/**
 * Values in a form their field's type does not have, read as that type: the platform's documentation
 * leaves many types open, and one field written differently must not make every record unusable.
 *
 * - a number: a JSON number, or a string holding one (blanks around it allowed: `"100"`, `" 100 "`,
 *   `"-2.5"`, `"1e3"`); not `""`, `"0x10"`, `"+1"`, `"1,5"`, `"NaN"` or `"Infinity"`;
 * - an integer: a number (in either form) that is a safe integer (`"1e3"` is 1000, `"1.5"` is refused);
 * - a boolean: `true`/`false`, the numbers 0 and 1, or the strings `true`, `false`, `1`, `0` in any
 *   case and with blanks around them;
 * - a string: a string, or a finite number as its JavaScript text (`404` is `"404"`).
 *
 * A value of the right type is given as it came (the same value, so a record with nothing to read
 * differently is not copied); a value that cannot be read is left as it is, for the schema to refuse.
 * The zod schemas built here (`number()`, `integer()`, `boolean()`, `text()`) are registered, so the
 * fast record checker (fastParse.ts) reads them exactly as zod does.
 */
import { z } from "zod";

const NUMBER_TEXT = /^\s*-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?\s*$/;

/** A number, or a string holding a JSON number; undefined for anything else (and for NaN and ±Infinity). */
export function readNumber(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined;
  if (typeof value !== "string" || !NUMBER_TEXT.test(value)) return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

/** A safe integer, from a number or a string holding one. */
export function readInteger(value: unknown): number | undefined {
  const n = readNumber(value);
  return n !== undefined && Number.isSafeInteger(n) ? n : undefined;
}

/** A boolean, from a boolean, 0 or 1, or their text (any case, blanks around it). */
export function readBoolean(value: unknown): boolean | undefined {
  if (typeof value === "boolean") return value;
  if (value === 1 || value === 0) return value === 1;
  if (typeof value !== "string") return undefined;
  switch (value.trim().toLowerCase()) {
    case "true":
    case "1":
      return true;
    case "false":
    case "0":
      return false;
    default:
      return undefined;
  }
}

/** A string, or a finite number as its text. */
export function readText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  return typeof value === "number" && Number.isFinite(value) ? String(value) : undefined;
}

/**
 * How the fast checker reads a registered schema: `read` gives the value the schema gives (the value
 * itself when it already has the type) or undefined when the schema refuses it.
 */
export interface ValueForm {
  read(value: unknown): unknown;
}

/** Registered forms, by the zod definition object of their schema (what fastParse.ts walks). */
const forms = new WeakMap<object, ValueForm>();

/** The form of a zod definition, when it is one built here. */
export function valueFormOf(def: object): ValueForm | undefined {
  return forms.get(def);
}

/**
 * `inner` applied to the value as `read` reads it (the value as it came when it cannot be read, so
 * zod's message says what came). `accepts` is `inner`'s own test, for the fast checker.
 */
function form<T extends z.ZodType>(
  inner: T,
  read: (value: unknown) => unknown,
  accepts: (value: unknown) => boolean,
) {
  const schema = z.preprocess((value) => read(value) ?? value, inner);
  forms.set(schema._zod.def, {
    read: (value) => {
      const got = read(value);
      return got !== undefined && accepts(got) ? got : undefined;
    },
  });
  return schema;
}

/** A finite number, also given as text. */
export const number = () => form(z.number(), readNumber, (v) => typeof v === "number" && Number.isFinite(v));

/** A safe integer, also given as text. */
export const integer = () => form(z.number().int(), readNumber, (v) => Number.isSafeInteger(v));

/** A boolean, also given as 0/1 or as text. */
export const boolean = () => form(z.boolean(), readBoolean, (v) => typeof v === "boolean");

/** A string (at least `min` characters), also given as a number. */
export const text = (min = 0) =>
  form(min > 0 ? z.string().min(min) : z.string(), readText, (v) => typeof v === "string" && v.length >= min);
