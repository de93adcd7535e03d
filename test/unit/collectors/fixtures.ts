import type { Site } from "../../../src/api/schemas.js";
import type { Sample } from "../../../src/metrics/sample.js";

/** A site shaped like one record of GET /sites (the Site fields of docs/platform-api.md). */
export function makeSite(id: number, over: Partial<Site> = {}): Site {
  return {
    id,
    name: `site-${id}`,
    displayName: `Site ${id}`,
    url: `https://site-${id}.example`,
    state: "live",
    datacenterCode: "us-east",
    phpVersion: "8.2",
    cmsEnvironmentType: "production",
    staging: false,
    sandbox: false,
    kit: false,
    edgeCache: "enabled",
    edgeCacheDefensiveMode: false,
    edgeCacheDefensiveModeUntil: null,
    fileSystemUsageBytes: 1000,
    databaseUsageBytes: 2000,
    tags: [],
    ...over,
  };
}

/** Values of the samples named `name` whose labels include `labels`. */
export function values(
  samples: readonly Sample[],
  name: string,
  labels: Record<string, string> = {},
): number[] {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .map((s) => s.value);
}

/** The single value; fails loudly when there is not exactly one. */
export function one(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  const v = values(samples, name, labels);
  if (v.length !== 1) throw new Error(`${name} ${JSON.stringify(labels)}: ${v.length} samples`);
  return v[0] as number;
}
