/**
 * A fast path for validating many records of one flat object schema (log entries: thousands per second).
 * zod stays the single description of the shapes; this reads a schema's definition once and builds a
 * plain checker for the subset it understands: an object (unknown keys stripped) whose fields are
 * strings (optionally with a minimum length), numbers (finite, optionally safe integers), booleans,
 * the value forms of valueForms.ts (a number given as text read as the number, ...), and optional,
 * nullable and union forms of those. Anything else (refinements, other transforms, nested objects,
 * strict or loose objects) is not compiled and zod does all the work.
 *
 * The checker is conservative: it returns the value zod would return (same keys, same order, a value
 * read from another form as the form reads it), or undefined when it is not sure (the record does not
 * fit, or holds something unusual), and then zod decides and explains. So it can only ever be faster,
 * never different.
 */
import type { z } from "zod";
import { valueFormOf } from "./valueForms.js";

type Check = (value: unknown) => boolean;
/** What the schema gives for a value its check refused: a value read from another form, or NONE. */
type Read = (value: unknown) => unknown;
const NONE = Symbol("none");

/**
 * How a type takes a value: as it is when `check` holds (the usual case, one test), else as `read`
 * reads it (a value in another form), or not at all.
 */
interface ValueType {
  check: Check;
  read?: Read;
}

interface ZodDefLike {
  type: string;
  checks?: Array<{ _zod: { def: { check?: string; format?: string; minimum?: number } } }>;
  innerType?: { _zod: { def: ZodDefLike } };
  options?: Array<{ _zod: { def: ZodDefLike } }>;
  shape?: Record<string, { _zod: { def: ZodDefLike } }>;
  catchall?: unknown;
  /** A pipe's second schema (a value form's type). */
  out?: { _zod: { def: ZodDefLike } };
}

interface Field extends ValueType {
  key: string;
  /** `.optional()`: the key may be missing (it is then missing from the output too). */
  optional: boolean;
}

function defOf(schema: unknown): ZodDefLike | undefined {
  return (schema as { _zod?: { def?: ZodDefLike } } | undefined)?._zod?.def;
}

/** A check for a leaf type, or undefined when the type (or one of its checks) is not understood. */
function leafCheck(def: ZodDefLike): Check | undefined {
  const checks = def.checks ?? [];
  switch (def.type) {
    case "string": {
      let min = 0;
      for (const c of checks) {
        const d = c._zod.def;
        if (d.check !== "min_length" || typeof d.minimum !== "number") return undefined;
        min = Math.max(min, d.minimum);
      }
      return min === 0 ? (v) => typeof v === "string" : (v) => typeof v === "string" && v.length >= min;
    }
    case "number": {
      let integer = false;
      for (const c of checks) {
        const d = c._zod.def;
        if (d.check !== "number_format" || d.format !== "safeint") return undefined;
        integer = true;
      }
      return integer
        ? (v) => typeof v === "number" && Number.isSafeInteger(v)
        : (v) => typeof v === "number" && Number.isFinite(v);
    }
    case "boolean":
      return checks.length === 0 ? (v) => typeof v === "boolean" : undefined;
    default:
      return undefined;
  }
}

/** How a field's type (without its optionality) takes a value, or undefined when not understood. */
function valueType(def: ZodDefLike): ValueType | undefined {
  const form = valueFormOf(def);
  if (form) {
    // A value form: its type's own check, and the form's reading for other values.
    const check = def.out && leafCheck(def.out._zod.def);
    return (
      check && {
        check,
        read: (v) => {
          const got = form.read(v);
          return got === undefined ? NONE : got;
        },
      }
    );
  }
  if (def.type === "nullable") {
    const inner = def.innerType && valueType(def.innerType._zod.def);
    if (!inner) return undefined;
    const check = inner.check;
    return { check: (v) => v === null || check(v), read: inner.read };
  }
  if (def.type === "union") {
    const options = (def.options ?? []).map((o) => valueType(o._zod.def));
    if (options.length === 0 || options.some((o) => o === undefined)) return undefined;
    const all = options as ValueType[];
    if (all.every((o) => o.read === undefined)) {
      // A loop, not all.some(...): a closure per value checked is garbage at every record read.
      return {
        check: (v) => {
          for (let i = 0; i < all.length; i++) if ((all[i] as ValueType).check(v)) return true;
          return false;
        },
      };
    }
    // zod gives what the first option to take the value gives. A value that an option up to the first
    // one reading other forms takes as it is comes out as it is; any other is read option by option,
    // in order (an earlier option may read a value that a later one would take as it is).
    const plain = all.slice(0, all.findIndex((o) => o.read !== undefined) + 1);
    return {
      check: (v) => {
        for (let i = 0; i < plain.length; i++) if ((plain[i] as ValueType).check(v)) return true;
        return false;
      },
      read: (v) => {
        for (let i = 0; i < all.length; i++) {
          const option = all[i] as ValueType;
          if (option.check(v)) return v;
          const got = option.read ? option.read(v) : NONE;
          if (got !== NONE) return got;
        }
        return NONE;
      },
    };
  }
  const check = leafCheck(def);
  return check && { check };
}

function fieldOf(key: string, def: ZodDefLike): Field | undefined {
  // Only optional(...) on the outside makes a key optional; anything else wrapped is left to zod.
  const optional = def.type === "optional";
  const inner = optional ? def.innerType?._zod.def : def;
  const type = inner && valueType(inner);
  return type && { key, check: type.check, read: type.read, optional };
}

/**
 * The fast checker for `schema`, or undefined when the schema is not a flat object this understands.
 * Use it as `fast(record) ?? schema.safeParse(record)`.
 */
export function compileFlatObject<T>(schema: z.ZodType<T>): ((input: unknown) => T | undefined) | undefined {
  const def = defOf(schema);
  if (!def || def.type !== "object" || def.catchall !== undefined || !def.shape) return undefined;
  const fields: Field[] = [];
  for (const [key, value] of Object.entries(def.shape)) {
    const field = fieldOf(key, value._zod.def);
    if (!field) return undefined;
    fields.push(field);
  }
  return (input) => {
    if (typeof input !== "object" || input === null || Array.isArray(input)) return undefined;
    const record = input as Record<string, unknown>;
    let present = 0;
    /** Values read from another form, by field index (most records have none). */
    let read: unknown[] | undefined;
    for (let i = 0; i < fields.length; i++) {
      const field = fields[i] as Field;
      const value = record[field.key];
      if (value === undefined) {
        // A key present with the value undefined (never in JSON) is left to zod.
        if (!field.optional || field.key in record) return undefined;
        continue;
      }
      if (!field.check(value)) {
        const got = field.read ? field.read(value) : NONE;
        if (got === NONE) return undefined;
        if (got !== value) (read ??= new Array<unknown>(fields.length))[i] = got;
      }
      present += 1;
    }
    // A record with exactly the schema's keys, in the schema's order (the usual case: nothing to
    // strip) already is what zod would return, key for key: no copy.
    let keys = 0;
    let at = 0;
    let ordered = true;
    for (const key in record) {
      keys += 1;
      if (!ordered) continue;
      while (at < fields.length && (fields[at] as Field).key !== key) at++;
      if (at === fields.length) ordered = false;
      else at++;
    }
    if (ordered && keys === present && read === undefined) return record as T;
    const out: Record<string, unknown> = {};
    for (let i = 0; i < fields.length; i++) {
      const key = (fields[i] as Field).key;
      const value = read?.[i] ?? record[key];
      if (value !== undefined) out[key] = value;
    }
    return out as T;
  };
}
