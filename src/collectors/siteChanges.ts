/**
 * The site list as a hint: when a field of a site that a collector's answers follow changes between two
 * listings (a domain added, the site disabled, its CMS or PHP version updated), that collector asks
 * about the site at its next run, however long its answers had stayed the same. The listing is read
 * every few minutes anyway; this costs no request.
 */
import type { Site } from "../api/schemas.js";
import type { BackingOffCollector } from "../config/schema.js";
import { fnv1a32 } from "../discovery/shard.js";

/** The site fields each collector's answers follow. */
const FOLLOWS: ReadonlyArray<[readonly BackingOffCollector[], (site: Site) => unknown[]]> = [
  [["domains", "certificates"], (s) => [s.state, s.url, s.domainsCount, s.staging, s.sandbox, s.kit]],
  [["security"], (s) => [s.cmsVersion, s.phpVersion]],
  [["backups"], (s) => [s.state]],
];

export class SiteChanges {
  /** Site id → a hash of each group's fields at the last listing. */
  private readonly last = new Map<number, number[]>();

  /** After a listing: the collectors to wake for each site whose followed fields changed. */
  listed(sites: readonly Site[]): Array<[siteId: number, collectors: BackingOffCollector[]]> {
    const out: Array<[number, BackingOffCollector[]]> = [];
    const seen = new Set<number>();
    for (const site of sites) {
      seen.add(site.id);
      const hashes = FOLLOWS.map(([, fields]) => fnv1a32(JSON.stringify(fields(site))));
      const before = this.last.get(site.id);
      this.last.set(site.id, hashes);
      if (!before) continue; // a new site: every collector asks at its first run anyway
      const woken = FOLLOWS.flatMap(([names], i) => (before[i] === hashes[i] ? [] : names));
      if (woken.length > 0) out.push([site.id, [...new Set(woken)]]);
    }
    for (const id of this.last.keys()) if (!seen.has(id)) this.last.delete(id);
    return out;
  }
}
