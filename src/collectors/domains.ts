import type { Domain } from "../api/schemas.js";
import type { Sample } from "../metrics/sample.js";
import { sampleFor, type SiteRef } from "../metrics/siteSample.js";
import { perSite } from "./perSite.js";

type Flags = { primary: boolean; healthy?: boolean; dns?: boolean; provisioned?: boolean };

/** Every known value true; undefined when none is known (the platform did not send the field). */
function all(prev: boolean | undefined, value: boolean | undefined): boolean | undefined {
  if (value === undefined) return prev;
  return (prev ?? true) && value;
}

export function collectDomains(site: SiteRef, domains: readonly Domain[]): Sample[] {
  // With one entry per IP record a domain can repeat: it is healthy only if every record is.
  const merged = new Map<string, Flags>();
  for (const d of domains) {
    const prev = merged.get(d.domainName);
    merged.set(d.domainName, {
      primary: (prev?.primary ?? false) || d.primary === true,
      healthy: all(prev?.healthy, d.healthy),
      dns: all(prev?.dns, d.dnsConfirmed),
      provisioned: all(prev?.provisioned, d.provisioned),
    });
  }
  const out: Sample[] = [];
  for (const [domain, d] of merged) {
    const labels = { domain, primary: String(d.primary) };
    // A flag the platform did not send (counted as drift by the API client) publishes no series.
    if (d.healthy !== undefined)
      out.push(sampleFor(site, "sitehost_site_domain_healthy", labels, d.healthy ? 1 : 0));
    if (d.dns !== undefined)
      out.push(sampleFor(site, "sitehost_site_domain_dns_confirmed", labels, d.dns ? 1 : 0));
    if (d.provisioned !== undefined)
      out.push(sampleFor(site, "sitehost_site_domain_provisioned", labels, d.provisioned ? 1 : 0));
  }
  return out;
}

/** The `domains` collector: the site's domains, one request per site. */
export const domainsCollector = perSite<Domain[], "domains">({
  name: "domains",
  requestsPerSite: 1,
  fetch: async (api, site, signal) => (await api.domains({ id: site.id }, { signal })).items,
  collect: (site, input) => collectDomains(site, input),
});
