/**
 * An endpoint's answer compared with what the exporter expects of it: records that would be skipped
 * (and the field why), fields missing from records the exporter keeps (drift), fields the platform
 * added that the exporter does not know, and keys in the other case. Uses the decoder the API client
 * uses, so what doctor says is what the collectors get.
 */
import type { Decoder } from "../api/decode.js";
import { ApiSchemaError } from "../api/errors.js";
import { unknownFields } from "../api/lenient.js";
import type { Validated } from "../api/validate.js";

export interface SchemaFindings {
  /** The answer as a whole does not fit (no envelope, not a list): field and problem. */
  unusable?: string;
  records: number;
  rejected: number;
  /** The first skipped record's field and problem. */
  firstRejected?: string;
  /** Fields missing or unreadable in kept records, with how many records. */
  drift: Record<string, number>;
  unknown: string[];
  otherCase: string[];
}

/** The records of an answer, wherever the envelope or the log shape puts them. */
function recordsOf(json: unknown): unknown[] {
  const body = json as { data?: unknown; logs?: unknown } | null;
  if (Array.isArray(body?.logs)) return body.logs;
  const data = body?.data;
  if (Array.isArray(data)) return data;
  if (data && typeof data === "object") {
    const record = data as Record<string, unknown>;
    if (Array.isArray(record.records)) return record.records;
    const values = Object.values(record);
    // Grouped lists (security alerts): an object of lists.
    if (values.length > 0 && values.every((v) => Array.isArray(v) || v === null)) {
      return values.flatMap((v) => (Array.isArray(v) ? v : []));
    }
    return [data];
  }
  return [];
}

export async function schemaFindings(
  decode: Decoder<unknown>,
  json: unknown,
  endpoint: string,
): Promise<SchemaFindings> {
  const out: SchemaFindings = { records: 0, rejected: 0, drift: {}, unknown: [], otherCase: [] };
  const reports: Validated<unknown>[] = [];
  try {
    await decode(json, { endpoint, redact: (t) => t, reportRejected: (r) => void reports.push(r) });
  } catch (err) {
    if (!(err instanceof ApiSchemaError)) throw err;
    out.unusable = `${err.field || "(the answer)"}: ${err.problem}`;
  }
  for (const r of reports) {
    out.rejected += r.rejected;
    if (r.firstRejected && !out.firstRejected)
      out.firstRejected = `${r.firstRejected.field}: ${r.firstRejected.problem}`;
    for (const [field, n] of Object.entries(r.drift ?? {})) out.drift[field] = (out.drift[field] ?? 0) + n;
  }
  const records = recordsOf(json);
  out.records = records.length;
  if (decode.recordSchema) {
    const unknown = new Set<string>();
    const otherCase = new Set<string>();
    for (const record of records.slice(0, 50)) {
      const found = unknownFields(decode.recordSchema, record);
      for (const k of found.unknown) unknown.add(k);
      for (const k of found.otherCase) otherCase.add(k);
    }
    out.unknown = [...unknown].sort();
    out.otherCase = [...otherCase].sort();
  }
  return out;
}
