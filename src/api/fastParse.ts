/**
 * A fast path for validating many records of one flat object schema (log entries: thousands per second).
 * zod stays the single description of the shapes; this reads a schema's definition once and builds a
 * plain checker for the subset it understands: an object (unknown keys stripped) whose fields are
 * strings (optionally with a minimum length), numbers (finite, optionally safe integers), booleans,
 * and optional, nullable and union forms of those. Anything else (refinements, transforms, nested
 * objects, strict or loose objects) is not compiled and zod does all the work.
 *
 * The checker is conservative: it returns the value zod would return (same keys, same order), or
 * undefined when it is not sure (the record does not fit, or holds something unusual), and then zod
 * decides and explains. So it can only ever be faster, never different.
 */
import type { z } from "zod";

type Check = (value: unknown) => boolean;

interface ZodDefLike {
  type: string;
  checks?: Array<{ _zod: { def: { check?: string; format?: string; minimum?: number } } }>;
  innerType?: { _zod: { def: ZodDefLike } };
  options?: Array<{ _zod: { def: ZodDefLike } }>;
  shape?: Record<string, { _zod: { def: ZodDefLike } }>;
  catchall?: unknown;
}

interface Field {
  key: string;
  check: Check;
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

/** A check for a field's type (without its optionality), or undefined when not understood. */
function valueCheck(def: ZodDefLike): Check | undefined {
  if (def.type === "nullable") {
    const inner = def.innerType && valueCheck(def.innerType._zod.def);
    return inner && ((v) => v === null || inner(v));
  }
  if (def.type === "union") {
    const options = (def.options ?? []).map((o) => valueCheck(o._zod.def));
    if (options.length === 0 || options.some((o) => o === undefined)) return undefined;
    const all = options as Check[];
    // A loop, not all.some(...): a closure per value checked is garbage at every record read.
    return (v) => {
      for (let i = 0; i < all.length; i++) if ((all[i] as Check)(v)) return true;
      return false;
    };
  }
  return leafCheck(def);
}

function fieldOf(key: string, def: ZodDefLike): Field | undefined {
  // Only optional(...) on the outside makes a key optional; anything else wrapped is left to zod.
  const optional = def.type === "optional";
  const inner = optional ? def.innerType?._zod.def : def;
  const check = inner && valueCheck(inner);
  return check && { key, check, optional };
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
    for (const field of fields) {
      const value = record[field.key];
      if (value === undefined) {
        // A key present with the value undefined (never in JSON) is left to zod.
        if (!field.optional || field.key in record) return undefined;
        continue;
      }
      if (!field.check(value)) return undefined;
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
    if (ordered && keys === present) return record as T;
    const out: Record<string, unknown> = {};
    for (const field of fields) {
      const value = record[field.key];
      if (value !== undefined) out[field.key] = value;
    }
    return out as T;
  };
}
