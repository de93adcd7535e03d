/**
 * Record-by-record validation: one record that does not fit its schema is skipped and counted, never
 * the whole response. Long lists are validated in slices with a turn of the event loop between them,
 * so a response of a hundred thousand records cannot hold up a scrape of /metrics.
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { z } from "zod";
import { valueAt } from "../config/path.js";
import { abbreviate } from "./errors.js";
import { compileFlatObject } from "./fastParse.js";
import { expectedFields, fieldLabel, parseRecord } from "./lenient.js";
import type { Redact } from "./redact.js";

/** A record that did not fit its schema and was skipped. */
export interface RejectedRecord {
  /** Route template, e.g. `/sites/{id}/domains`. */
  endpoint: string;
  /** Dotted path of the first offending field, e.g. `data[3].healthy`. */
  field: string;
  /** What the schema expected and what came (value abbreviated, never secrets). */
  problem: string;
}

const keep: Redact = (text) => text;
/** Records validated between two turns of the event loop. */
const SLICE = 500;

/** The offending value as short text: redacted BEFORE abbreviating, so no piece of a secret survives. */
function preview(value: unknown, redact: Redact): string {
  let text: string;
  try {
    text = typeof value === "string" ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return abbreviate(redact(text), 60);
}

/** First issue of a failed parse as (field path, problem with what came). */
export function describeIssue(
  error: z.ZodError,
  input: unknown,
  prefix = "",
  redact: Redact = keep,
): { field: string; problem: string } {
  const issue = error.issues[0];
  if (!issue) return { field: prefix, problem: "invalid" };
  const field = prefix + issue.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("");
  const got = valueAt(input, issue.path);
  return {
    field: field.replace(/^\./, ""),
    problem: `${redact(issue.message)}; got ${got === undefined ? "nothing" : preview(got, redact)}`,
  };
}

export interface Validated<T> {
  items: T[];
  /** How many records were skipped. */
  rejected: number;
  /** The first skipped record: where and why. */
  firstRejected?: RejectedRecord;
  /** Skipped records by the field that made them unusable (a path within the record, indexes as []). */
  rejectedFields?: Record<string, number>;
  /** Kept records that lacked a field (missing, or unreadable and left out), by field. */
  drift?: Record<string, number>;
}

function add(counts: Record<string, number>, key: string, n = 1): void {
  counts[key] = (counts[key] ?? 0) + n;
}

/** Add one result's skipped records and drift to another's (pages of one list, groups of one answer). */
export function mergeValidated<T>(into: Validated<T>, from: Validated<unknown>): void {
  into.rejected += from.rejected;
  into.firstRejected ??= from.firstRejected;
  for (const [field, n] of Object.entries(from.rejectedFields ?? {}))
    add((into.rejectedFields ??= {}), field, n);
  for (const [field, n] of Object.entries(from.drift ?? {})) add((into.drift ??= {}), field, n);
}

/** Whether a result has anything to report (skipped records or drift). */
export function hasProblems(result: Validated<unknown>): boolean {
  return result.rejected > 0 || Object.keys(result.drift ?? {}).length > 0;
}

const compiled = new WeakMap<z.ZodType, ((input: unknown) => unknown) | null>();

/** The fast checker of a flat schema (compiled once), or null: see fastParse.ts. */
function fastPathOf<T>(schema: z.ZodType<T>): ((input: unknown) => T | undefined) | null {
  let fast = compiled.get(schema);
  if (fast === undefined) {
    fast = compileFlatObject(schema) ?? null;
    compiled.set(schema, fast);
  }
  return fast as ((input: unknown) => T | undefined) | null;
}

/**
 * One schema's records checked one at a time: the record as the schema gives it, or undefined when it
 * does not fit (counted in `into`, the first one described there); drift is counted there too.
 */
export type RecordCheck<T> = (record: unknown, index: number, into: Validated<T>) => T | undefined;

export function recordCheck<T>(
  schema: z.ZodType<T>,
  endpoint: string,
  redact: Redact = keep,
  fieldPrefix = "",
): RecordCheck<T> {
  const fast = fastPathOf(schema);
  const expected = expectedFields(schema);
  return (record, index, into) => {
    const quick = fast?.(record);
    if (
      quick !== undefined &&
      expected.every((key) => (quick as Record<string, unknown>)[key] !== undefined)
    ) {
      return quick;
    }
    const result = parseRecord(schema, record);
    if (result.ok) {
      for (const field of result.drift) add((into.drift ??= {}), field);
      return result.data;
    }
    into.rejected += 1;
    add((into.rejectedFields ??= {}), fieldLabel(result.error.issues[0]?.path ?? []));
    into.firstRejected ??= {
      endpoint,
      ...describeIssue(result.error, result.input, `${fieldPrefix}[${index}]`, redact),
    };
    return undefined;
  };
}

/** Validate list records one by one: good ones returned, bad ones counted (the first one described). */
export async function validateRecords<T>(
  schema: z.ZodType<T>,
  records: readonly unknown[],
  endpoint: string,
  redact: Redact = keep,
  fieldPrefix = "",
): Promise<Validated<T>> {
  const out: Validated<T> = { items: [], rejected: 0 };
  const check = recordCheck(schema, endpoint, redact, fieldPrefix);
  for (let index = 0; index < records.length; index++) {
    if (index > 0 && index % SLICE === 0) await yieldToEventLoop();
    const item = check(records[index], index, out);
    if (item !== undefined) out.items.push(item);
  }
  return out;
}
