import type { Domain } from "../api/schemas.js";
import type { Sample } from "../metrics/sample.js";
import { sampleFor, type SiteRef } from "../metrics/siteSample.js";

export function collectDomains(site: SiteRef, domains: readonly Domain[]): Sample[] {
  // With one entry per IP record a domain can repeat: it is healthy only if every record is.
  const merged = new Map<
    string,
    { primary: boolean; healthy: boolean; dns: boolean; provisioned: boolean }
  >();
  for (const d of domains) {
    const prev = merged.get(d.domainName);
    merged.set(d.domainName, {
      primary: (prev?.primary ?? false) || d.primary,
      healthy: (prev?.healthy ?? true) && d.healthy,
      dns: (prev?.dns ?? true) && d.dnsConfirmed,
      provisioned: (prev?.provisioned ?? true) && d.provisioned,
    });
  }
  const out: Sample[] = [];
  for (const [domain, d] of merged) {
    const labels = { domain, primary: String(d.primary) };
    out.push(sampleFor(site, "sitehost_site_domain_healthy", labels, d.healthy ? 1 : 0));
    out.push(sampleFor(site, "sitehost_site_domain_dns_confirmed", labels, d.dns ? 1 : 0));
    out.push(sampleFor(site, "sitehost_site_domain_provisioned", labels, d.provisioned ? 1 : 0));
  }
  return out;
}
