import type { Labels, Sample } from "../metrics/sample.js";

/** The two labels every per-site series carries. */
export interface SiteRef {
  id: number;
  name: string;
}

export function siteLabels(site: SiteRef): { site_id: string; site: string } {
  return { site_id: String(site.id), site: site.name };
}

export function sampleFor(site: SiteRef, name: string, labels: Labels, value: number): Sample {
  return { name, labels: { ...siteLabels(site), ...labels }, value };
}

export const GIB = 1024 ** 3;
