/**
 * Each site's objectives, published as series (`sitehost_site_slo_objective_ratio`): the generated
 * rules compare every site's error ratios with its own objective, so one set of rules serves any
 * number of sites and overrides, and an override by tag or kind needs nothing Prometheus cannot see.
 * The latency objective carries its threshold in seconds as `threshold_seconds`: the rules read the
 * histogram's bucket of that bound for the sites that have it.
 */
import type { Site } from "../api/schemas.js";
import { globToRegExp } from "../config/glob.js";
import { siteKind } from "../discovery/kind.js";
import type { MetricStore } from "../metrics/store.js";
import type { Sample } from "../metrics/sample.js";
import { thresholdSeconds, type Availability, type Latency, type SlosConfig } from "../config/slos.js";

export interface SiteObjectives {
  availability: Availability | false;
  latency: Latency | false;
}

type Override = SlosConfig["overrides"][number];

function matches(override: Override, site: Site): boolean {
  const m = override.match;
  return (
    m.names.includes(site.name) ||
    m.namePatterns.some((p) => globToRegExp(p, "i").test(site.name)) ||
    site.tags.some((t) => m.tags.includes(t.name)) ||
    (m.kinds as string[]).includes(siteKind(site))
  );
}

/** The default, then each matching override in order (the last one to set an objective wins). */
export function objectivesFor(site: Site, slos: SlosConfig): SiteObjectives {
  const out: SiteObjectives = { availability: slos.availability, latency: slos.latency };
  for (const override of slos.overrides) {
    if (!matches(override, site)) continue;
    if (override.availability !== undefined) out.availability = override.availability;
    if (override.latency !== undefined) out.latency = override.latency;
  }
  return out;
}

export function objectiveSamples(site: Site, objectives: SiteObjectives): Sample[] {
  const labels = { site_id: String(site.id), site: site.name };
  const name = "sitehost_site_slo_objective_ratio";
  const samples: Sample[] = [];
  const { availability, latency } = objectives;
  if (availability) {
    samples.push({ name, labels: { ...labels, slo: "availability" }, value: availability.objective / 100 });
  }
  if (latency) {
    samples.push({
      name,
      labels: { ...labels, slo: "latency", threshold_seconds: thresholdSeconds(latency.threshold) },
      value: latency.objective / 100,
    });
  }
  return samples;
}

/** Which objectives have an SLI to be compared with. */
export interface ObjectivesInUse {
  /** The web-server log is read (the log-based SLIs), or the probe SLI is on (availability only). */
  availability: boolean;
  latency: boolean;
}

/**
 * What the configuration measures: the web-server log's requests (both objectives, see logs/), and
 * blackbox_exporter's probes of the /sd/probes targets (availability).
 */
export function objectivesInUse(config: {
  logs: { enabled: boolean; streams: readonly string[] };
  probes: { enabled: boolean };
  slos: SlosConfig;
}): ObjectivesInUse {
  const serverLogs = config.logs.enabled && config.logs.streams.includes("server");
  const probes = config.probes.enabled && config.slos.probes.enabled;
  return { availability: serverLogs || probes, latency: serverLogs };
}

/** Keeps the store's objective series in step with the sites (collector "slo"). */
export class SloObjectives {
  private published = new Set<string>();

  constructor(
    private readonly store: MetricStore | undefined,
    private readonly slos: SlosConfig,
    private readonly inUse: ObjectivesInUse,
  ) {}

  update(sites: readonly Site[]): void {
    if (!this.store || !this.slos.enabled) return;
    const now = new Set<string>();
    for (const site of sites) {
      const id = String(site.id);
      now.add(id);
      const { availability, latency } = objectivesFor(site, this.slos);
      const objectives = {
        availability: this.inUse.availability && availability,
        latency: this.inUse.latency && latency,
      };
      this.store.replaceSite("slo", id, objectiveSamples(site, objectives));
    }
    for (const id of this.published) if (!now.has(id)) this.store.replaceSite("slo", id, []);
    this.published = now;
  }
}
