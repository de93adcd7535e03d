/**
 * Each site's PHP error groups (errorGroup.ts), so that a new error stands out among the old ones: a
 * group first seen after the site's groups began to be kept is new, counted in
 * `sitehost_php_error_groups_new_total{severity}` and shown for 24 hours in
 * `sitehost_site_php_error_group_new_timestamp_seconds{severity}` (the time its first entry was
 * written). A site's groups are kept from when it is first listed (kept across restarts): groups
 * first seen in what its first reads catch up on (entries older than that), or within
 * `logs.errorGroupsLearnFor` after it (an error the site logs only now and then), are learnt, not new,
 * so a first start does not make every old error new.
 *
 * At most MAX_GROUPS groups per site: when a new one comes, the newest NEWEST_KEPT are kept whatever
 * their count, and of the others the one seen least (the oldest last seen among equals) goes, counted
 * in `sitehost_exporter_php_error_groups_evicted_total`. The last EVICTED_REMEMBERED evicted groups
 * of a site are remembered: one of them met again is kept again, not new.
 */
import type { Logger } from "pino";
import { DebouncedSave } from "../util/debouncedSave.js";
import type { Registry } from "prom-client";
import { counter, gauge } from "../metrics/selfMetric.js";
import type { Sample } from "../metrics/sample.js";
import { sampleFor } from "../metrics/siteSample.js";
import type { MetricStore } from "../metrics/store.js";
import type { PhpSeverityLabel } from "./mapper.js";
import type { ErrorGroupStore, KeptGroup, KeptSite } from "./errorGroupsFile.js";

export const MAX_GROUPS = 20;
export const NEWEST_KEPT = 5;
/** Evicted groups remembered per site (32 bits each), so that one met again is not new. */
export const EVICTED_REMEMBERED = 64;
/** A new group is shown this long after its first entry. */
export const NEW_GROUP_SHOWN_MS = 24 * 3600_000;
/** The store's collector name of the per-site series. */
export const ERROR_GROUPS_COLLECTOR = "errorGroups";
const SAVE_DELAY_MS = 5000;
const SEVERITIES: readonly PhpSeverityLabel[] = ["fatal", "parse", "error"];

export interface SiteRefForGroups {
  id: number;
  name: string;
}

/** The first 32 bits of a group fingerprint, as remembered once it is evicted. */
const shortFp = (fp: string) => Number.parseInt(fp.slice(0, 8), 16);

function rememberEvicted(site: KeptSite, fp: string): void {
  const evicted = (site.evicted ??= []);
  evicted.push(shortFp(fp));
  if (evicted.length > EVICTED_REMEMBERED) evicted.shift();
}

/** True when `fp` was evicted lately (and is forgotten as evicted now that it is kept again). */
function forgetEvicted(site: KeptSite, fp: string): boolean {
  const at = site.evicted?.indexOf(shortFp(fp)) ?? -1;
  if (at < 0) return false;
  site.evicted?.splice(at, 1);
  return true;
}

export class ErrorGroupBook {
  private readonly sites = new Map<number, KeptSite>();
  private readonly named = new Map<number, SiteRefForGroups>();
  /** Sites publishing a series now (a new group within 24 hours). */
  private readonly shown = new Set<number>();
  private readonly newCounts = new Map<PhpSeverityLabel, number>(SEVERITIES.map((s) => [s, 0]));
  private readonly evicted;
  private readonly held;
  private total = 0;
  private readonly saves: DebouncedSave<Map<number, KeptSite>>;

  constructor(
    private readonly opts: {
      store: MetricStore;
      registry: Registry;
      file: ErrorGroupStore;
      logger: Logger;
      now: () => number;
      /** Groups first seen within this long after a site is first watched are learnt, not new. */
      learnForMs: number;
    },
  ) {
    this.saves = new DebouncedSave({
      delayMs: SAVE_DELAY_MS,
      snapshot: () =>
        new Map(
          [...this.sites].map(([id, s]) => [
            id,
            {
              sinceMs: s.sinceMs,
              groups: new Map([...s.groups].map(([fp, g]) => [fp, { ...g }])),
              ...(s.evicted ? { evicted: [...s.evicted] } : {}),
            },
          ]),
        ),
      write: (state) => this.opts.file.save(state),
      failed: (err) =>
        this.opts.logger.warn(
          { err, file: this.opts.file.location },
          "could not save the sites' PHP error groups; they are written again at the next new group",
        ),
    });
    this.evicted = counter(opts.registry, {
      name: "sitehost_exporter_php_error_groups_evicted_total",
      help: `PHP error groups dropped to keep at most ${MAX_GROUPS} per site (the newest ${NEWEST_KEPT} are kept, then the most seen); the last ${EVICTED_REMEMBERED} of a site are remembered, so one met again is not new.`,
    });
    this.held = gauge(opts.registry, {
      name: "sitehost_exporter_php_error_groups",
      help: `PHP error groups kept, over every site (at most ${MAX_GROUPS} a site).`,
    });
    this.held.set(0);
    this.publishCounts();
  }

  async load(): Promise<void> {
    try {
      const saved = await this.opts.file.load();
      for (const [id, site] of saved ?? []) this.sites.set(id, site);
      this.count();
    } catch (err) {
      this.opts.logger.error(
        { err, file: this.opts.file.location },
        "saved PHP error groups cannot be read: every site's groups are learnt again (errors already in its logs are not new), and the file is replaced",
      );
    }
    for (const id of this.named.keys()) this.publish(id);
  }

  /**
   * An entry of group `fp` of site `siteId`, written at `timeMs`, carried by the record whose entry
   * fingerprint and occurrence are `entryFp` and `occurrence`. True when that record is the group's
   * first (the same record encoded again is still the first).
   */
  observe(
    siteId: number,
    fp: string,
    severity: PhpSeverityLabel,
    timeMs: number,
    entryFp: string,
    occurrence: number,
  ): boolean {
    let site = this.sites.get(siteId);
    if (!site) {
      site = { sinceMs: this.opts.now(), groups: new Map() };
      this.sites.set(siteId, site);
    }
    const known = site.groups.get(fp);
    if (known) {
      known.count += 1;
      if (timeMs > known.lastMs) known.lastMs = timeMs;
      return known.firstFp === entryFp && known.firstOcc === occurrence;
    }
    if (site.groups.size >= MAX_GROUPS) this.evict(site);
    // A group evicted lately and met again is not new.
    const isNew = timeMs >= site.sinceMs + this.opts.learnForMs && !forgetEvicted(site, fp);
    const group: KeptGroup = {
      severity,
      count: 1,
      firstMs: timeMs,
      lastMs: timeMs,
      firstFp: entryFp,
      firstOcc: occurrence,
      isNew,
    };
    site.groups.set(fp, group);
    this.held.set(++this.total);
    if (isNew) {
      this.newCounts.set(severity, (this.newCounts.get(severity) ?? 0) + 1);
      this.publishCounts();
      this.publish(siteId);
    }
    this.saves.schedule();
    return true;
  }

  /** The site's groups now (tests, the status page). */
  groupsOf(siteId: number): ReadonlyMap<string, Readonly<KeptGroup>> {
    return this.sites.get(siteId)?.groups ?? new Map();
  }

  /** The sites watched now: names for the series, and the groups of sites no longer watched dropped. */
  updateSites(sites: readonly SiteRefForGroups[]): void {
    const listed = new Set<number>();
    let added = false;
    for (const site of sites) {
      listed.add(site.id);
      const before = this.named.get(site.id);
      this.named.set(site.id, site);
      // Its groups are kept from now: what its log already holds is learnt, what comes is new.
      if (!this.sites.has(site.id)) {
        this.sites.set(site.id, { sinceMs: this.opts.now(), groups: new Map() });
        added = true;
      }
      // A new or renamed site, or one whose series may have passed its 24 hours.
      if (!before || before.name !== site.name || this.shown.has(site.id)) this.publish(site.id);
    }
    if (added) this.saves.schedule();
    for (const id of [...this.named.keys()]) {
      if (listed.has(id)) continue;
      this.named.delete(id);
      this.shown.delete(id);
      this.opts.store.replaceSite(ERROR_GROUPS_COLLECTOR, String(id), []);
    }
    let dropped = false;
    for (const id of [...this.sites.keys()]) if (!listed.has(id)) dropped = this.sites.delete(id) || dropped;
    if (dropped) {
      this.count();
      this.saves.schedule();
    }
  }

  async flush(): Promise<void> {
    await this.saves.flush();
  }

  private count(): void {
    this.total = 0;
    for (const s of this.sites.values()) this.total += s.groups.size;
    this.held.set(this.total);
  }

  private evict(site: KeptSite): void {
    const byNewest = [...site.groups].sort((a, b) => b[1].firstMs - a[1].firstMs);
    let victim: [string, KeptGroup] | undefined;
    for (const entry of byNewest.slice(NEWEST_KEPT)) {
      const [, g] = entry;
      if (
        !victim ||
        g.count < victim[1].count ||
        (g.count === victim[1].count && g.lastMs < victim[1].lastMs)
      )
        victim = entry;
    }
    if (!victim) return;
    site.groups.delete(victim[0]);
    rememberEvicted(site, victim[0]);
    this.held.set(--this.total);
    this.evicted.inc();
  }

  /** The time of the site's latest new group of each severity within NEW_GROUP_SHOWN_MS. */
  private publish(siteId: number): void {
    const ref = this.named.get(siteId);
    if (!ref) return;
    const horizon = this.opts.now() - NEW_GROUP_SHOWN_MS;
    const latest = new Map<PhpSeverityLabel, number>();
    for (const g of this.sites.get(siteId)?.groups.values() ?? []) {
      if (!g.isNew || g.firstMs < horizon) continue;
      latest.set(g.severity, Math.max(latest.get(g.severity) ?? 0, g.firstMs));
    }
    const samples: Sample[] = [...latest].map(([severity, ms]) =>
      sampleFor(
        ref,
        "sitehost_site_php_error_group_new_timestamp_seconds",
        { severity },
        Math.round(ms) / 1000,
      ),
    );
    this.opts.store.replaceSite(ERROR_GROUPS_COLLECTOR, String(siteId), samples);
    if (samples.length > 0) this.shown.add(siteId);
    else this.shown.delete(siteId);
  }

  private publishCounts(): void {
    this.opts.store.replaceGlobal(
      ERROR_GROUPS_COLLECTOR,
      [...this.newCounts].map(([severity, value]) => ({
        name: "sitehost_php_error_groups_new_total",
        labels: { severity },
        value,
      })),
    );
  }
}
