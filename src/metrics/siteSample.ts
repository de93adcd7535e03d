/** Samples of per-site families: every one carries the site's id and name first. */
import type { MetricName } from "./families.js";
import type { Labels, Sample } from "./sample.js";

/** The two labels every per-site series carries. */
export interface SiteRef {
  id: number;
  name: string;
}

export function siteLabels(site: SiteRef): { site_id: string; site: string } {
  return { site_id: String(site.id), site: site.name };
}

/** A sample of a per-site family: the site's two labels, then `labels`. */
export function sampleFor(site: SiteRef, name: MetricName, labels: Labels, value: number): Sample {
  return { name, labels: { ...siteLabels(site), ...labels }, value };
}
