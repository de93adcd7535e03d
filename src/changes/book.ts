/**
 * The changes of each watched site over the last 24 hours, each counted once however many sources
 * reported it: a report matches a change of the same site and kind that no report of its source has
 * matched yet and whose window overlaps its own (the nearest in time, when several do); otherwise it is
 * a new change. Reports of one source are never merged (two plugin updates a second apart are two
 * changes); a report seen again (its key) is ignored. The time shown is the most precise report's.
 *
 * Published: `sitehost_site_change_timestamp_seconds{kind}`, the latest change of each kind that a
 * site had in the last 24 hours (a series only while there is one), and `sitehost_changes_total{kind}`.
 */
import type { Logger } from "pino";
import { DebouncedSave } from "../util/debouncedSave.js";
import type { Registry } from "prom-client";
import type { Site } from "../api/schemas.js";
import { counter } from "../metrics/selfMetric.js";
import type { Sample } from "../metrics/sample.js";
import { sampleFor } from "../metrics/siteSample.js";
import type { MetricStore } from "../metrics/store.js";
import type { ChangeStore, KnownChange } from "./file.js";
import { CHANGE_KINDS, type ChangeKind } from "./kinds.js";
import { changesOfListing } from "./polled.js";
import { CHANGE_SOURCES, precisionOf, type ChangeReport } from "./report.js";

/** The store's collector name of these series. */
export const CHANGES_COLLECTOR = "changes";
/** A change is shown, and its reports remembered, this long after it took effect. */
export const CHANGE_RETENTION_MS = 24 * 3600_000;
/** A change keeps at most this many report keys (a change reported more often is still one). */
const MAX_KEYS = 50;
const SAVE_DELAY_MS = 1000;

const overlaps = (a: { fromMs: number; toMs: number }, b: { fromMs: number; toMs: number }) =>
  a.fromMs <= b.toMs && b.fromMs <= a.toMs;

export type ReportOutcome = "new" | "merged" | "repeat" | "old";

export interface ChangeBookOptions {
  store: MetricStore;
  registry: Registry;
  file: ChangeStore;
  logger: Logger;
  now?: () => number;
}

export class ChangeBook {
  private readonly changes = new Map<number, KnownChange[]>();
  private readonly sites = new Map<number, Site>();
  /** Changes counted by kind since the start (`sitehost_changes_total`). */
  private readonly counted = new Map<ChangeKind, number>(CHANGE_KINDS.map((k) => [k, 0]));
  private readonly reports;
  private readonly now: () => number;
  /** When the site list was last read. */
  private listedAtMs: number | undefined;
  private readonly saves: DebouncedSave<Map<number, KnownChange[]>>;

  constructor(private readonly opts: ChangeBookOptions) {
    this.saves = new DebouncedSave({
      delayMs: SAVE_DELAY_MS,
      snapshot: () => new Map([...this.changes].map(([id, list]) => [id, list.map((c) => ({ ...c }))])),
      write: (state) => this.opts.file.save(state),
      failed: (err) =>
        this.opts.logger.warn(
          { err, file: this.opts.file.location },
          "could not save the sites' recent changes; they are written again at the next change",
        ),
    });
    this.now = opts.now ?? Date.now;
    this.reports = counter(opts.registry, {
      name: "sitehost_exporter_change_reports_total",
      help: "Reports of site changes, by source and outcome: new (a change no other source had reported), merged (one another source had), repeat (this report seen before), old (older than 24 hours).",
      labelNames: ["source", "outcome"],
    });
    this.publishCounts();
    for (const source of CHANGE_SOURCES)
      for (const outcome of ["new", "merged", "repeat"]) this.reports.inc({ source, outcome }, 0);
  }

  /** What a saved file held, said once when it cannot be read (the changes are then learnt again). */
  async load(): Promise<void> {
    try {
      const saved = await this.opts.file.load();
      for (const [id, changes] of saved ?? []) this.changes.set(id, changes);
    } catch (err) {
      this.opts.logger.error(
        { err, file: this.opts.file.location },
        "saved site changes cannot be read: the change markers of the last 24 hours start empty, and the file is replaced at the next change",
      );
    }
    for (const id of this.sites.keys()) this.publish(id);
  }

  /** A source reports a change; a site not watched (another shard's, not listed yet) is left out. */
  report(r: ChangeReport): ReportOutcome | undefined {
    if (!this.sites.has(r.siteId)) return undefined;
    const outcome = this.apply(r);
    this.reports.inc({ source: r.source, outcome });
    if (outcome === "new" || outcome === "merged") {
      if (outcome === "new") {
        this.counted.set(r.kind, (this.counted.get(r.kind) ?? 0) + 1);
        this.publishCounts();
      }
      this.publish(r.siteId);
      this.saves.schedule();
    }
    return outcome;
  }

  /** The changes of a site now, oldest first (for tests and the status page). */
  changesOf(siteId: number): readonly KnownChange[] {
    return this.changes.get(siteId) ?? [];
  }

  /**
   * The sites watched now, as listed at `atMs`: their names, a PHP version or conversion since the
   * previous listing, and the changes of sites no longer watched, or past 24 hours, dropped.
   */
  updateSites(sites: readonly Site[], atMs = this.now()): void {
    const listed = new Set<number>();
    const previous = this.listedAtMs;
    this.listedAtMs = atMs;
    const horizon = this.now() - CHANGE_RETENTION_MS;
    let dropped = false;
    for (const site of sites) {
      listed.add(site.id);
      const before = this.sites.get(site.id);
      this.sites.set(site.id, site);
      if (before && previous !== undefined)
        for (const r of changesOfListing({ site: before, atMs: previous }, site, atMs)) this.report(r);
      const changes = this.changes.get(site.id);
      const kept = changes?.filter((c) => c.atMs >= horizon);
      if (changes && kept && kept.length < changes.length) {
        dropped = true;
        if (kept.length > 0) this.changes.set(site.id, kept);
        else this.changes.delete(site.id);
        this.publish(site.id);
      } else if (!before || before.name !== site.name) this.publish(site.id);
    }
    for (const id of [...this.sites.keys()]) {
      if (listed.has(id)) continue;
      this.sites.delete(id);
      this.opts.store.replaceSite(CHANGES_COLLECTOR, String(id), []);
    }
    for (const id of [...this.changes.keys()])
      if (!listed.has(id)) dropped = this.changes.delete(id) || dropped;
    if (dropped) this.saves.schedule();
  }

  /** Write what is pending now (at stop). */
  async flush(): Promise<void> {
    await this.saves.flush();
  }

  private apply(r: ChangeReport): ReportOutcome {
    if (r.toMs < this.now() - CHANGE_RETENTION_MS) return "old";
    const key = `${r.source}:${r.key}`;
    const changes = this.changes.get(r.siteId) ?? [];
    // The same report again (an entry read again, an event delivered again): same key, same time.
    if (changes.some((c) => c.keys.includes(key) && overlaps(c, r))) return "repeat";
    let match: KnownChange | undefined;
    for (const c of changes) {
      if (c.kind !== r.kind || c.sources.includes(r.source)) continue;
      if (!overlaps(c, r)) continue;
      if (!match || Math.abs(c.atMs - r.atMs) < Math.abs(match.atMs - r.atMs)) match = c;
    }
    if (!match) {
      changes.push({
        kind: r.kind,
        atMs: r.atMs,
        fromMs: r.fromMs,
        toMs: r.toMs,
        sources: [r.source],
        keys: [key],
      });
      changes.sort((a, b) => a.atMs - b.atMs);
      this.changes.set(r.siteId, changes);
      return "new";
    }
    match.fromMs = Math.max(match.fromMs, r.fromMs);
    match.toMs = Math.min(match.toMs, r.toMs);
    if (match.keys.length < MAX_KEYS) match.keys.push(key);
    const best = match.sources[0];
    if (best === undefined || precisionOf(r.source) < precisionOf(best)) {
      match.atMs = r.atMs;
      match.sources.unshift(r.source);
      changes.sort((a, b) => a.atMs - b.atMs);
    } else match.sources.push(r.source);
    return "merged";
  }

  private publish(siteId: number): void {
    const site = this.sites.get(siteId);
    if (!site) return;
    const latest = new Map<ChangeKind, number>();
    for (const c of this.changes.get(siteId) ?? [])
      latest.set(c.kind, Math.max(latest.get(c.kind) ?? 0, c.atMs));
    const samples: Sample[] = [...latest].map(([kind, atMs]) =>
      sampleFor(site, "sitehost_site_change_timestamp_seconds", { kind }, Math.round(atMs) / 1000),
    );
    this.opts.store.replaceSite(CHANGES_COLLECTOR, String(siteId), samples);
  }

  private publishCounts(): void {
    this.opts.store.replaceGlobal(
      CHANGES_COLLECTOR,
      [...this.counted].map(([kind, value]) => ({ name: "sitehost_changes_total", labels: { kind }, value })),
    );
  }
}
