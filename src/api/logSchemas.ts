/**
 * zod schemas of the log endpoints' answers: the PHP and web-server log pages and their entries, and
 * activity log entries (re-exported by schemas.ts, with the rest of the API's shapes and its rules).
 */
import { z } from "zod";
import { lenientObject } from "./lenient.js";
import { integer as int, number as num, text as str } from "./valueForms.js";

// One type of a union, taken only as that type: a union gives each of its types as it came.
const exactInt = () => z.number().int();
const exactNum = () => z.number();

/**
 * The log endpoints' own shape (no envelope). `total_results` is not needed to page, so any value is
 * accepted. The continuation is `scroll_id`, as documented; `scrollId` (the API's usual camelCase)
 * is read too (decode.ts decides which one counts).
 */
export const LogPageSchema = z.object({
  total_results: z.unknown().optional(),
  logs: z.array(z.unknown()).nullable(),
  scroll_id: str().nullable().optional(),
  scrollId: str().nullable().optional(),
});

/**
 * ISO 8601 text, or an epoch number (seconds for web-server logs), as it came: read by the caller
 * (src/api/times.ts), which counts an entry whose time cannot be read as malformed.
 */
const LogTimestampSchema = z.union([z.string().min(1), exactNum()]);

// Log entries: a record without a required field (or with one that cannot be read) is skipped; an
// optional field that cannot be read is left out and counted as drift, the entry kept. Their keys are
// sorted: a validated entry (zod keeps the schema's order) then serialises straight to the canonical
// text its fingerprint is taken of.
export const PhpLogEntrySchema = lenientObject({
  required: { message: str(), timestamp: LogTimestampSchema },
  expected: {},
  optional: {
    file: str().nullable().optional(),
    hosted_site_id: z.union([exactInt(), z.string()]).nullable().optional(),
    kind: str().nullable().optional(),
    line: int().nullable().optional(),
    name: str().nullable().optional(),
    severity: str().nullable().optional(),
  },
  sorted: true,
});
export type PhpLogEntry = z.infer<typeof PhpLogEntrySchema>;

export const ServerLogEntrySchema = lenientObject({
  required: { status: int(), timestamp: LogTimestampSchema },
  expected: {},
  optional: {
    body_bytes_sent: num().nullable().optional(),
    cached: z.union([z.string(), z.boolean()]).nullable().optional(),
    date: str().nullable().optional(),
    http2: z.union([z.string(), z.boolean()]).nullable().optional(),
    http_host: str().nullable().optional(),
    http_referer: str().nullable().optional(),
    http_user_agent: str().nullable().optional(),
    http_version: str().nullable().optional(),
    http_x_forwarded_for: str().nullable().optional(),
    renderer: str().nullable().optional(),
    request_completion: str().nullable().optional(),
    request_time: num().nullable().optional(),
    request_type: str().nullable().optional(),
    request_url: str().nullable().optional(),
    scheme: str().nullable().optional(),
    type: str().nullable().optional(),
    user_ip: str().nullable().optional(),
  },
  sorted: true,
});
export type ServerLogEntry = z.infer<typeof ServerLogEntrySchema>;

/** The scroll-paged log streams (PHP and web server). */
export type ScrollStream = "php" | "server";
export type LogEntry = PhpLogEntry | ServerLogEntry;
/** Every log stream the exporter can tail: the two scroll-paged ones and the activity log. */
export type LogStream = ScrollStream | "activity";

/** How a log entry's time is documented: ISO 8601 text (as `toISOString` writes it), or epoch seconds. */
export type LogTimeForm = "iso" | "epoch-seconds";

/**
 * The time fields of each stream's entries and the form each is documented in: an entry's fingerprint
 * writes them so, whatever form they came in (src/logs/canonicalEntry.ts).
 */
export const LOG_TIME_FORMS: Readonly<Record<LogStream, Readonly<Record<string, LogTimeForm>>>> = {
  php: { timestamp: "iso" },
  server: { timestamp: "epoch-seconds", date: "iso" },
  activity: { timestamp: "iso" },
};

// Activity log

/** One activity log entry (account or site): who did what, from where. Keys sorted, as log entries'. */
export const ActivityEntrySchema = lenientObject({
  required: { id: z.union([exactInt(), z.string().min(1)]), name: str(1), timestamp: LogTimestampSchema },
  expected: {},
  optional: {
    accountEmail: str().nullable().optional(),
    description: str().nullable().optional(),
    ipAddress: str().nullable().optional(),
    message: str().nullable().optional(),
    source: str().nullable().optional(),
    userAgent: str().nullable().optional(),
  },
  sorted: true,
});
export type ActivityEntry = z.infer<typeof ActivityEntrySchema>;
