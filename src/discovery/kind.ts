import type { Site } from "../api/schemas.js";
import type { SiteKind } from "../config/schema.js";

/** A site's kind from its flags: kit wins over sandbox, sandbox over staging, else live. */
export function siteKind(site: Pick<Site, "staging" | "sandbox" | "kit">): SiteKind {
  if (site.kit) return "kit";
  if (site.sandbox) return "sandbox";
  if (site.staging) return "staging";
  return "live";
}
