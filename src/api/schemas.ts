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
 * - A field's value is read as the field's type when it comes in another form the
 *   documentation leaves open: a number or boolean as text, a string as a number
 *   (src/api/valueForms.ts). Fields that take two types (a union) take each as it comes.
 */
import { z } from "zod";
import { lenientObject } from "./lenient.js";
import { parseBackupTimestamp } from "./times.js";
import { boolean as bool, integer, number, text } from "./valueForms.js";

/** An integer, also given as text. */
const int = () => integer();
/** A number, also given as text. */
const num = () => number();
/** A string, also given as a number (and at least `min` characters long). */
const str = (min = 0) => text(min);
/** A boolean, also given as 0/1 or as text. */
const flag = () => bool();
// One type of a union, taken only as that type: a union gives each of its types as it came.
const exactInt = () => z.number().int();
const exactNum = () => z.number();

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
      exactNum(),
      z
        .string()
        .regex(/^\s*\d+(\.\d+)?\s*$/)
        .transform(Number),
    ])
    .pipe(exactNum().positive()),
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
    name: str().optional(),
    email: str().optional(),
    sitesCount: int().optional(),
  },
});
export type Account = z.infer<typeof AccountSchema>;

// ---------------------------------------------------------------- sites

export const TagSchema = z.object({ id: int(), name: str() });

/** An id documented as an integer, tolerated as text (a string of digits). */
const IdSchema = int();

/**
 * A site of the list. Only what identifies it is required; a renamed or retyped published field is
 * counted as drift and its series left out, never the site dropped (src/api/lenient.ts).
 */
export const SiteSchema = lenientObject({
  required: {
    id: IdSchema,
    name: str(1),
    state: str(1),
  },
  expected: {
    displayName: str(),
    url: str(),
    datacenterCode: str(),
    phpVersion: str().nullable(),
    cmsEnvironmentType: str(),
    staging: flag(),
    sandbox: flag(),
    kit: flag(),
    edgeCache: str(),
    edgeCacheDefensiveMode: flag(),
    fileSystemUsageBytes: num(),
    databaseUsageBytes: num(),
  },
  optional: {
    datacenterName: str().optional(),
    edgeCacheDefensiveModeUntil: int().nullable().optional(),
    maxFileSystemUsageBytes: num().nullable().optional(),
    warningHeadroomFileSystemUsageBytes: num().nullable().optional(),
    maxDatabaseUsageBytes: num().nullable().optional(),
    warningHeadroomDatabaseUsageBytes: num().nullable().optional(),
    tags: z.array(TagSchema).default([]),
    created: str().optional(),
    accountId: int().optional(),
    favorite: flag().optional(),
    // Not published; a change asks the collectors that back off again (src/collectors/siteChanges.ts).
    domainsCount: int().optional(),
    cmsVersion: str().optional(),
    // Not published; a change between two listings is an `access` change (src/changes/polled.ts).
    collaboratorsCount: int().optional(),
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
    start_date: str(),
    end_date: str(),
    total_daily_average_storage_usage_in_gigabytes: num().optional(),
    total_unique_visits: num().optional(),
    site: z.object({
      id: int().optional(),
      name: str().optional(),
      url: str().optional(),
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
const auditText = str().nullable().optional();
// Documented as a string; accept a number too.
const auditNumeric = z.union([z.string(), exactNum()]).nullable().optional();

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
  created_at: str().nullable().optional(),
  updated_at: str().nullable().optional(),
  fetch_time: str().nullable().optional(),
  final_url: str().nullable().optional(),
  performance_score: num().nullable().optional(),
  accessibility_score: num().nullable().optional(),
  best_practices_score: num().nullable().optional(),
  seo_score: num().nullable().optional(),
  audit_tool_version: str().nullable().optional(),
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
  .catchall(z.union([z.record(z.string(), z.record(z.string(), num().nullable())), exactNum()]));

export const MetricsResultSchema = z.object({
  id: int().optional(),
  name: str().optional(),
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
  title: str().nullable().optional(),
  description: str().nullable().optional(),
  severity: str().nullable(),
  fixed_in: str().nullable().optional(),
  reference_urls: z.array(z.string()).nullable().optional(),
});

export const SecurityAlertItemSchema = lenientObject({
  required: { name: str(1) },
  expected: { version: str().nullable() },
  optional: {
    id: z.union([exactInt(), z.string()]).optional(),
    site_id: int().optional(),
    status: str().nullable().optional(),
    active: flag().optional(),
    // The documentation leaves the type open: a boolean, or the plugin record's none/available wording.
    update_available: z.union([z.boolean(), z.string()]).nullable().optional(),
    update_version: str().nullable().optional(),
    security_risk: flag().optional(),
    security_alerts: z.array(SecurityAlertSchema).nullable().default([]),
  },
});
export type SecurityAlertItem = z.infer<typeof SecurityAlertItemSchema>;

// ---------------------------------------------------------------- domains

export const DomainSchema = lenientObject({
  required: { domainName: str(1) },
  expected: {
    primary: flag(),
    healthy: flag(),
    dnsConfirmed: flag(),
    provisioned: flag(),
  },
  optional: {
    id: z.union([exactInt(), z.string()]).optional(),
    name: str().nullable().optional(),
    type: str().optional(),
    displayType: str().optional(),
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

// ---------------------------------------------------------------- logs and activity log

export * from "./logSchemas.js";

// ---------------------------------------------------------------- on-demand backups and restores

/** Epoch seconds, as most on-demand backup times are; tolerated as ISO text too. */
const EpochOrText = z.union([exactNum(), z.string()]);

export const OndemandBackupSchema = lenientObject({
  required: { type: str(1) },
  expected: { status: str(1) },
  optional: {
    id: str().nullable().optional(),
    requestId: int().optional(),
    siteId: int().optional(),
    completed: EpochOrText.nullable().optional(),
    bytes: z.union([z.string(), exactNum()]).nullable().optional(),
    requested: EpochOrText.nullable().optional(),
    backupTimestamp: str().nullable().optional(),
    createdBy: str().nullable().optional(),
    removedIn: str().nullable().optional(),
    deleteAt: EpochOrText.nullable().optional(),
  },
});
export type OndemandBackup = z.infer<typeof OndemandBackupSchema>;

export const RestoreSchema = lenientObject({
  required: { status: str(1), created: EpochOrText },
  expected: {},
  optional: {
    id: z.union([exactInt(), z.string()]).optional(),
    logMessages: z.array(z.string()).nullable().optional(),
    filesystemId: z.union([z.string(), exactInt()]).nullable().optional(),
    databaseId: z.union([z.string(), exactInt()]).nullable().optional(),
    fromSiteId: int().nullable().optional(),
    error: str().nullable().optional(),
    updated: EpochOrText.nullable().optional(),
    completedAt: EpochOrText.nullable().optional(),
    failedAt: EpochOrText.nullable().optional(),
  },
});
export type Restore = z.infer<typeof RestoreSchema>;

// ---------------------------------------------------------------- git

export const GitDeploySchema = lenientObject({
  required: { created: EpochOrText, state: str(1) },
  expected: {},
  optional: {
    id: z.union([exactInt(), z.string()]).optional(),
    after: str().nullable().optional(),
    before: str().nullable().optional(),
    branch: str().nullable().optional(),
    email: str().nullable().optional(),
    message: str().nullable().optional(),
    name: str().nullable().optional(),
    repository: str().nullable().optional(),
  },
});
export type GitDeploy = z.infer<typeof GitDeploySchema>;

/** A site's git configuration: whether it is connected to its repository, with a token stored. */
export const GitConfigSchema = lenientObject({
  required: {},
  expected: { connected: flag(), hasToken: flag() },
  optional: {
    repository: str().nullable().optional(),
    branch: str().nullable().optional(),
    destinationPath: str().nullable().optional(),
    repositorySubdirectory: str().nullable().optional(),
  },
});
export type GitConfig = z.infer<typeof GitConfigSchema>;

/** A cms user of a site: login and roles (a comma-separated string). The e-mail is never published. */
export const CmsUserSchema = lenientObject({
  required: { user_login: str(1) },
  expected: { roles: str() },
  optional: {
    id: z.union([exactInt(), z.string()]).optional(),
    display_name: str().nullable().optional(),
    user_email: str().nullable().optional(),
  },
});
export type CmsUser = z.infer<typeof CmsUserSchema>;

/** One page of a site's cms users, with how many there are in all. */
export const CmsUserListingSchema = z.looseObject({
  users: z.array(CmsUserSchema),
  total_user_count: z.coerce.number().int().nonnegative().optional(),
});
export type CmsUserListing = z.infer<typeof CmsUserListingSchema>;

/** One PHP version the platform supports ("8.3"); a bare number is read as its text. */
export const PhpVersionSchema = z.union([z.string().min(1), z.number().transform(String)]);

// ---------------------------------------------------------------- DNS and certificates

export const ZoneSchema = lenientObject({
  required: { id: int(), name: str(1) },
  expected: {},
  optional: { created: str().nullable().optional() },
});
export type Zone = z.infer<typeof ZoneSchema>;

/** A zone with its records: the zone is checked whole, the records one by one. */
export const ZoneWithRecordsSchema = ZoneSchema.extend({
  updated: str().nullable().optional(),
  records: z.array(z.unknown()).nullable(),
});

/** A record; a missing or null `name` is the zone apex, like `@`. */
export const DnsRecordSchema = lenientObject({
  required: { id: int(), type: str(1) },
  expected: {},
  optional: {
    zoneId: int().optional(),
    primary: flag().optional(),
    name: z
      .string()
      .nullish()
      .transform((n) => n ?? ""),
    value: str().nullable().optional(),
    ttl: int().nullable().optional(),
    siteId: IdSchema.nullable().optional(),
    created: str().nullable().optional(),
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
  force_ssl: z.union([z.boolean(), exactNum()]).nullable().optional(),
  acme_certificate_id: z.union([exactInt(), z.string()]).nullable().optional(),
  validation_expiration: EpochOrText.nullable().optional(),
  authz_uri: str().nullable().optional(),
  options: z.array(z.string()).nullable().optional(),
  certificate_expiration_date: EpochOrText.nullable().optional(),
  broken_record: FlagSchema.nullable().optional(),
  broken_check: z.unknown().optional(),
});
export type SslDetails = z.infer<typeof SslDetailsSchema>;
