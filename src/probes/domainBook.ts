/**
 * The domains of each selected site as the `domains` collector last read them, for /sd/probes: kept
 * from the samples it publishes (one per domain and flag, labels `domain` and `primary`), so the
 * targets follow the same records, merged the same way, as the sitehost_site_domain_* series.
 */
import type { Site } from "../api/schemas.js";
import type { Sample } from "../metrics/sample.js";

/** A domain of a site; a flag the platform did not send is undefined. */
export interface ProbeDomain {
  name: string;
  primary: boolean;
  provisioned?: boolean;
  healthy?: boolean;
}

const FLAGS: Readonly<Record<string, "provisioned" | "healthy">> = {
  sitehost_site_domain_provisioned: "provisioned",
  sitehost_site_domain_healthy: "healthy",
};

/** The site's domains from the domains collector's samples. */
export function domainsFromSamples(samples: readonly Sample[]): ProbeDomain[] {
  const byName = new Map<string, ProbeDomain>();
  for (const s of samples) {
    const name = s.labels.domain;
    if (name === undefined) continue;
    const d = byName.get(name) ?? { name, primary: s.labels.primary === "true" };
    const flag = FLAGS[s.name];
    if (flag) d[flag] = s.value === 1;
    byName.set(name, d);
  }
  return [...byName.values()];
}

export class DomainBook {
  private readonly bySite = new Map<number, ProbeDomain[]>();

  /** A SiteCollectedListener: keeps what the `domains` collector found for the site. */
  readonly record = (collector: string, site: Site, samples: readonly Sample[]): void => {
    if (collector === "domains") this.bySite.set(site.id, domainsFromSamples(samples));
  };

  /** The site's domains, or undefined while the domains collector has not read them. */
  domains(siteId: number): readonly ProbeDomain[] | undefined {
    return this.bySite.get(siteId);
  }

  /** Forget the sites no longer selected. */
  retain(sites: readonly Site[]): void {
    const keep = new Set(sites.map((s) => s.id));
    for (const id of this.bySite.keys()) if (!keep.has(id)) this.bySite.delete(id);
  }
}
