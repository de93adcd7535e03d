/**
 * The `slos` section: objectives per site (availability: the share of requests that are not 5xx;
 * latency: the share served within a threshold), a default for every site with overrides by site name,
 * tag or kind, and the burn-rate alerts the rules are generated with.
 */
import { z } from "zod";
import { parseDuration } from "./duration.js";
import { SITE_KINDS } from "./siteKinds.js";

/**
 * Upper bounds of the latency histogram's buckets (sitehost_site_http_request_duration_seconds),
 * seconds: web pages, from a cached hit (5 ms) to a timeout (30 s). A latency objective's threshold
 * must be one of them, so it is counted exactly.
 */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;

/**
 * The bounds published by default (`metrics.requestDurationBuckets`), besides +Inf and the thresholds
 * in use: a page served by the origin takes from about 100 ms to seconds, and seven bounds keep the
 * percentiles within a bucket of the truth for an eighth of the series of all twelve in both cache
 * states.
 */
export const DEFAULT_REQUEST_DURATION_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/** One Prometheus duration of a single unit (`5m`, `1h`, `3d`): it names recording rules. */
const window = z.string().regex(/^[1-9]\d*[smhdw]$/, "must be a duration of one unit, such as 5m, 1h or 3d");

/** Percent, above 0 and below 100. */
const percent = z.number().gt(0).lt(100);

const threshold = z.string().superRefine((value, ctx) => {
  const ms = parseDuration(value);
  if (ms === undefined || !DURATION_BUCKETS.some((b) => Math.abs(b * 1000 - ms) < 1e-9)) {
    ctx.addIssue({
      code: "custom",
      message: `${JSON.stringify(value)} is not a bucket bound of sitehost_site_http_request_duration_seconds (one of ${DURATION_BUCKETS.map((b) => (b < 1 ? `${b * 1000}ms` : `${b}s`)).join(", ")})`,
    });
  }
});

export const AvailabilitySchema = z.strictObject({
  /** Percent of requests that must not be answered with a 5xx. */
  objective: percent,
});
export const LatencySchema = z.strictObject({
  /** Percent of requests that must be served within `threshold`. */
  objective: percent,
  threshold,
});

const OverrideSchema = z.strictObject({
  /** Sites this override applies to: any of the names, name patterns, tags or kinds. */
  match: z
    .strictObject({
      names: z.array(z.string().min(1)).default([]),
      namePatterns: z.array(z.string().min(1)).default([]),
      tags: z.array(z.string().min(1)).default([]),
      kinds: z.array(z.enum(SITE_KINDS)).default([]),
    })
    .refine((m) => m.names.length + m.namePatterns.length + m.tags.length + m.kinds.length > 0, {
      message: "an override needs at least one of names, namePatterns, tags or kinds",
    }),
  /** `false`: no availability objective for these sites. */
  availability: z.union([AvailabilitySchema, z.literal(false)]).optional(),
  latency: z.union([LatencySchema, z.literal(false)]).optional(),
});

const BurnWindowSchema = z.strictObject({
  /** How many times faster than the objective allows the budget is spent. */
  burnRate: z.number().positive(),
  /** Both windows must burn: the long one makes it significant, the short one makes it current. */
  long: window,
  short: window,
  /** How long the condition must hold before the alert fires. */
  for: window.optional(),
});

const AlertClassSchema = z.strictObject({
  severity: z.string().min(1),
  windows: z.array(BurnWindowSchema).min(1),
});

export const DEFAULT_ALERTS = {
  page: {
    severity: "critical",
    windows: [
      { burnRate: 14.4, long: "1h", short: "5m", for: "2m" },
      { burnRate: 6, long: "6h", short: "30m", for: "15m" },
    ],
  },
  ticket: { severity: "warning", windows: [{ burnRate: 1, long: "3d", short: "6h", for: "1h" }] },
};

/** The windows the SLIs are recorded over: those of the SRE workbook's multi-window alerts. */
export const DEFAULT_WINDOWS = ["5m", "30m", "1h", "2h", "6h", "1d", "3d"];

/**
 * Labels every generated and shipped rule keeps apart (besides a site's own): one Prometheus scraping
 * exporters of several clusters never adds one cluster's requests to another's. A label a series does
 * not have is empty, so a Prometheus without `cluster` needs no change.
 */
export const DEFAULT_GROUPING_LABELS = ["cluster", "job", "instance"];

const labelName = z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/, "must be a Prometheus label name");
const RESERVED_LABELS = ["site_id", "site", "slo", "le", "threshold_seconds"];

/**
 * The synthetic SLI: blackbox_exporter's `probe_success` for the targets `/sd/probes` lists (they carry
 * `site_id`), counted against the site's availability objective (docs/slo.md says how it combines with
 * the log-based one).
 */
const ProbeSliSchema = z.strictObject({
  enabled: z.boolean().default(true),
  /** A probe alert needs at least this many failed probes in its long window. */
  minFailedProbes: z.number().int().min(1).default(3),
  /** Severity of the probe alerts of a site whose logs count enough requests to alert on their own. */
  busySeverity: z.string().min(1).default("warning"),
  /**
   * The grouping labels the probe series share with the exporter's (not job and instance: the probes'
   * are blackbox_exporter's job and the probed URL). Default: slos.groupingLabels without those two.
   */
  groupingLabels: z.array(labelName).optional(),
});

export const SlosSchema = z
  .strictObject({
    enabled: z.boolean().default(true),
    availability: z.union([AvailabilitySchema, z.literal(false)]).default({ objective: 99.5 }),
    latency: z.union([LatencySchema, z.literal(false)]).default({ objective: 95, threshold: "1s" }),
    /** In order; where several match a site, the last one that sets an objective wins for it. */
    overrides: z.array(OverrideSchema).default([]),
    /** Burn-rate alerts by class (the class names the alert's `class` label): page and ticket by default. */
    alerts: z.record(z.string().regex(/^[a-z][a-z0-9_]*$/), AlertClassSchema).default(DEFAULT_ALERTS),
    /**
     * The low-traffic guard: an alert needs at least this many failed requests in its long window
     * (docs/slo.md explains the choice).
     */
    minFailedRequests: z.number().int().min(1).default(10),
    /** The error budget's period (the dashboards' "budget left"). */
    period: window.default("28d"),
    /** Windows the SLIs are recorded over; every alert window must be one of them. */
    windows: z.array(window).min(1).default(DEFAULT_WINDOWS),
    /** What the rules aggregate by besides the site: the labels that tell one exporter from another. */
    groupingLabels: z
      .array(
        labelName.refine((l) => !RESERVED_LABELS.includes(l), {
          message: `is one of the labels the rules add themselves (${RESERVED_LABELS.join(", ")})`,
        }),
      )
      .refine((l) => new Set(l).size === l.length, { message: "names a label twice" })
      .default(DEFAULT_GROUPING_LABELS),
    probes: ProbeSliSchema.prefault({}),
  })
  .superRefine((slos, ctx) => {
    (slos.probes.groupingLabels ?? []).forEach((label, i) => {
      if (!slos.groupingLabels.includes(label)) {
        ctx.addIssue({
          code: "custom",
          path: ["probes", "groupingLabels", i],
          message: `${label} is not one of slos.groupingLabels (${slos.groupingLabels.join(", ")}): the probe SLI is joined to the exporter's series on these`,
        });
      }
    });
    for (const [name, cls] of Object.entries(slos.alerts)) {
      cls.windows.forEach((w, i) => {
        for (const key of ["long", "short"] as const) {
          if (!slos.windows.includes(w[key])) {
            ctx.addIssue({
              code: "custom",
              path: ["alerts", name, "windows", i, key],
              message: `${w[key]} is not one of slos.windows (${slos.windows.join(", ")}): the SLIs are recorded over those`,
            });
          }
        }
      });
    }
  });

export type SlosConfig = z.infer<typeof SlosSchema>;

/** The labels the probe SLI is joined to the exporter's series on, besides site_id. */
export function probeGroupingLabels(slos: SlosConfig): string[] {
  return slos.probes.groupingLabels ?? slos.groupingLabels.filter((l) => l !== "job" && l !== "instance");
}
export type Availability = z.infer<typeof AvailabilitySchema>;
export type Latency = z.infer<typeof LatencySchema>;

/** A threshold in seconds, as the histogram's bucket label and `threshold_seconds` write it. */
export function thresholdSeconds(threshold: string): string {
  return String((parseDuration(threshold) as number) / 1000);
}

/** Every latency threshold some site may have (the default's and the overrides'), in seconds, ascending. */
export function thresholdsInUse(slos: SlosConfig): string[] {
  const all = [slos.latency, ...slos.overrides.map((o) => o.latency)].flatMap((l) =>
    l ? [thresholdSeconds(l.threshold)] : [],
  );
  return [...new Set(all)].sort((a, b) => Number(a) - Number(b));
}
