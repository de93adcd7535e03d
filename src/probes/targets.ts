/**
 * The targets /sd/probes lists, in Prometheus's HTTP service discovery format: one group per URL,
 * labelled like the exporter's per-site series (`site_id`, `site`) plus what a probe needs (`module`,
 * `expected_status`). Pure: sites, their domains and the `probes` settings in, groups out.
 */
import type { Site } from "../api/schemas.js";
import { globToRegExp } from "../config/glob.js";
import type { ProbeOverride, ProbesConfig } from "../config/probes.js";
import { siteKind } from "../discovery/kind.js";
import { siteLabels } from "../metrics/siteSample.js";
import type { ProbeDomain } from "./domainBook.js";

/** Where the daemon serves the target groups (Prometheus http_sd_configs). */
export const SD_PROBES_PATH = "/sd/probes";

/** A target group of Prometheus's HTTP SD: label values are strings. */
export interface TargetGroup {
  targets: string[];
  labels: Record<string, string>;
}

/** What a site is probed with, after the overrides. */
interface ProbeSettings {
  enabled: boolean;
  path: string;
  module: string;
  expectedStatus?: number;
}

/** The state the platform gives a site that serves nothing. */
const DISABLED_STATE = "disabled";

function matches(override: ProbeOverride, site: Site): boolean {
  const { name, tag, kind } = override.match;
  return (
    (name === undefined || globToRegExp(name, "i").test(site.name)) &&
    (tag === undefined || site.tags.some((t) => t.name === tag)) &&
    (kind === undefined || siteKind(site) === kind)
  );
}

/** The site's settings: the defaults, then every matching override in order. */
export function probeSettings(site: Site, config: ProbesConfig): ProbeSettings {
  const out: ProbeSettings = { enabled: true, path: config.path, module: config.module };
  for (const o of config.overrides) {
    if (!matches(o, site)) continue;
    if (o.enabled !== undefined) out.enabled = o.enabled;
    if (o.path !== undefined) out.path = o.path;
    if (o.module !== undefined) out.module = o.module;
    if (o.expectedStatus !== undefined) out.expectedStatus = o.expectedStatus;
  }
  return out;
}

/** A domain name as a URL host (IDNs in punycode, lower case), or undefined when it is not one. */
function hostOf(name: string): string | undefined {
  if (name.includes("*") || /[\s/?#@]/.test(name)) return undefined;
  try {
    const host = new URL(`https://${name}/`).hostname;
    return host === "" ? undefined : host;
  } catch {
    return undefined;
  }
}

/** The host of the site's `url` (its address on the platform), when it has a usable one. */
function urlHost(site: Site): string | undefined {
  if (!site.url) return undefined;
  try {
    return hostOf(
      new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(site.url) ? site.url : `https://${site.url}`).hostname,
    );
  } catch {
    return undefined;
  }
}

/**
 * The hosts to probe: the domains the platform has not said are unprovisioned (the primary one, or
 * all); for a site without domain records (none yet, or none at all), the host of the site's `url`.
 */
function hostsOf(
  site: Site,
  domains: readonly ProbeDomain[] | undefined,
  mode: ProbesConfig["domains"],
): Array<{ host: string; primary: boolean }> {
  if (domains === undefined || domains.length === 0) {
    const host = urlHost(site);
    return host ? [{ host, primary: true }] : [];
  }
  const seen = new Set<string>();
  const out: Array<{ host: string; primary: boolean }> = [];
  const ordered = [...domains].sort(
    (a, b) => Number(b.primary) - Number(a.primary) || a.name.localeCompare(b.name),
  );
  for (const d of ordered) {
    if (d.provisioned === false || (mode === "primary" && !d.primary)) continue;
    const host = hostOf(d.name);
    if (host === undefined || seen.has(host)) continue;
    seen.add(host);
    out.push({ host, primary: d.primary });
  }
  return out;
}

/** Every target group: selected sites that are not disabled, by site id, the primary domain first. */
export function probeTargetGroups(
  sites: readonly Site[],
  domainsOf: (siteId: number) => readonly ProbeDomain[] | undefined,
  config: ProbesConfig,
): TargetGroup[] {
  const groups: TargetGroup[] = [];
  for (const site of [...sites].sort((a, b) => a.id - b.id)) {
    if (site.state === DISABLED_STATE) continue;
    const settings = probeSettings(site, config);
    if (!settings.enabled) continue;
    const labels: Record<string, string> = {
      ...siteLabels(site),
      kind: siteKind(site),
      ...(site.datacenterCode ? { datacenter: site.datacenterCode } : {}),
      ...(site.accountId !== undefined ? { account_id: String(site.accountId) } : {}),
      module: settings.module,
      ...(settings.expectedStatus !== undefined ? { expected_status: String(settings.expectedStatus) } : {}),
    };
    for (const { host, primary } of hostsOf(site, domainsOf(site.id), config.domains)) {
      groups.push({
        targets: [`https://${host}${settings.path}`],
        labels: { ...labels, domain: host, primary: String(primary) },
      });
    }
  }
  return groups;
}
