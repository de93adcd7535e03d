/**
 * The configuration contract: one zod schema that
 * validates the merged YAML + environment + flags. Unknown keys are errors.
 * Durations, cron expressions and URLs are checked here, at load time.
 */
import cron from "node-cron";
import { z } from "zod";
import { hostRootOf } from "./authUrl.js";
import { performanceOptions, statisticsOptions } from "./collectorOptions.js";
import { cronNeverFiresProblem, cronRangeProblem, NICKNAMES } from "./cron.js";
import { parseDuration } from "./duration.js";
import { parseListenAddress } from "./listenAddress.js";
import { ProbesSchema } from "./probes.js";
import { redactUrl } from "./redact.js";
import { parseByteSize } from "./size.js";
import { SITE_KINDS } from "./siteKinds.js";
import { DEFAULT_REQUEST_DURATION_BUCKETS, DURATION_BUCKETS, SlosSchema } from "./slos.js";

/**
 * Default port: above 9999 (the 9100-9999 range of the Prometheus default port
 * allocations is full) and not named there.
 */
export const DEFAULT_PORT = 10987;

export { SITE_KINDS, type SiteKind } from "./siteKinds.js";

/**
 * Every collector, one entry each: its name and default schedule, chosen from how often the platform's
 * data changes (README "Schedules"; seconds field first when six fields are given). This is all the
 * configuration (`collectors.<name>.enabled`, `.schedule`), the runner and the request plan need to
 * know of a collector; its module registers under the same name in `createCollectors`
 * (src/collectors/index.ts), whose type requires one for every entry here but `inventory` (discovery).
 */
export const DEFAULT_SCHEDULES = {
  inventory: "*/5 * * * *", // site list and storage: new sites show up within 5 minutes
  traffic: "30 */5 * * * *", // every period is counted from a later answer (an hour each); this sets freshness
  statistics: "17 */3 * * *", // page views are updated once a day; look a few times so a day's change shows early
  usage: "23 */6 * * *", // usage reports cover billing cycles: daily averages
  performance: "41 */6 * * *", // audits run rarely (on demand or daily)
  security: "*/30 * * * *", // plugin/theme vulnerabilities and updates
  domains: "*/10 * * * *", // domain health and DNS confirmation
  backups: "7 * * * *", // automatic backups are daily; an hour is ample to flag a stale one
  certificates: "13 * * * *", // certificates last months; an hour is ample to warn 14 and 3 days ahead
  git: "4,19,34,49 * * * *", // deploys happen during the day; a failed one shows within 15 minutes
  access: "9,39 * * * *", // a new administrator is the classic sign of a compromised site
} as const satisfies Record<string, string>;

export type CollectorName = keyof typeof DEFAULT_SCHEDULES;

/**
 * The collectors whose sites (certificates: A records) are asked less often while their answers stay
 * the same, and the longest wait by default (`collectors.<name>.maxInterval`): how late a change that
 * no webhook event announces may show, chosen from what the alerts on it need.
 */
export const DEFAULT_MAX_INTERVALS = {
  domains: "1h", // a domain's health and DNS rarely change once set up; site events wake the site
  security: "2h", // new vulnerabilities are published daily; plugin installs wake the site
  backups: "4h", // daily backups: the stale-backup alert allows a day and more
  git: "1h", // a failed deploy wakes every site (its event names none)
  certificates: "6h", // the expiry warnings look 14 and 3 days ahead
  access: "2h", // a new administrator shows within two hours, though no event announces it
} as const satisfies Partial<Record<CollectorName, string>>;
export type BackingOffCollector = keyof typeof DEFAULT_MAX_INTERVALS;
export const BACKING_OFF_COLLECTORS = Object.keys(DEFAULT_MAX_INTERVALS) as readonly BackingOffCollector[];
export const COLLECTOR_NAMES = Object.keys(DEFAULT_SCHEDULES) as readonly CollectorName[];

/** The longest delay a Node.js timer takes (about 24.8 days); a longer one would fire at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A duration string. `positive`: a timeout or interval, where zero would mean "no timeout" or a
 * busy loop. Durations used as timers are capped at what a timer can hold.
 */
const durationString = (opts: { positive: boolean }) =>
  z.string().superRefine((value, ctx) => {
    const ms = parseDuration(value);
    if (ms === undefined) {
      ctx.addIssue({
        code: "custom",
        message: `${JSON.stringify(value)} is not a duration such as 30s or 5m`,
      });
    } else if (opts.positive && ms <= 0) {
      ctx.addIssue({
        code: "custom",
        message: `${JSON.stringify(value)} must be longer than zero, such as 30s or 5m`,
      });
    } else if (ms > MAX_TIMER_MS) {
      ctx.addIssue({ code: "custom", message: `${JSON.stringify(value)} is longer than the maximum of 24d` });
    }
  });
const positiveDuration = durationString({ positive: true });
/** Zero allowed: a margin or window that may be empty. */
const duration = durationString({ positive: false });

const byteSizeValue = z.union([z.string(), z.number()]).superRefine((value, ctx) => {
  if (parseByteSize(value) === undefined) {
    ctx.addIssue({
      code: "custom",
      message: `${JSON.stringify(value)} is not a size such as 32MiB, 512KiB or a number of bytes`,
    });
  }
});

const cronString = z.string().superRefine((value, ctx) => {
  // The range and date checks first: they say what is wrong, where node-cron only says "invalid".
  const problem = cronRangeProblem(value) ?? cronNeverFiresProblem(value);
  if (problem) ctx.addIssue({ code: "custom", message: `${JSON.stringify(value)}: ${problem}` });
  else if (!cron.validate(value)) {
    ctx.addIssue({
      code: "custom",
      message: `${JSON.stringify(value)} is not a cron expression such as "*/5 * * * *" (five fields, an optional leading seconds field, or one of ${Object.keys(NICKNAMES).join(", ")})`,
    });
  }
});

const httpUrl = z.string().superRefine((value, ctx) => {
  let ok: boolean;
  try {
    const u = new URL(value);
    ok = u.protocol === "http:" || u.protocol === "https:";
  } catch {
    ok = false;
  }
  if (!ok)
    ctx.addIssue({ code: "custom", message: `${JSON.stringify(redactUrl(value))} is not an http(s) URL` });
});

/** `host:port`, read by the same parser as the HTTP server's. */
const listenAddress = z.string().superRefine((value, ctx) => {
  try {
    parseListenAddress(value);
  } catch (err) {
    ctx.addIssue({ code: "custom", message: (err as Error).message });
  }
});

/**
 * `now`, a negative duration such as `-15m`, or an ISO 8601 timestamp in the past: a start in the
 * future would ship nothing until then, and be written into every new checkpoint.
 */
const startFrom = z.string().superRefine((value, ctx) => {
  if (value === "now") return;
  if (value.startsWith("-") && parseDuration(value.slice(1)) !== undefined) return;
  if (/^\d{4}-\d{2}-\d{2}/.test(value) && !Number.isNaN(Date.parse(value))) {
    if (Date.parse(value) <= Date.now()) return;
    ctx.addIssue({
      code: "custom",
      message: `${JSON.stringify(value)} is in the future (it is ${new Date().toISOString()} now): nothing would be shipped until then; use "now", a negative duration such as -15m, or a past timestamp`,
    });
    return;
  }
  ctx.addIssue({
    code: "custom",
    message: `${JSON.stringify(value)} is not "now", a negative duration such as -15m, or a timestamp such as 2026-01-31T00:00:00Z`,
  });
});

const SiteMatchSchema = z.strictObject({
  ids: z.array(z.number().int().positive()).default([]),
  names: z.array(z.string().min(1)).default([]),
  tags: z.array(z.string().min(1)).default([]),
  /** Glob patterns on the site name (`*` and `?`). */
  namePatterns: z.array(z.string().min(1)).default([]),
});
export type SiteMatch = z.infer<typeof SiteMatchSchema>;

const CollectorSchema = (name: CollectorName) =>
  z.strictObject({
    enabled: z.boolean().default(true),
    schedule: cronString.default(DEFAULT_SCHEDULES[name]),
  });

/**
 * The longest `collectors.traffic.maxInterval`: one traffic answer covers an hour; a site must be asked
 * again while the periods since its last answer are still in it, with room for a settle delay and
 * runs that are skipped or slow.
 */
export const TRAFFIC_MAX_INTERVAL_LIMIT = "45m";

/** How long an idle, staging, sandbox or kit site may wait between traffic polls. */
const trafficInterval = positiveDuration.superRefine((value, ctx) => {
  const ms = parseDuration(value);
  if (ms !== undefined && ms > (parseDuration(TRAFFIC_MAX_INTERVAL_LIMIT) as number)) {
    ctx.addIssue({
      code: "custom",
      message: `${JSON.stringify(value)} is longer than ${TRAFFIC_MAX_INTERVAL_LIMIT}: one traffic answer covers an hour, and a site asked less often than that would lose periods`,
    });
  }
});

/** A collector that backs off: sites whose answers stay the same wait up to `maxInterval` (the schedule's interval or less: no waiting). */
const backingOffSchema = (name: BackingOffCollector) =>
  CollectorSchema(name).extend({ maxInterval: positiveDuration.default(DEFAULT_MAX_INTERVALS[name]) });

const collectorsShape = {
  ...(Object.fromEntries(COLLECTOR_NAMES.map((name) => [name, CollectorSchema(name).prefault({})])) as {
    [K in CollectorName]: z.ZodPrefault<ReturnType<typeof CollectorSchema>>;
  }),
  traffic: CollectorSchema("traffic")
    .extend({
      /** Adaptive polling's ceiling: idle sites (and staging, sandbox, kit) are asked at most this far apart. */
      maxInterval: trafficInterval.default("15m"),
    })
    .prefault({}),
  ...(Object.fromEntries(
    BACKING_OFF_COLLECTORS.map((name) => [name, backingOffSchema(name).prefault({})]),
  ) as {
    [K in BackingOffCollector]: z.ZodPrefault<ReturnType<typeof backingOffSchema>>;
  }),
  performance: CollectorSchema("performance").extend(performanceOptions).prefault({}),
  statistics: CollectorSchema("statistics").extend(statisticsOptions).prefault({}),
};

export const ConfigSchema = z.strictObject({
  api: z
    .strictObject({
      /** The `/v1` base. */
      url: httpUrl.default("https://api.sitehost.example/v1"),
      /** Host root of the token endpoints; not given: the scheme, host and port of `url` (src/config/authUrl.ts). */
      authUrl: httpUrl.optional(),
      clientId: z.string().min(1).optional(),
      clientSecret: z.string().min(1).optional(),
      clientSecretFile: z.string().min(1).optional(),
      timeout: positiveDuration.default("30s"),
      maxConcurrency: z.number().int().min(1).max(1000).default(8),
      maxRequestsPerSecond: z.number().positive().max(10_000).default(20),
      /** Retries of read requests on network errors and 5xx. */
      maxRetries: z.number().int().min(0).max(20).default(4),
      /** Refresh the token this long before it expires. */
      tokenRefreshMargin: duration.default("5m"),
      /** Largest response body read; a larger one fails the request (a log page is well under 1 MiB). */
      maxResponseSize: byteSizeValue.default("32MiB"),
      /** Longest Retry-After honoured; a longer one is cut to this. */
      maxRetryAfter: positiveDuration.default("5m"),
    })
    // Resolved here, once: everything after loading sees a string.
    .transform((api) => ({ ...api, authUrl: api.authUrl ?? hostRootOf(api.url) }))
    .prefault({}),
  sites: z
    .strictObject({
      include: SiteMatchSchema.optional(),
      exclude: SiteMatchSchema.prefault({}),
      kinds: z
        .array(z.enum(SITE_KINDS))
        .min(1)
        .default([...SITE_KINDS]),
      shard: z
        .strictObject({
          index: z.number().int().min(0),
          count: z.number().int().min(1),
        })
        .refine((s) => s.index < s.count, { message: "index must be less than count", path: ["index"] })
        .default({ index: 0, count: 1 }),
    })
    .prefault({}),
  metrics: z
    .strictObject({
      /** Metric-name patterns (`*` wildcards) neither published nor, when they cover a whole collector, fetched. */
      exclude: z.array(z.string().min(1)).default([]),
      /**
       * true: publish the duration histogram's cached="true" half too (hits served from the edge cache);
       * by default only what the origin served (cached="false").
       */
      requestDurationCacheHits: z.boolean().default(false),
      /**
       * Upper bounds (seconds) of the duration histogram's published buckets, besides +Inf and every
       * latency objective's threshold; each one of the bounds counted (DURATION_BUCKETS).
       */
      requestDurationBuckets: z
        .array(
          z.number().refine((b) => (DURATION_BUCKETS as readonly number[]).includes(b), {
            message: `must be one of ${DURATION_BUCKETS.join(", ")} (seconds)`,
          }),
        )
        .default([...DEFAULT_REQUEST_DURATION_BUCKETS]),
      /** false: no exemplars (a recent record's log.record.uid) on duration buckets and 5xx counts. */
      exemplars: z.boolean().default(true),
    })
    .prefault({}),
  collectors: z.strictObject(collectorsShape).prefault({}),
  logs: z
    .strictObject({
      enabled: z.boolean().default(true),
      /** false: read and count (log-derived metrics) without shipping over OTLP. */
      ship: z.boolean().default(true),
      streams: z
        .array(z.enum(["php", "server", "activity"]))
        .min(1)
        .default(["php", "server", "activity"]),
      pollInterval: positiveDuration.default("30s"),
      /** The freshness bound: a quiet or idle stream is read at least this often. */
      maxPollInterval: positiveDuration.default("5m"),
      /** With webhooks enabled, activity logs are read on events and at least this often. */
      activityPollInterval: positiveDuration.default("30m"),
      /** PHP error groups first seen within this long after a site is first watched are learnt, not new. */
      errorGroupsLearnFor: duration.default("1h"),
      startFrom: startFrom.default("now"),
      checkpointDir: z.string().min(1).default("./checkpoints"),
      /** Entries this close to the high-water mark are remembered by fingerprint. */
      overlap: duration.default("2m"),
      /** Global limit on tailers polling at once. */
      maxConcurrentTailers: z.number().int().min(1).max(1000).default(16),
      /** Deadline for the in-flight export at shutdown. */
      shutdownTimeout: positiveDuration.default("10s"),
      /** Each site's records under a resource of its own (service.name = the site); false: the exporter's. */
      resourcePerSite: z.boolean().default(true),
      /** service.namespace of the sites' resources. */
      serviceNamespace: z.string().min(1).default("sitehost"),
      /** Unit of the web-server log's request_time: auto tells seconds from milliseconds per stream. */
      requestTimeUnit: z.enum(["auto", "seconds", "milliseconds"]).default("auto"),
      /** Cap on the export retry backoff while the collector is down. */
      maxExportBackoff: positiveDuration.default("30s"),
      /** OTLP export failures lasting longer than this are warned about again every few minutes (and flagged on the status page). */
      exportFailureWarnAfter: positiveDuration.default("1m"),
      /** A checkpoint lock whose heartbeat has not changed for this long is taken over by a standby. */
      lockTimeout: positiveDuration.default("60s"),
    })
    .prefault({}),
  web: z
    .strictObject({
      listenAddress: listenAddress.default(`:${DEFAULT_PORT}`),
      telemetryPath: z.string().regex(/^\//, "must start with /").default("/metrics"),
      /** exporter-toolkit web config file (TLS, basic auth). */
      configFile: z.string().min(1).optional(),
      /** Longest /-/ready waits, after discovery, for the collectors' first runs; 0 waits for all. */
      readyTimeout: duration.default("90s"),
    })
    .prefault({}),
  slos: SlosSchema.prefault({}),
  probes: ProbesSchema.prefault({}),
  webhooks: z
    .strictObject({
      /** Receive the platform's webhook events on the exporter's own listener. */
      enabled: z.boolean().default(false),
      path: z
        .string()
        .regex(/^\/[^?#\s]*$/, "must start with / and hold no query, fragment or space")
        .default("/webhook"),
      /** Shared token the platform sends as ?token= (or Authorization: Bearer). */
      token: z.string().min(1).optional(),
      tokenFile: z.string().min(1).optional(),
    })
    .prefault({}),
});

export type Config = z.infer<typeof ConfigSchema>;
