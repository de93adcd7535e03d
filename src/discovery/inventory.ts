/** The inventory series discovery publishes: the account's capacity, each selected site's info, state, storage and edge cache. */
import type { Account, Site } from "../api/schemas.js";
import type { Sample } from "../metrics/sample.js";
import { siteKind } from "./kind.js";
import { sampleFor } from "../metrics/siteSample.js";

/** States the platform's documentation lists; any other value seen is kept as its own series. */
export const KNOWN_STATES = ["live", "deploying", "cloning", "disabled"] as const;

export function collectAccount(account: Account): Sample[] {
  const c = account.capacity?.sites;
  // Fields the platform did not send (counted as drift by the API client) publish no series.
  const max =
    account.maxSites === undefined
      ? []
      : [{ name: "sitehost_account_max_sites", labels: {}, value: account.maxSites } satisfies Sample];
  if (!c) return max;
  return [
    { name: "sitehost_account_sites", labels: { kind: "billable" }, value: c.billable },
    { name: "sitehost_account_sites", labels: { kind: "staging" }, value: c.staging },
    { name: "sitehost_account_sites", labels: { kind: "total" }, value: c.total },
    { name: "sitehost_account_site_capacity", labels: { kind: "billable" }, value: c.maxBillable },
    { name: "sitehost_account_site_capacity", labels: { kind: "staging" }, value: c.maxStaging },
    ...max,
  ];
}

/** A PHP version as major.minor ("8.3.12" and "8.3" are both "8.3"); another form as it is. */
export function phpMinor(version: string): string {
  const m = /^\s*(\d+)\.(\d+)/.exec(version);
  return m ? `${m[1]}.${m[2]}` : version.trim();
}

/**
 * A site's inventory series. `supportedPhp`: the platform's supported PHP versions as major.minor,
 * when known; a site with a PHP version then says whether it is among them.
 */
export function collectSite(site: Site, nowMs: number, supportedPhp?: ReadonlySet<string>): Sample[] {
  const out: Sample[] = [
    sampleFor(
      site,
      "sitehost_site_info",
      {
        // A field the platform stopped sending (counted as drift by the API client) is an empty label.
        display_name: site.displayName ?? "",
        url: site.url ?? "",
        datacenter: site.datacenterCode ?? "",
        php_version: site.phpVersion ?? "",
        environment: site.cmsEnvironmentType ?? "",
        kind: siteKind(site),
      },
      1,
    ),
  ];
  if (supportedPhp && site.phpVersion)
    out.push(
      sampleFor(
        site,
        "sitehost_site_php_version_supported",
        {},
        supportedPhp.has(phpMinor(site.phpVersion)) ? 1 : 0,
      ),
    );
  const states = new Set<string>(KNOWN_STATES);
  states.add(site.state);
  for (const state of states)
    out.push(sampleFor(site, "sitehost_site_state", { state }, state === site.state ? 1 : 0));

  const stores = [
    [
      "filesystem",
      site.fileSystemUsageBytes,
      site.maxFileSystemUsageBytes,
      site.warningHeadroomFileSystemUsageBytes,
    ],
    ["database", site.databaseUsageBytes, site.maxDatabaseUsageBytes, site.warningHeadroomDatabaseUsageBytes],
  ] as const;
  for (const [store, used, limit, headroom] of stores) {
    if (used !== undefined) out.push(sampleFor(site, "sitehost_site_storage_used_bytes", { store }, used));
    if (limit !== null && limit !== undefined)
      out.push(sampleFor(site, "sitehost_site_storage_limit_bytes", { store }, limit));
    if (headroom !== null && headroom !== undefined) {
      out.push(sampleFor(site, "sitehost_site_storage_warning_headroom_bytes", { store }, headroom));
    }
  }
  // Series of a field the platform did not send are left out rather than guessed.
  if (site.edgeCache !== undefined) {
    out.push(sampleFor(site, "sitehost_site_edge_cache_enabled", {}, site.edgeCache === "enabled" ? 1 : 0));
  }
  if (site.edgeCacheDefensiveMode !== undefined) {
    // Defensive mode with an end time in the past is over, whatever the flag still says.
    const until = site.edgeCacheDefensiveModeUntil;
    const defensive =
      site.edgeCacheDefensiveMode && (until === null || until === undefined || until * 1000 > nowMs);
    out.push(sampleFor(site, "sitehost_site_edge_cache_defensive_mode_enabled", {}, defensive ? 1 : 0));
  }
  return out;
}
