/** The kinds of site the platform has (see discovery/kind.ts for how a site's kind is told). */
export const SITE_KINDS = ["live", "staging", "sandbox", "kit"] as const;
export type SiteKind = (typeof SITE_KINDS)[number];
