/**
 * The keys a zod object schema allows, read through zod's public API: for "did you mean" hints on
 * unknown keys, and for the test that every key is documented.
 */
import { z } from "zod";

/** The schema under its wrappers: optional, nullable, default, prefault, and a pipe's input. */
export function unwrapSchema(schema: z.ZodType): z.ZodType {
  let s = schema;
  for (;;) {
    if (
      s instanceof z.ZodOptional ||
      s instanceof z.ZodNullable ||
      s instanceof z.ZodDefault ||
      s instanceof z.ZodPrefault
    ) {
      s = s.unwrap() as z.ZodType;
    } else if (s instanceof z.ZodPipe) {
      s = s.in as z.ZodType;
    } else {
      return s;
    }
  }
}

/** The object schema's fields by key, or undefined when `schema` is not an object. */
export function objectShape(schema: z.ZodType): Record<string, z.ZodType> | undefined {
  const s = unwrapSchema(schema);
  return s instanceof z.ZodObject ? (s.shape as Record<string, z.ZodType>) : undefined;
}

/** The keys allowed at `path` below `root` ([] when the path does not lead to an object). */
export function allowedKeys(root: z.ZodType, path: readonly PropertyKey[]): string[] {
  let schema: z.ZodType | undefined = root;
  for (const key of path) {
    schema = schema && objectShape(schema)?.[String(key)];
    if (!schema) return [];
  }
  return Object.keys(objectShape(schema) ?? {});
}
