/**
 * Response shapes, decoded: the standard envelope {message, data, errors, page}, single objects, lists
 * validated record by record, grouped lists, zones with records, and the log endpoints' own shape
 * {total_results, logs, scroll_id}. A decoder turns a parsed JSON body into typed data or throws an
 * ApiSchemaError naming the field; skipped records are reported through the context.
 */
import type { z } from "zod";
import { ApiSchemaError } from "./errors.js";
import type { Redact } from "./redact.js";
import {
  EnvelopeSchema,
  LogPageSchema,
  ZoneWithRecordsSchema,
  type DnsRecord,
  type Page,
  type Zone,
} from "./schemas.js";
import { JsonSyntaxError, scanLogPage, type LogPageSpans } from "./jsonScan.js";
import { fieldLabel, parseRecord } from "./lenient.js";
import { BytesRecords, checkedRecords, type LogRecords, type PageBytes } from "./logRecords.js";
import {
  describeIssue,
  hasProblems,
  mergeValidated,
  recordCheck,
  validateRecords,
  type Validated,
} from "./validate.js";

export interface DecodeContext {
  /** Route template, for errors and metrics. */
  endpoint: string;
  redact: Redact;
  /** Records skipped and fields missing in one response (called once per response that had any). */
  reportRejected(result: Validated<unknown>): void;
}

export type Decoder<T> = ((body: unknown, ctx: DecodeContext) => Promise<T>) & {
  /** The schema of one record (of a list) or of the object: what doctor compares an answer with. */
  readonly recordSchema?: z.ZodType;
  /**
   * Decode the answer's bytes without parsing all of them first (log pages: see logRecords.ts). The
   * bytes are the decoded value's to hand back.
   */
  readonly fromBytes?: (page: PageBytes, ctx: DecodeContext) => Promise<T>;
};

/** A decoder that says which schema its records follow. */
const describedBy = <T>(
  schema: z.ZodType,
  decode: (body: unknown, ctx: DecodeContext) => Promise<T>,
): Decoder<T> => Object.assign(decode, { recordSchema: schema });

export type ListResult<T> = Validated<T>;

export interface PageResult<T> extends ListResult<T> {
  /** The envelope's paging info, when the platform sent it. */
  page?: Page;
}

/** A response body as JSON; an empty body is null. */
export function parseJsonBody(text: string, endpoint: string): unknown {
  if (text.trim() === "") return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ApiSchemaError(endpoint, "", "the response body is not JSON");
  }
}

function envelope(body: unknown, ctx: DecodeContext): { data: unknown; page?: Page } {
  const parsed = EnvelopeSchema.safeParse(body);
  if (!parsed.success) {
    const { field, problem } = describeIssue(parsed.error, body, "", ctx.redact);
    throw new ApiSchemaError(ctx.endpoint, field, problem);
  }
  return { data: parsed.data.data, page: parsed.data.page };
}

function check<T>(schema: z.ZodType<T>, value: unknown, field: string, ctx: DecodeContext): T {
  const parsed = parseRecord(schema, value);
  if (!parsed.ok) {
    const { field: at, problem } = describeIssue(parsed.error, parsed.input, field, ctx.redact);
    ctx.reportRejected({
      items: [],
      rejected: 1,
      firstRejected: { endpoint: ctx.endpoint, field: at, problem },
      rejectedFields: { [fieldLabel(parsed.error.issues[0]?.path ?? [])]: 1 },
    });
    throw new ApiSchemaError(ctx.endpoint, at, problem);
  }
  if (parsed.drift.length > 0) {
    ctx.reportRejected({
      items: [],
      rejected: 0,
      drift: Object.fromEntries(parsed.drift.map((f) => [f, 1])),
    });
  }
  return parsed.data;
}

async function records<T>(
  schema: z.ZodType<T>,
  value: unknown,
  field: string,
  ctx: DecodeContext,
): Promise<ListResult<T>> {
  if (!Array.isArray(value)) throw new ApiSchemaError(ctx.endpoint, field, "expected a list");
  const result = await validateRecords(schema, value, ctx.endpoint, ctx.redact, field);
  if (hasProblems(result)) ctx.reportRejected(result);
  return result;
}

/** `data` is one object. */
export const object = <T>(schema: z.ZodType<T>): Decoder<T> =>
  describedBy(schema, async (body, ctx) => check(schema, envelope(body, ctx).data, "data", ctx));

/** `data` is a list, validated record by record. */
export const list = <T>(schema: z.ZodType<T>): Decoder<ListResult<T>> =>
  describedBy(schema, async (body, ctx) => records(schema, envelope(body, ctx).data, "data", ctx));

/** `data` is one page of a list; the envelope's `page` says where it stands. */
export const pagedList = <T>(schema: z.ZodType<T>): Decoder<PageResult<T>> =>
  describedBy(schema, async (body, ctx) => {
    const { data, page } = envelope(body, ctx);
    const result: PageResult<T> = await records(schema, data, "data", ctx);
    if (page) result.page = page;
    return result;
  });

export interface Grouped<T> {
  /** The grouping key the API used (active, inactive, drop-ins, parent, ...); "" for a flat list. */
  group: string;
  item: T;
}

/**
 * `data` is an object of lists keyed by group (security alerts group by status). A flat list is
 * accepted too: it has no group names, so each item's own status stands in for one.
 */
export const grouped = <T>(schema: z.ZodType<T>): Decoder<ListResult<Grouped<T>>> =>
  describedBy(schema, async (body, ctx) => {
    const { data } = envelope(body, ctx);
    if (typeof data !== "object" || data === null) {
      throw new ApiSchemaError(ctx.endpoint, "data", "expected an object of lists or a list");
    }
    const groups = Array.isArray(data) ? { "": data } : (data as Record<string, unknown>);
    const out: ListResult<Grouped<T>> = { items: [], rejected: 0 };
    for (const [group, value] of Object.entries(groups)) {
      if (value === null || value === undefined) continue;
      const field = group ? `data.${group}` : "data";
      const result = await records(schema, value, field, ctx);
      for (const item of result.items) out.items.push({ group, item });
      mergeValidated(out, result);
    }
    return out;
  });

export interface ZoneRecords extends ListResult<DnsRecord> {
  zone: Zone;
}

/** `data` is a zone with its `records`: the zone checked whole, the records one by one. */
export const zoneWithRecords = <T extends DnsRecord>(recordSchema: z.ZodType<T>): Decoder<ZoneRecords> =>
  describedBy(recordSchema, async (body, ctx) => {
    const zone = check(ZoneWithRecordsSchema, envelope(body, ctx).data, "data", ctx);
    const result = await records(recordSchema, zone.records ?? [], "data.records", ctx);
    const { records: _records, updated: _updated, ...info } = zone;
    return { ...result, zone: info };
  });

export interface LogPage<T> {
  /** The page's records that reached it checked or not yet checked (see LogRecords). */
  records: LogRecords<T>;
  /** Records the page held, valid and skipped. */
  rawCount: number;
  /** Records skipped before the page was handed on (not among `records`). */
  rejected: number;
  /** `total_results` when it is a count (the platform's estimate; paging does not depend on it). */
  totalResults: number | null;
  /** The continuation: null when the page came without a usable one. */
  scrollId: string | null;
}

/** A count, from a number or a string of digits; anything else is no count. */
function countOf(value: unknown): number | null {
  const n = typeof value === "string" && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  return typeof n === "number" && Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/** The page's own fields: checked, or an error naming the field. */
function logPageHead(body: unknown, ctx: DecodeContext): z.infer<typeof LogPageSchema> {
  const parsed = LogPageSchema.safeParse(body);
  if (!parsed.success) {
    const { field, problem } = describeIssue(parsed.error, body, "", ctx.redact);
    throw new ApiSchemaError(ctx.endpoint, field, problem);
  }
  return parsed.data;
}

const headOf = (
  head: z.infer<typeof LogPageSchema>,
): Pick<LogPage<unknown>, "totalResults" | "scrollId"> => ({
  totalResults: countOf(head.total_results),
  scrollId: head.scroll_id || head.scrollId || null,
});

/** The members of a page's text a page is made of (others are not looked at, as the schema strips them). */
const HEAD_KEYS = ["total_results", "scroll_id", "scrollId"] as const;

/**
 * The log endpoints' own shape: {total_results, logs, scroll_id}, no envelope. The continuation may
 * come as `scroll_id` (documented) or `scrollId`; an empty one is none.
 *
 * From the answer's bytes (what the API client uses for a quiet stream's pages), the page's own
 * fields are checked at once and its records when they are asked for; a parsed body (doctor, a
 * backlog's pages) has every record checked at once.
 */
export const logPage = <T extends { timestamp: unknown }>(schema: z.ZodType<T>): Decoder<LogPage<T>> => {
  const whole = async (body: unknown, ctx: DecodeContext): Promise<LogPage<T>> => {
    const head = logPageHead(body, ctx);
    const raw = head.logs ?? [];
    const result = await records(schema, raw, "logs", ctx);
    return {
      records: checkedRecords(result.items),
      rawCount: raw.length,
      rejected: result.rejected,
      ...headOf(head),
    };
  };
  const fromBytes = async (page: PageBytes, ctx: DecodeContext): Promise<LogPage<T>> => {
    let spans: LogPageSpans | undefined;
    try {
      spans = scanLogPage(page.bytes);
    } catch (err) {
      if (!(err instanceof JsonSyntaxError)) {
        page.release();
        throw err;
      }
    }
    if (!spans?.records) {
      // Not JSON, not an object, or `logs` is no list: decoded whole from the text, for the same errors.
      const text = page.bytes.toString("utf8");
      page.release();
      return whole(parseJsonBody(text, ctx.endpoint), ctx);
    }
    let head;
    try {
      const fields: Record<string, unknown> = { logs: [] };
      for (const key of HEAD_KEYS) {
        const at = spans.members.get(key);
        if (at) fields[key] = JSON.parse(page.bytes.toString("utf8", at[0], at[1]));
      }
      head = logPageHead(fields, ctx);
    } catch (err) {
      page.release();
      throw err;
    }
    const check = recordCheck(schema, ctx.endpoint, ctx.redact, "logs");
    const records = new BytesRecords(page, spans.records, check, ctx.reportRejected);
    return { records, rawCount: records.length, rejected: 0, ...headOf(head) };
  };
  return Object.assign(describedBy(schema, whole), { fromBytes });
};
