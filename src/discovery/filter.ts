/** `sites` filters: include/exclude by id, name, tag or name pattern; kinds; shard. */
import type { Site } from "../api/schemas.js";
import type { Config, SiteMatch } from "../config/schema.js";
import { siteKind } from "./kind.js";
import { globToRegExp } from "../config/glob.js";
import { shardOf } from "./shard.js";

export { shardOf } from "./shard.js";

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
