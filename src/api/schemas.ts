/**
 * zod schemas for every platform API response the daemon reads: the single
 * place in the code that knows the API's shapes (docs/platform-api.md says
 * what they are and which parts were guessed).
 *
 * Rules:
 * - Unknown fields are tolerated (z.object strips them).
 * - Fields the platform's documentation marks "or null" accept null.
 * - Fields the exporter publishes are required, so a record missing one is
 *   reported and skipped instead of producing a wrong value.
 * - Casing is kept exactly as the platform spells it (camelCase for most
 *   resources, snake_case for usage reports, performance reports, backup
 *   listings, security alerts and logs).
 */
import { z } from "zod";
import { lenientObject } from "./lenient.js";
import { parseBackupTimestamp } from "./times.js";

const int = () => z.number().int();
const num = () => z.number();

/**
 * Paginated responses carry `page`. Paging follows `nextPage` and `lastPage`; the other fields are not
 * used, so any value there is accepted (an odd type must not stop a list or a log from being read).
 */
export const PageSchema = z.object({
  currentPage: z.unknown().optional(),
  nextPage: int().nullable(),
  lastPage: int(),
  perPage: z.unknown().optional(),
  totalItems: z.unknown().optional(),
});
export type Page = z.infer<typeof PageSchema>;

/**
 * The standard envelope; `data` is validated separately (record by record for
 * lists) so one bad record never rejects the whole response.
 */
export const EnvelopeSchema = z.object({
  /** Not used in a successful answer: any value is accepted. */
  message: z.unknown().optional(),
  data: z.unknown(),
  /** Not used in a successful answer (error bodies: ErrorBodySchema). */
  errors: z.unknown().optional(),
  page: PageSchema.optional(),
});
export type Envelope = z.infer<typeof EnvelopeSchema>;

/** Error bodies use the same envelope; everything is optional because a proxy may answer instead. */
export const ErrorBodySchema = z.object({
  message: z.string().optional(),
  errors: z.array(z.string()).nullable().optional(),
});

// ---------------------------------------------------------------- auth

export const TokenResponseSchema = z.object({
  access_token: z.string().min(1),
  token_type: z.string().optional(),
  // Documented as integer seconds; a number in a string is read too. Zero or less is unusable.
  expires_in: z
    .union([
      num(),
      z
        .string()
        .regex(/^\s*\d+(\.\d+)?\s*$/)
        .transform(Number),
    ])
    .pipe(num().positive()),
  scope: z.string().optional(),
  created_at: num().optional(),
  id: int().optional(),
  name: z.string().optional(),
  email: z.string().optional(),
  gravatar: z.string().optional(),
  scopes: z.array(z.string()).optional(),
});

// ---------------------------------------------------------------- account

const PageViewCountSchema = z.object({ people: num(), views: num() });

export const AccountSchema = lenientObject({
  required: {},
  expected: {
    maxSites: int(),
    capacity: z.object({
      sites: z.object({
        maxBillable: int(),
        maxStaging: int(),
        billable: int(),
        staging: int(),
        total: int(),
      }),
    }),
  },
  optional: {
    name: z.string().optional(),
    email: z.string().optional(),
    sitesCount: int().optional(),
  },
});
export type Account = z.infer<typeof AccountSchema>;

// ---------------------------------------------------------------- sites

export const TagSchema = z.object({ id: int(), name: z.string() });

/** An id documented as an integer, tolerated as a string of digits. */
const IdSchema = z.union([int(), z.string().regex(/^\d+$/).transform(Number)]);

/**
 * A site of the list. Only what identifies it is required; a renamed or retyped published field is
 * counted as drift and its series left out, never the site dropped (src/api/lenient.ts).
 */
export const SiteSchema = lenientObject({
  required: {
    id: IdSchema,
    name: z.string().min(1),
    state: z.string().min(1),
  },
  expected: {
    displayName: z.string(),
    url: z.string(),
    datacenterCode: z.string(),
    phpVersion: z.string().nullable(),
    cmsEnvironmentType: z.string(),
    staging: z.boolean(),
    sandbox: z.boolean(),
    kit: z.boolean(),
    edgeCache: z.string(),
    edgeCacheDefensiveMode: z.boolean(),
    fileSystemUsageBytes: num(),
    databaseUsageBytes: num(),
  },
  optional: {
    datacenterName: z.string().optional(),
    edgeCacheDefensiveModeUntil: int().nullable().optional(),
    maxFileSystemUsageBytes: num().nullable().optional(),
    warningHeadroomFileSystemUsageBytes: num().nullable().optional(),
    maxDatabaseUsageBytes: num().nullable().optional(),
    warningHeadroomDatabaseUsageBytes: num().nullable().optional(),
    tags: z.array(TagSchema).default([]),
    created: z.string().optional(),
    accountId: int().optional(),
    favorite: z.boolean().optional(),
  },
});
export type Site = z.infer<typeof SiteSchema>;

// ---------------------------------------------------------------- statistics

export const StatisticsSchema = z.object({
  id: int().optional(),
  databaseUsageBytes: num().optional(),
  fileSystemUsageBytes: num().optional(),
  pageViews: z.object({
    today: PageViewCountSchema.optional(),
    yesterday: PageViewCountSchema.optional(),
    currentMonth: PageViewCountSchema.optional(),
    lastMonth: PageViewCountSchema.optional(),
    twoMonthsAgo: PageViewCountSchema.optional(),
    lastOneYear: PageViewCountSchema.optional(),
    lastTwoYears: PageViewCountSchema.optional(),
  }),
});
export type Statistics = z.infer<typeof StatisticsSchema>;

// ---------------------------------------------------------------- usage report

export const UsageReportEntrySchema = z.object({
  billing_cycle: z.object({
    start_date: z.string(),
    end_date: z.string(),
    total_daily_average_storage_usage_in_gigabytes: num().optional(),
    total_unique_visits: num().optional(),
    site: z.object({
      id: int().optional(),
      name: z.string().optional(),
      url: z.string().optional(),
      daily_average_visits: num(),
      daily_average_storage_usage_in_gigabytes: num(),
    }),
  }),
});
export type UsageReportEntry = z.infer<typeof UsageReportEntrySchema>;

// ---------------------------------------------------------------- performance report

export const AuditNames = [
  "first_contentful_paint",
  "largest_contentful_paint",
  "speed_index",
  "interactive",
  "total_blocking_time",
  "server_response_time",
  "cumulative_layout_shift",
] as const;
export type AuditName = (typeof AuditNames)[number];

const auditScore = num().nullable().optional();
const auditText = z.string().nullable().optional();
// Documented as a string; accept a number too.
const auditNumeric = z.union([z.string(), num()]).nullable().optional();

/** Per audit: `<name>_score`, `<name>_display_value`, `<name>_numeric_value`, `<name>_numeric_unit`. */
type AuditFieldShape = { [K in AuditName as `${K}_score`]: typeof auditScore } & {
  [K in AuditName as `${K}_display_value` | `${K}_numeric_unit`]: typeof auditText;
} & { [K in AuditName as `${K}_numeric_value`]: typeof auditNumeric };

const auditFields = Object.fromEntries(
  AuditNames.flatMap((name) => [
    [`${name}_score`, auditScore],
    [`${name}_display_value`, auditText],
    [`${name}_numeric_value`, auditNumeric],
    [`${name}_numeric_unit`, auditText],
  ]),
) as AuditFieldShape;

export const StrategyReportSchema = z.object({
  created_at: z.string().nullable().optional(),
  updated_at: z.string().nullable().optional(),
  fetch_time: z.string().nullable().optional(),
  final_url: z.string().nullable().optional(),
  performance_score: num().nullable().optional(),
  accessibility_score: num().nullable().optional(),
  best_practices_score: num().nullable().optional(),
  seo_score: num().nullable().optional(),
  audit_tool_version: z.string().nullable().optional(),
  ...auditFields,
});
export type StrategyReport = z.infer<typeof StrategyReportSchema> & Record<string, unknown>;

export const PerformanceReportSchema = z.object({
  desktop_report: StrategyReportSchema.nullable().optional(),
  mobile_report: StrategyReportSchema.nullable().optional(),
});
export type PerformanceReport = z.infer<typeof PerformanceReportSchema>;

// ---------------------------------------------------------------- metrics (traffic)

/** period = {timestamp, <dimension>: {<metric>: {<dimension value>: number}}} */
export const MetricsPeriodSchema = z
  .object({ timestamp: num() })
  .catchall(z.union([z.record(z.string(), z.record(z.string(), num().nullable())), num()]));

export const MetricsResultSchema = z.object({
  id: int().optional(),
  name: z.string().optional(),
  search: z
    .object({
      startAt: num().optional(),
      endAt: num().optional(),
      resolution: num().optional(),
      metrics: z.array(z.string()).optional(),
      dimensions: z.array(z.string()).optional(),
    })
    .optional(),
  periods: z.array(z.unknown()),
});
export type MetricsResult = z.infer<typeof MetricsResultSchema>;

// ---------------------------------------------------------------- security alerts

export const SecurityAlertSchema = z.object({
  title: z.string().nullable().optional(),
  description: z.string().nullable().optional(),
  severity: z.string().nullable(),
  fixed_in: z.string().nullable().optional(),
  reference_urls: z.array(z.string()).nullable().optional(),
});

export const SecurityAlertItemSchema = lenientObject({
  required: { name: z.string().min(1) },
  expected: { version: z.string().nullable() },
  optional: {
    id: z.union([int(), z.string()]).optional(),
    site_id: int().optional(),
    status: z.string().nullable().optional(),
    active: z.boolean().optional(),
    // The documentation leaves the type open: a boolean, or the plugin record's none/available wording.
    update_available: z.union([z.boolean(), z.string()]).nullable().optional(),
    update_version: z.string().nullable().optional(),
    security_risk: z.boolean().optional(),
    security_alerts: z.array(SecurityAlertSchema).nullable().default([]),
  },
});
export type SecurityAlertItem = z.infer<typeof SecurityAlertItemSchema>;

// ---------------------------------------------------------------- domains

export const DomainSchema = lenientObject({
  required: { domainName: z.string().min(1) },
  expected: {
    primary: z.boolean(),
    healthy: z.boolean(),
    dnsConfirmed: z.boolean(),
    provisioned: z.boolean(),
  },
  optional: {
    id: z.union([int(), z.string()]).optional(),
    name: z.string().nullable().optional(),
    type: z.string().optional(),
    displayType: z.string().optional(),
    ipAddresses: z.array(z.string()).optional(),
    zoneId: z.union([int(), z.string()]).nullable().optional(),
  },
});
export type Domain = z.infer<typeof DomainSchema>;

// ---------------------------------------------------------------- backups

/** Combined listing entry; `timestamp` is 'YYYY-MM-DD-HH-MM' (UTC). */
export const BackupEntrySchema = lenientObject({
  required: {
    timestamp: z.string().refine((t) => parseBackupTimestamp(t) !== undefined, {
      message: "expected a time such as 2026-11-23-04-30",
    }),
  },
  expected: { databaseBackupId: int().nullable(), filesystemBackupId: int().nullable() },
  optional: { siteId: int().optional() },
});
export type BackupEntry = z.infer<typeof BackupEntrySchema>;

// ---------------------------------------------------------------- logs

/**
 * The log endpoints' own shape (no envelope). `total_results` is not needed to page, so any value is
 * accepted. The continuation is `scroll_id`, as documented; `scrollId` (the API's usual camelCase)
 * is read too (decode.ts decides which one counts).
 */
export const LogPageSchema = z.object({
  total_results: z.unknown().optional(),
  logs: z.array(z.unknown()).nullable(),
  scroll_id: z.string().nullable().optional(),
  scrollId: z.string().nullable().optional(),
});

/** ISO 8601 string, or epoch seconds (web-server logs), or epoch ms; normalised by the caller. */
const LogTimestampSchema = z.union([z.string().min(1), num()]);

// Log entry schemas list their keys in sorted order: a validated entry (zod keeps the schema's order)
// then serialises straight to the canonical text its fingerprint is taken of.
export const PhpLogEntrySchema = z.object({
  file: z.string().nullable().optional(),
  hosted_site_id: z.union([int(), z.string()]).nullable().optional(),
  kind: z.string().nullable().optional(),
  line: int().nullable().optional(),
  message: z.string(),
  name: z.string().nullable().optional(),
  severity: z.string().nullable().optional(),
  timestamp: LogTimestampSchema,
});
export type PhpLogEntry = z.infer<typeof PhpLogEntrySchema>;

export const ServerLogEntrySchema = z.object({
  body_bytes_sent: num().nullable().optional(),
  cached: z.union([z.string(), z.boolean()]).nullable().optional(),
  date: z.string().nullable().optional(),
  http2: z.union([z.string(), z.boolean()]).nullable().optional(),
  http_host: z.string().nullable().optional(),
  http_referer: z.string().nullable().optional(),
  http_user_agent: z.string().nullable().optional(),
  http_version: z.string().nullable().optional(),
  http_x_forwarded_for: z.string().nullable().optional(),
  renderer: z.string().nullable().optional(),
  request_completion: z.string().nullable().optional(),
  request_time: num().nullable().optional(),
  request_type: z.string().nullable().optional(),
  request_url: z.string().nullable().optional(),
  scheme: z.string().nullable().optional(),
  status: int(),
  timestamp: LogTimestampSchema,
  type: z.string().nullable().optional(),
  user_ip: z.string().nullable().optional(),
});
export type ServerLogEntry = z.infer<typeof ServerLogEntrySchema>;

/** The scroll-paged log streams (PHP and web server). */
export type ScrollStream = "php" | "server";
export type LogEntry = PhpLogEntry | ServerLogEntry;
/** Every log stream the exporter can tail: the two scroll-paged ones and the activity log. */
export type LogStream = ScrollStream | "activity";

// ---------------------------------------------------------------- activity log

/** One activity log entry (account or site): who did what, from where. Keys sorted, as log entries'. */
export const ActivityEntrySchema = z.object({
  accountEmail: z.string().nullable().optional(),
  description: z.string().nullable().optional(),
  id: z.union([int(), z.string().min(1)]),
  ipAddress: z.string().nullable().optional(),
  message: z.string().nullable().optional(),
  name: z.string().min(1),
  source: z.string().nullable().optional(),
  timestamp: LogTimestampSchema,
  userAgent: z.string().nullable().optional(),
});
export type ActivityEntry = z.infer<typeof ActivityEntrySchema>;

// ---------------------------------------------------------------- on-demand backups and restores

/** Epoch seconds, as most on-demand backup times are; tolerated as ISO text too. */
const EpochOrText = z.union([num(), z.string()]);

export const OndemandBackupSchema = lenientObject({
  required: { type: z.string().min(1) },
  expected: { status: z.string().min(1) },
  optional: {
    id: z.string().nullable().optional(),
    requestId: int().optional(),
    siteId: int().optional(),
    completed: EpochOrText.nullable().optional(),
    bytes: z.union([z.string(), num()]).nullable().optional(),
    requested: EpochOrText.nullable().optional(),
    backupTimestamp: z.string().nullable().optional(),
    createdBy: z.string().nullable().optional(),
    removedIn: z.string().nullable().optional(),
    deleteAt: EpochOrText.nullable().optional(),
  },
});
export type OndemandBackup = z.infer<typeof OndemandBackupSchema>;

export const RestoreSchema = lenientObject({
  required: { status: z.string().min(1), created: EpochOrText },
  expected: {},
  optional: {
    id: z.union([int(), z.string()]).optional(),
    logMessages: z.array(z.string()).nullable().optional(),
    filesystemId: z.union([z.string(), int()]).nullable().optional(),
    databaseId: z.union([z.string(), int()]).nullable().optional(),
    fromSiteId: int().nullable().optional(),
    error: z.string().nullable().optional(),
    updated: EpochOrText.nullable().optional(),
    completedAt: EpochOrText.nullable().optional(),
    failedAt: EpochOrText.nullable().optional(),
  },
});
export type Restore = z.infer<typeof RestoreSchema>;

// ---------------------------------------------------------------- git

export const GitDeploySchema = lenientObject({
  required: { created: EpochOrText, state: z.string().min(1) },
  expected: {},
  optional: {
    id: z.union([int(), z.string()]).optional(),
    after: z.string().nullable().optional(),
    before: z.string().nullable().optional(),
    branch: z.string().nullable().optional(),
    email: z.string().nullable().optional(),
    message: z.string().nullable().optional(),
    name: z.string().nullable().optional(),
    repository: z.string().nullable().optional(),
  },
});
export type GitDeploy = z.infer<typeof GitDeploySchema>;

// ---------------------------------------------------------------- DNS and certificates

export const ZoneSchema = lenientObject({
  required: { id: int(), name: z.string().min(1) },
  expected: {},
  optional: { created: z.string().nullable().optional() },
});
export type Zone = z.infer<typeof ZoneSchema>;

/** A zone with its records: the zone is checked whole, the records one by one. */
export const ZoneWithRecordsSchema = ZoneSchema.extend({
  updated: z.string().nullable().optional(),
  records: z.array(z.unknown()).nullable(),
});

/** A record; a missing or null `name` is the zone apex, like `@`. */
export const DnsRecordSchema = lenientObject({
  required: { id: int(), type: z.string().min(1) },
  expected: {},
  optional: {
    zoneId: int().optional(),
    primary: z.boolean().optional(),
    name: z
      .string()
      .nullish()
      .transform((n) => n ?? ""),
    value: z.string().nullable().optional(),
    ttl: int().nullable().optional(),
    siteId: IdSchema.nullable().optional(),
    created: z.string().nullable().optional(),
  },
});
export type DnsRecord = z.infer<typeof DnsRecordSchema>;

/** A flag whose type the documentation leaves open: a boolean, 0/1, or the same spelled as text. */
const FlagSchema = z.union([z.boolean(), z.literal(0), z.literal(1), z.enum(["true", "false", "0", "1"])]);
export type Flag = z.infer<typeof FlagSchema>;

/**
 * SSL details of an A record. Times may come in any of the API's forms (src/api/times.ts);
 * `broken_record` as a boolean, 0/1 or their text.
 */
export const SslDetailsSchema = z.object({
  force_ssl: z.union([z.boolean(), num()]).nullable().optional(),
  acme_certificate_id: z.union([int(), z.string()]).nullable().optional(),
  validation_expiration: EpochOrText.nullable().optional(),
  authz_uri: z.string().nullable().optional(),
  options: z.array(z.string()).nullable().optional(),
  certificate_expiration_date: EpochOrText.nullable().optional(),
  broken_record: FlagSchema.nullable().optional(),
  broken_check: z.unknown().optional(),
});
export type SslDetails = z.infer<typeof SslDetailsSchema>;
