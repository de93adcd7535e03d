/**
 * The fast record checker against zod itself: on every generated record it either gives exactly what
 * zod gives (same keys, same order, same values, values in another form read alike) or steps aside, it
 * never accepts what zod rejects, and for JSON-like records it steps aside only when zod rejects.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { compileFlatObject } from "../../../src/api/fastParse.js";
import {
  ActivityEntrySchema,
  BackupEntrySchema,
  PhpLogEntrySchema,
  ServerLogEntrySchema,
} from "../../../src/api/schemas.js";
import { boolean, integer, number, text } from "../../../src/api/valueForms.js";

const ABSENT = Symbol("absent");
const POOL: unknown[] = [
  ABSENT,
  undefined,
  null,
  "",
  "x",
  "2026-11-23T10:00:00Z",
  "12",
  // Values in another form than their field's type.
  " 100 ",
  "1e3",
  "-2.5",
  "1.5",
  "0x10",
  "NaN",
  "true",
  "FALSE",
  " 0 ",
  "1",
  1,
  0,
  -0,
  7,
  1.5,
  -3,
  2 ** 53,
  Number.MAX_SAFE_INTEGER,
  Infinity,
  Number.NaN,
  true,
  false,
  {},
  [],
  ["x"],
  { nested: 1 },
];

/** A small deterministic generator, so a failure names a reproducible record. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function records(keys: string[], n: number, seed: number): Array<Record<string, unknown>> {
  const rand = prng(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rand() * list.length)] as T;
  const out: Array<Record<string, unknown>> = [];
  for (let i = 0; i < n; i++) {
    const order = [...keys, "extra", "another"].sort(() => rand() - 0.5);
    const record: Record<string, unknown> = {};
    for (const key of order) {
      const value = pick(POOL);
      if (value !== ABSENT) record[key] = value;
    }
    out.push(record);
  }
  return out;
}

/** Records most of whose values fit, so the accepting path is exercised as much as the rejecting one. */
function plausible(schema: z.ZodObject, n: number, seed: number): Array<Record<string, unknown>> {
  const rand = prng(seed);
  // For every key, the first of a few values its own schema takes.
  const candidates: unknown[] = ["value", 200, 1.5, true];
  const good = Object.fromEntries(
    Object.entries(schema.shape).map(([k, field]) => [
      k,
      candidates.find((v) => (field as z.ZodType).safeParse(v).success),
    ]),
  );
  return records(Object.keys(schema.shape), n, seed).map((r) => {
    const copy: Record<string, unknown> = { ...r };
    for (const [k, v] of Object.entries(good)) if (rand() < 0.8) copy[k] = v;
    return copy;
  });
}

/** The same records with only the schema's keys, in the schema's order (what an API usually sends). */
function inSchemaOrder(schema: z.ZodObject, n: number, seed: number): Array<Record<string, unknown>> {
  return plausible(schema, n, seed).map((r) => {
    const ordered: Record<string, unknown> = {};
    for (const k of Object.keys(schema.shape)) if (k in r) ordered[k] = r[k];
    return ordered;
  });
}

const jsonLike = (r: Record<string, unknown>) =>
  Object.values(r).every((v) => v !== undefined && !(typeof v === "number" && !Number.isFinite(v)));

const cases: Array<[string, z.ZodObject]> = [
  ["PHP log entry", PhpLogEntrySchema],
  ["web-server log entry", ServerLogEntrySchema],
  ["activity entry", ActivityEntrySchema],
  [
    "field of every value form",
    z.object({
      n: number(),
      i: integer(),
      b: boolean(),
      t: text(),
      tMin: text(2).optional(),
      nul: integer().nullable().optional(),
      // The first option to take a value gives it: "12" is 12 here, and stays "12" below.
      formFirst: z.union([integer(), z.string()]).optional(),
      plainFirst: z.union([z.string(), integer()]).optional(),
    }),
  ],
  [
    "every supported form",
    z.object({
      s: z.string(),
      sMin: z.string().min(1),
      n: z.number(),
      i: z.number().int(),
      b: z.boolean(),
      opt: z.string().optional(),
      nul: z.number().nullable(),
      both: z
        .union([z.number().int(), z.string().min(2)])
        .nullable()
        .optional(),
    }),
  ],
];

describe("fast record checker", () => {
  it.each(cases)("gives exactly what zod gives for a %s, or steps aside", (_name, schema) => {
    const fast = compileFlatObject(schema);
    expect(fast).toBeDefined();
    let accepted = 0;
    let zodAccepted = 0;
    let uncopied = 0;
    for (const record of [
      ...records(Object.keys(schema.shape), 4000, 1),
      ...plausible(schema, 4000, 2),
      ...inSchemaOrder(schema, 4000, 3),
    ]) {
      const expected = schema.safeParse(record);
      const got = fast?.(record);
      if (expected.success) zodAccepted += 1;
      if (got === undefined) {
        // For records JSON can carry, stepping aside means zod rejects too.
        if (jsonLike(record)) expect(expected.success, JSON.stringify(record)).toBe(false);
        continue;
      }
      accepted += 1;
      expect(expected.success, JSON.stringify(record)).toBe(true);
      expect(Object.keys(got as object)).toEqual(Object.keys(expected.data as object));
      expect(got).toStrictEqual(expected.data);
      if (got === record) uncopied += 1;
    }
    // Both paths were exercised, and records with nothing to strip were taken as they are.
    expect(accepted).toBeGreaterThan(100);
    expect(uncopied).toBeGreaterThan(100);
    expect(zodAccepted).toBeGreaterThanOrEqual(accepted);
  });

  it("is not built for schemas it does not understand, so zod does all the work", () => {
    expect(compileFlatObject(BackupEntrySchema)).toBeUndefined(); // a refinement
    expect(compileFlatObject(z.strictObject({ a: z.string() }))).toBeUndefined();
    expect(compileFlatObject(z.looseObject({ a: z.string() }))).toBeUndefined();
    expect(compileFlatObject(z.object({ a: z.object({ b: z.string() }) }))).toBeUndefined();
    expect(compileFlatObject(z.object({ a: z.string().transform((s) => s.length) }))).toBeUndefined();
    expect(compileFlatObject(z.object({ a: z.string().max(3) }))).toBeUndefined();
    expect(compileFlatObject(z.object({ a: z.number().min(0) }))).toBeUndefined();
    expect(compileFlatObject(z.array(z.string()))).toBeUndefined();
  });

  it("steps aside for what is not a record", () => {
    const fast = compileFlatObject(z.object({ a: z.string().optional() }));
    for (const input of [null, undefined, "text", 3, [], [{ a: "x" }]]) expect(fast?.(input)).toBeUndefined();
    expect(fast?.({})).toStrictEqual({});
  });
});
