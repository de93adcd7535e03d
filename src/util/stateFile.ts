/**
 * A small state file of JSON kept across restarts (the traffic counters, the sites' states): read and
 * checked against its schema, or undefined when there is none. A file that cannot be read or does not
 * fit throws an error naming the file and the first field that is wrong.
 */
import { readFile } from "node:fs/promises";
import type { z } from "zod";

export async function readStateFile<T>(
  file: string,
  schema: z.ZodType<T>,
  what: string,
): Promise<T | undefined> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${file}: not JSON`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${file}: ${issue?.path.join(".") || "(top)"}: ${issue?.message ?? `not ${what}`}`);
  }
  return parsed.data;
}
