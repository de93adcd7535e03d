/**
 * The `probes` section: which URLs /sd/probes lists for blackbox_exporter (Prometheus HTTP service
 * discovery). The endpoint only lists targets; nothing is probed by the exporter itself.
 */
import { z } from "zod";
import { SITE_KINDS } from "./siteKinds.js";

/** A probe path: starts with /, no fragment or space (a query is kept). */
const probePath = z.string().regex(/^\/[^#\s]*$/, "must start with / and hold no fragment or space");

/** Which sites an override applies to: every key given must match (none given: every site). */
const ProbeMatchSchema = z.strictObject({
  /** The site's name, exactly or as a glob (`*`, `?`), case-insensitive like sites.*.namePatterns. */
  name: z.string().min(1).optional(),
  /** A tag the site carries. */
  tag: z.string().min(1).optional(),
  kind: z.enum(SITE_KINDS).optional(),
});

export const ProbeOverrideSchema = z.strictObject({
  match: ProbeMatchSchema.prefault({}),
  path: probePath.optional(),
  /** The status the probe expects, as the `expected_status` label (100–599). */
  expectedStatus: z.number().int().min(100).max(599).optional(),
  /** blackbox_exporter module, as the `module` label. */
  module: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+$/, "must be a blackbox_exporter module name (letters, digits, _ . -)")
    .optional(),
  /** false: the matching sites are not listed. */
  enabled: z.boolean().optional(),
});
export type ProbeOverride = z.infer<typeof ProbeOverrideSchema>;

export const DEFAULT_PROBE_MODULE = "http_2xx";

export const ProbesSchema = z.strictObject({
  /** Serve GET /sd/probes. */
  enabled: z.boolean().default(true),
  /** `primary`: each site's primary domain; `all`: every domain of the site the platform provisioned. */
  domains: z.enum(["primary", "all"]).default("primary"),
  /** The path probed on every domain, unless an override says otherwise. */
  path: probePath.default("/"),
  /** blackbox_exporter module of every target, unless an override says otherwise. */
  module: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+$/, "must be a blackbox_exporter module name (letters, digits, _ . -)")
    .default(DEFAULT_PROBE_MODULE),
  /** Applied in order; a later match overrides what an earlier one set. */
  overrides: z.array(ProbeOverrideSchema).default([]),
});
export type ProbesConfig = z.infer<typeof ProbesSchema>;
