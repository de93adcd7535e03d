/** `sites` filters: include/exclude by id, name, tag or name pattern; kinds; shard. */
import type { Site } from "../api/schemas.js";
import type { Config, SiteMatch } from "../config/schema.js";
import { siteKind } from "./kind.js";
import { globToRegExp } from "../config/glob.js";

function matcher(match: SiteMatch): (site: Site) => boolean {
  const ids = new Set(match.ids);
  const names = new Set(match.names);
  const tags = new Set(match.tags);
  const patterns = match.namePatterns.map((p) => globToRegExp(p, "i"));
  return (site) =>
    ids.has(site.id) ||
    names.has(site.name) ||
    site.tags.some((t) => tags.has(t.name)) ||
    patterns.some((re) => re.test(site.name));
}

function isEmpty(match: SiteMatch): boolean {
  return match.ids.length + match.names.length + match.tags.length + match.namePatterns.length === 0;
}

/** Stable shard of a site id: FNV-1a of the decimal id, so consecutive or even ids still spread. */
export function shardOf(siteId: number, count: number): number {
  let h = 0x811c9dc5;
  for (const ch of String(siteId)) {
    h ^= ch.charCodeAt(0);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % count;
}

export function filterSites(sites: readonly Site[], filters: Config["sites"]): Site[] {
  const include = filters.include && !isEmpty(filters.include) ? matcher(filters.include) : undefined;
  const exclude = isEmpty(filters.exclude) ? undefined : matcher(filters.exclude);
  const kinds = new Set(filters.kinds);
  const { index, count } = filters.shard;
  return sites.filter(
    (site) =>
      (!include || include(site)) &&
      !(exclude && exclude(site)) &&
      kinds.has(siteKind(site)) &&
      (count <= 1 || shardOf(site.id, count) === index),
  );
}
