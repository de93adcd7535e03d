/**
 * Log entries through the API client's decoder, as a read gets them: a page of them decoded from its
 * bytes (a quiet stream's page, records built when asked for) and parsed whole (a backlog's page).
 */
import type { z } from "zod";
import { logPage, type DecodeContext, type LogPage } from "../../../src/api/decode.js";
import type { Validated } from "../../../src/api/validate.js";

export interface Decoded<T> {
  /** Each entry as the page read from its bytes gives it (undefined: skipped). */
  fromBytes: Array<T | undefined>;
  /** Each entry as the page parsed whole gives it (the skipped ones left out). */
  whole: T[];
  /** What each decoding reported (skipped records, drift), the bytes' first. */
  reports: { fromBytes: Array<Validated<unknown>>; whole: Array<Validated<unknown>> };
}

const context = (reports: Array<Validated<unknown>>): DecodeContext => ({
  endpoint: "/sites/{id}/logs",
  redact: (t) => t,
  reportRejected: (r) => void reports.push(r),
});

const recordsOf = <T>(page: LogPage<T>) =>
  Array.from({ length: page.records.length }, (_, i) => page.records.record(i));

export async function decodeBothWays<T extends { timestamp: unknown }>(
  schema: z.ZodType<T>,
  entries: readonly unknown[],
): Promise<Decoded<T>> {
  const decode = logPage(schema);
  const text = JSON.stringify({ total_results: entries.length, logs: entries, scroll_id: "s" });
  const reports = { fromBytes: [] as Array<Validated<unknown>>, whole: [] as Array<Validated<unknown>> };
  const page = await decode.fromBytes?.(
    { bytes: Buffer.from(text), release: () => undefined },
    context(reports.fromBytes),
  );
  if (!page) throw new Error("log pages are decoded from their bytes");
  const whole = await decode(JSON.parse(text), context(reports.whole));
  return {
    fromBytes: recordsOf(page),
    whole: recordsOf(whole).filter((e): e is T => e !== undefined),
    reports,
  };
}
