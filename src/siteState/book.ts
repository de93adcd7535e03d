/**
 * Each watched site's maintenance mode and hacked state, learnt from three sources that agree in the
 * end: webhook events (at once, when they arrive), the site's activity log (at its next read, so a
 * lost event is made good within one poll) and the site list (a hacked site listed enabled again was
 * marked safe). The newest word wins, by the time it took effect, so a late or repeated one never
 * turns a state back. With webhooks on, a state that only the activity log or the site list brought
 * is a delivery the platform did not make: counted in
 * `sitehost_exporter_site_state_corrections_total`.
 */
import type { Logger } from "pino";
import { DebouncedSave } from "../util/debouncedSave.js";
import type { Registry } from "prom-client";
import type { Site } from "../api/schemas.js";
import { counter } from "../metrics/selfMetric.js";
import { sampleFor } from "../metrics/siteSample.js";
import type { Sample } from "../metrics/sample.js";
import type { MetricStore } from "../metrics/store.js";
import { SITE_STATES, type FactReading, type SiteStateName } from "./facts.js";
import type { FactSource, KnownFact, SiteFacts, SiteStateStore } from "./file.js";

/** The store's collector name of these series. */
export const STATE_COLLECTOR = "state";

const FAMILY: Record<SiteStateName, "sitehost_site_maintenance_mode" | "sitehost_site_hacked"> = {
  maintenance: "sitehost_site_maintenance_mode",
  hacked: "sitehost_site_hacked",
};

/**
 * A hacked site listed as anything but disabled this long after it was marked is safe again; sooner,
 * the listing may have been read before support disabled it.
 */
export const LISTED_SAFE_AFTER_MS = 5 * 60_000;

/**
 * An event's time is when it arrived; an activity entry's is when the platform wrote it, on the
 * platform's clock, known here only as well as its Date headers say (to the second). A word polled
 * later must be this much newer than an event's to turn the state, so an entry of the toggle just
 * before a reported one, stamped a little late, does not undo it. An event after a polled word, and
 * words of one source, compare exactly.
 */
export const CROSS_SOURCE_MARGIN_MS = 30_000;

/** A save follows a change by this much, so a burst of changes is one write. */
const SAVE_DELAY_MS = 1000;

export interface SiteStateBookOptions {
  store: MetricStore;
  registry: Registry;
  file: SiteStateStore;
  logger: Logger;
  /** Whether the webhooks are on: only then is a state the events missed a correction. */
  webhooks: boolean;
}

export class SiteStateBook {
  private readonly facts = new Map<number, SiteFacts>();
  private readonly sites = new Map<number, Site>();
  private readonly corrections;
  private readonly unclear;
  private readonly saves: DebouncedSave<Map<number, SiteFacts>>;

  constructor(private readonly opts: SiteStateBookOptions) {
    this.saves = new DebouncedSave({
      delayMs: SAVE_DELAY_MS,
      snapshot: () => new Map(this.facts),
      write: (state) => this.opts.file.save(state),
      failed: (err) =>
        this.opts.logger.warn(
          { err, file: this.opts.file.location },
          "could not save the sites' maintenance and hacked states; they are written again at the next change",
        ),
    });
    this.corrections = counter(opts.registry, {
      name: "sitehost_exporter_site_state_corrections_total",
      help: "Site states (maintenance, hacked) that the activity log or the site list changed with webhooks on: each one an event the platform did not deliver (lost during a restart, standby, a full queue or an outage of the receiver), made good from polling.",
      labelNames: ["state", "source"],
    });
    this.unclear = counter(opts.registry, {
      name: "sitehost_exporter_site_state_unclear_total",
      help: "Activity log entries and webhook events about maintenance mode whose words did not say whether it was turned on or off: not applied.",
      labelNames: ["source"],
    });
    if (opts.webhooks) {
      for (const state of SITE_STATES)
        for (const source of ["activity", "sites"]) this.corrections.inc({ state, source }, 0);
    }
    for (const source of ["webhook", "activity"]) this.unclear.inc({ source }, 0);
  }

  /** What a saved file held, said once when it cannot be read (the states are then learnt again). */
  async load(): Promise<void> {
    try {
      const saved = await this.opts.file.load();
      for (const [id, facts] of saved ?? []) this.facts.set(id, facts);
    } catch (err) {
      this.opts.logger.error(
        { err, file: this.opts.file.location },
        "saved site states cannot be read: maintenance and hacked states are learnt again from events, activity logs and the site list, and the file is replaced at the next change",
      );
    }
    for (const id of this.sites.keys()) this.publish(id);
  }

  /**
   * What an event or activity entry said of site `siteId`, taking effect at `atMs`. A site not watched
   * (another shard's, or not listed yet: its activity log says it again) is left out.
   */
  observe(siteId: number, reading: FactReading, atMs: number, source: FactSource): void {
    if (!this.sites.has(siteId)) return;
    if (reading.unclear) this.unclear.inc({ source: source === "webhook" ? "webhook" : "activity" });
    let changed = false;
    for (const fact of reading.facts)
      changed = this.apply(siteId, fact.state, fact.on, atMs, source) || changed;
    if (changed) this.changed(siteId);
  }

  /** The sites watched now, as listed at `atMs`: names, and a hacked site listed as anything but disabled is safe again. */
  updateSites(sites: readonly Site[], atMs: number): void {
    const listed = new Set<number>();
    for (const site of sites) {
      listed.add(site.id);
      const before = this.sites.get(site.id);
      this.sites.set(site.id, site);
      const hacked = this.facts.get(site.id)?.hacked;
      const cleared =
        hacked?.on === true &&
        site.state !== "disabled" &&
        atMs - hacked.atMs >= LISTED_SAFE_AFTER_MS &&
        this.apply(site.id, "hacked", false, atMs, "sites");
      if (cleared) this.changed(site.id);
      else if (!before || before.name !== site.name) this.publish(site.id);
    }
    for (const id of [...this.sites.keys()]) {
      if (listed.has(id)) continue;
      this.sites.delete(id);
      this.opts.store.replaceSite(STATE_COLLECTOR, String(id), []);
    }
    // Saved states of sites no longer watched (deleted, filtered out, another shard's) are dropped.
    let forgot = false;
    for (const id of [...this.facts.keys()]) if (!listed.has(id)) forgot = this.facts.delete(id) || forgot;
    if (forgot) this.saves.schedule();
  }

  /** The state of a site now (false when nothing said otherwise). */
  isOn(siteId: number, state: SiteStateName): boolean {
    return this.facts.get(siteId)?.[state]?.on ?? false;
  }

  /** Write what is pending now (at stop). */
  async flush(): Promise<void> {
    await this.saves.flush();
  }

  private apply(
    siteId: number,
    state: SiteStateName,
    on: boolean,
    atMs: number,
    source: FactSource,
  ): boolean {
    let facts = this.facts.get(siteId);
    const known = facts?.[state];
    const margin = known?.source === "webhook" && source !== "webhook" ? CROSS_SOURCE_MARGIN_MS : 0;
    if (known && (margin === 0 ? atMs < known.atMs : atMs <= known.atMs + margin)) return false;
    const was = known?.on ?? false;
    if (known && known.on === on) {
      // The same word again: keep the first time it took effect and the source that said it first.
      return false;
    }
    if (!facts) this.facts.set(siteId, (facts = {}));
    const fact: KnownFact = { on, atMs, source };
    facts[state] = fact;
    if (this.opts.webhooks && source !== "webhook" && was !== on) this.corrections.inc({ state, source });
    return true;
  }

  private changed(siteId: number): void {
    this.publish(siteId);
    this.saves.schedule();
  }

  private publish(siteId: number): void {
    const site = this.sites.get(siteId);
    if (!site) return;
    const samples: Sample[] = SITE_STATES.map((state) =>
      sampleFor(site, FAMILY[state], {}, this.isOn(siteId, state) ? 1 : 0),
    );
    this.opts.store.replaceSite(STATE_COLLECTOR, String(siteId), samples);
  }
}
