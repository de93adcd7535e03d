import type { z } from "zod";
import { valueAt } from "../config/path.js";
import { abbreviate } from "./errors.js";
import type { RejectedRecord } from "./types.js";

/** Removes known secrets (client secret, tokens) from text; identity when none are known. */
export type Redact = (text: string) => string;
const keep: Redact = (text) => text;

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

/** Validate list records one by one: good ones returned, bad ones reported. */
export function validateRecords<T>(
  schema: z.ZodType<T>,
  records: readonly unknown[],
  endpoint: string,
  redact: Redact = keep,
): { items: T[]; rejected: RejectedRecord[] } {
  const items: T[] = [];
  const rejected: RejectedRecord[] = [];
  records.forEach((record, index) => {
    const result = schema.safeParse(record);
    if (result.success) items.push(result.data);
    else rejected.push({ endpoint, ...describeIssue(result.error, record, `[${index}]`, redact) });
  });
  return { items, rejected };
}
