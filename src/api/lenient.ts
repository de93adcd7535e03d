/**
 * Records validated by what the exporter needs, not by everything the documentation lists: one
 * renamed or retyped field must not throw away every record of a list (and with them every series
 * and log tailer built on it).
 *
 * A lenient schema has three kinds of fields:
 * - required: without them the record is useless (a site's id, name, state); a record missing one,
 *   or with one of the wrong type, is skipped and counted by that field;
 * - expected: documented as always there and published when present; a record without one (or with
 *   an unreadable one) is kept without it and the field is counted as drift;
 * - optional: documented as sometimes absent; an unreadable one is left out and counted as drift.
 *
 * Casing quirks are handled here too: a key spelt in the other case (`display_name` for
 * `displayName`, `billingCycle` for `billing_cycle`) is read as the schema's spelling when the
 * schema's own spelling is absent.
 */
import { z } from "zod";

interface LenientInfo {
  required: ReadonlySet<string>;
  expected: readonly string[];
}

const lenientSchemas = new WeakMap<z.ZodType, LenientInfo>();

type Shape = Record<string, z.ZodType>;
type Optionalised<S extends Shape> = { [K in keyof S]: z.ZodOptional<S[K]> };

/**
 * An object schema of required, expected and optional fields (see above). With `sorted`, its keys (and
 * so those of every record it gives) are in sorted order rather than required, expected, optional.
 */
export function lenientObject<
  R extends Shape,
  E extends Shape,
  O extends Shape = Record<never, never>,
>(parts: { required: R; expected: E; optional?: O; sorted?: boolean }) {
  const expected = Object.fromEntries(
    Object.entries(parts.expected).map(([key, schema]) => [key, schema.optional()]),
  ) as Optionalised<E>;
  const shape = { ...parts.required, ...expected, ...(parts.optional ?? ({} as O)) };
  const schema = z.object(
    parts.sorted
      ? (Object.fromEntries(Object.entries(shape).sort(([a], [b]) => (a < b ? -1 : 1))) as typeof shape)
      : shape,
  );
  lenientSchemas.set(schema, {
    required: new Set(Object.keys(parts.required)),
    expected: Object.keys(parts.expected),
  });
  return schema;
}

/** The zod definition fields this module reads (zod's own types keep them internal). */
interface DefLike {
  type: string;
  shape?: Record<string, { _zod: { def: DefLike } }>;
  innerType?: { _zod: { def: DefLike } };
  element?: { _zod: { def: DefLike } };
  in?: { _zod: { def: DefLike } };
  options?: Array<{ _zod: { def: DefLike } }>;
}

function defOf(schema: unknown): DefLike | undefined {
  return (schema as { _zod?: { def?: DefLike } } | undefined)?._zod?.def;
}

const WRAPPERS = new Set(["optional", "nullable", "default", "catch", "readonly", "prefault", "nonoptional"]);

/** The object or array definition under wrappers (optional, nullable, default, a pipe's input). */
function unwrap(def: DefLike | undefined): DefLike | undefined {
  let at = def;
  for (let i = 0; at && i < 16; i++) {
    if (WRAPPERS.has(at.type)) at = at.innerType?._zod.def;
    else if (at.type === "pipe") at = at.in?._zod.def;
    else return at;
  }
  return at;
}

const toCamel = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const toSnake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function normalise(def: DefLike | undefined, value: unknown, depth: number): unknown {
  const inner = unwrap(def);
  if (!inner || depth > 8 || typeof value !== "object" || value === null) return value;
  if (inner.type === "array" && Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((item, i) => {
      const fixed = normalise(inner.element?._zod.def, item, depth + 1);
      if (fixed !== item) (out ??= [...value])[i] = fixed;
    });
    return out ?? value;
  }
  if (inner.type !== "object" || !inner.shape || Array.isArray(value)) return value;
  const shape = inner.shape;
  const record = value as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(record)) {
    let name = key;
    if (!(key in shape)) {
      const other = key.includes("_") ? toCamel(key) : toSnake(key);
      if (other in shape && !(other in record)) name = other;
    }
    const fieldDef = shape[name]?._zod.def;
    const fixed = fieldDef ? normalise(fieldDef, item, depth + 1) : item;
    if (name !== key || fixed !== item) out ??= { ...record };
    if (out) {
      if (name !== key) delete out[key];
      out[name] = fixed;
    }
  }
  return out ?? value;
}

/** The record with keys spelt in the other case renamed to the schema's spelling (the same object when none are). */
export function normaliseCasing(schema: z.ZodType, value: unknown): unknown {
  return normalise(defOf(schema), value, 0);
}

/** A field path as a metric label: keys joined with dots, list indexes as []. */
export function fieldLabel(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += "[]";
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out.length > 80 ? `${out.slice(0, 79)}…` : out;
}

export type ParsedRecord<T> =
  { ok: true; data: T; drift: string[] } | { ok: false; error: z.ZodError; input: unknown };

/**
 * One record through its schema. A lenient schema's record is read with casing quirks handled,
 * unreadable optional and expected fields left out, and `drift` names them and the expected fields
 * that are missing. Other schemas: the record fits or it does not.
 */
export function parseRecord<T>(schema: z.ZodType<T>, record: unknown): ParsedRecord<T> {
  const first = schema.safeParse(record);
  const info = lenientSchemas.get(schema);
  if (!info) return first.success ? { ok: true, data: first.data, drift: [] } : fail(first.error, record);
  if (first.success && missingExpected(info, first.data).length === 0) {
    return { ok: true, data: first.data, drift: [] };
  }
  let input = normaliseCasing(schema, record);
  let result = input === record ? first : schema.safeParse(input);
  const drift: string[] = [];
  if (!result.success) {
    if (typeof input !== "object" || input === null || Array.isArray(input)) return fail(result.error, input);
    const unreadable = new Set<string>();
    for (const issue of result.error.issues) {
      const key = issue.path[0];
      if (typeof key !== "string" || info.required.has(key)) return fail(result.error, input);
      unreadable.add(key);
    }
    const kept = { ...(input as Record<string, unknown>) };
    for (const key of unreadable) delete kept[key];
    input = kept;
    result = schema.safeParse(kept);
    if (!result.success) return fail(result.error, input);
    drift.push(...unreadable);
  }
  for (const key of missingExpected(info, result.data)) if (!drift.includes(key)) drift.push(key);
  return { ok: true, data: result.data, drift };
}

function fail(error: z.ZodError, input: unknown): ParsedRecord<never> {
  return { ok: false, error, input };
}

function missingExpected(info: LenientInfo, data: unknown): string[] {
  const record = data as Record<string, unknown>;
  return info.expected.filter((key) => record[key] === undefined);
}

/** The expected fields of a lenient schema (none for others): a fast check's result must have them all. */
export function expectedFields(schema: z.ZodType): readonly string[] {
  return lenientSchemas.get(schema)?.expected ?? [];
}

/**
 * A record's top-level keys the schema does not know (new fields the platform added), and those it
 * knows only in the other case (`display_name`): what `doctor` reports as drift to look at.
 */
export function unknownFields(
  schema: z.ZodType,
  record: unknown,
): { unknown: string[]; otherCase: string[] } {
  const inner = unwrap(defOf(schema));
  if (!inner?.shape || typeof record !== "object" || record === null || Array.isArray(record)) {
    return { unknown: [], otherCase: [] };
  }
  const unknown: string[] = [];
  const otherCase: string[] = [];
  for (const key of Object.keys(record)) {
    if (key in inner.shape) continue;
    const twin = key.includes("_") ? toCamel(key) : toSnake(key);
    (twin in inner.shape ? otherCase : unknown).push(key);
  }
  return { unknown, otherCase };
}
