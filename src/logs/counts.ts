/**
 * The log-derived counters: cumulative counts kept in the checkpoints (so they stay monotonic across
 * restarts), published as site samples of collector "logs". One entry per site, fed by the site's
 * counted streams; a rename republishes it under the new name.
 */
import type { LogStream } from "../api/schemas.js";
import type { MetricStore } from "../metrics/store.js";
import type { LiveExemplars } from "../metrics/storeEntry.js";
import type { LiveMarks } from "../metrics/storedLines.js";
import type { ChunkWriter } from "../metrics/gzipMembers.js";
import type { Sample } from "../metrics/sample.js";
import { eachPhpSeries, eachServerSeries, type EmitSeries } from "./countSeries.js";
import type { PreparedPage } from "./prepared.js";
import { FULL_HISTOGRAM, type HistogramLayout } from "./histogramLayout.js";
import { RecentRecords } from "./requestCounts.js";
import type { SiteIdentity } from "./read/types.js";

export interface SiteCounts {
  site: SiteIdentity;
  /** Severity label → count. */
  php?: Readonly<Record<string, number>>;
  /** `status_class|cached` → count. */
  server?: Readonly<Record<string, number>>;
  /** Counter key → the newest shipped record it counted (duration buckets, 5xx), for exemplars. */
  recent?: RecentRecords;
  /** What the site's series were made of when last published in full (see `LogCounts`). */
  published?: SeriesShape;
  /** `recent.version` when the store was last told of the site's exemplars. */
  exemplarsAt?: number;
}

export interface CountOptions {
  /** The duration histogram's published buckets and cache states. */
  histogram: HistogramLayout;
  /** Whether duration buckets and 5xx counts carry an exemplar naming a recent record (OpenMetrics). */
  exemplars: boolean;
}

/**
 * A site's exemplars for one family's lines, written from its newest records when the family is
 * rendered in OpenMetrics (nothing is made at each scrape, or kept, for exemplars not asked for).
 */
class SiteMarks implements LiveMarks {
  constructor(
    private readonly counts: SiteCounts,
    /** The exemplar slot of each of the site's series, in publication order (-1: none). */
    private readonly slots: Int16Array,
    /** Where the family's series start among them. */
    private readonly from: number,
  ) {}

  write(out: ChunkWriter, line: number): void {
    this.counts.recent?.writeExemplar(out, this.slots[this.from + line] ?? -1, this.counts.site.id);
  }
}

/** Slot lists by content: sites with the same series share one (a few shapes among thousands of sites). */
const slotLists = new Map<string, Int16Array>();
const SLOT_LISTS_MAX = 256;

function sharedSlots(slots: readonly number[]): Int16Array {
  const key = slots.join(",");
  let list = slotLists.get(key);
  if (!list) {
    if (slotLists.size >= SLOT_LISTS_MAX) slotLists.clear();
    slotLists.set(key, (list = Int16Array.from(slots)));
  }
  return list;
}

/**
 * Every series of the site's counts, in one order: the full publication and the in-place update
 * (`updateSiteValues`, which takes values in the order of the last full one) both come from here.
 * Which series are published at 0 before their first count: countSeries.ts.
 */
function eachSeries(counts: SiteCounts, opts: CountOptions, emit: EmitSeries): void {
  if (counts.server) eachServerSeries(counts.server, opts.histogram, emit);
  if (counts.php) eachPhpSeries(counts.php, emit);
}

/** Replace the site's log-derived samples (collector "logs"); returns how many there were. */
export function publishCounts(store: MetricStore, counts: SiteCounts, opts: CountOptions): number {
  const site = { site_id: String(counts.site.id), site: counts.site.name };
  const samples: Sample[] = [];
  const slots: number[] = [];
  /** Where each family's series start among the site's, and how many there are. */
  const families = new Map<string, [from: number, count: number]>();
  eachSeries(counts, opts, (name, suffix, labels, value, exemplarKey) => {
    const sample: Sample = { name, labels: { ...site, ...labels }, value };
    if (suffix) sample.suffix = suffix;
    const range = families.get(name);
    if (range) range[1] += 1;
    else families.set(name, [samples.length, 1]);
    samples.push(sample);
    slots.push(exemplarKey === undefined ? -1 : opts.histogram.exemplarSlot(exemplarKey));
  });
  let live: LiveExemplars | undefined;
  if (opts.exemplars) {
    const shared = sharedSlots(slots);
    live = (family, _from, count) => {
      const range = families.get(family.name);
      if (!range || range[1] !== count) return undefined;
      const [from] = range;
      for (let i = from; i < from + count; i++)
        if ((shared[i] as number) >= 0) return new SiteMarks(counts, shared, from);
      return undefined;
    };
  }
  store.replaceSite("logs", String(counts.site.id), samples, live);
  counts.exemplarsAt = counts.recent?.version;
  return samples.length;
}

/**
 * The site's counts written into its samples in place (same series as published last: see
 * `LogCounts`); false when the store has no such entry (then publish in full).
 */
function updateCounts(store: MetricStore, counts: SiteCounts, opts: CountOptions): boolean {
  const values: number[] = [];
  eachSeries(counts, opts, (_name, _suffix, _labels, value) => void values.push(value));
  // Newer records taken since: the exemplars the store writes from them have moved.
  const version = counts.recent?.version;
  const done = store.updateSiteValues("logs", String(counts.site.id), values, version !== counts.exemplarsAt);
  if (done) counts.exemplarsAt = version;
  return done;
}

/**
 * What the site's series were last published in full from: its identity and each stream's counts
 * object (a new object is a new start). A checkpoint's counts only ever gain keys, and a key only ever
 * adds series (a first cache hit, a first 4xx), never removes one or moves the others: while the
 * objects are the same, the same number of series (which the store checks: `updateSiteValues`) is
 * the same series in the same order, even after new keys (a first entry in another duration bucket,
 * whose line was published from the histogram's start).
 */
export interface SeriesShape {
  /**
   * The store kept a value for every series published (none of their families is excluded by
   * `metrics.exclude`): only then can the values be written in place.
   */
  fits: boolean;
  site: SiteIdentity;
  php: object | undefined;
  server: object | undefined;
}

function shapeOf(counts: SiteCounts, fits: boolean): SeriesShape {
  return { fits, site: counts.site, php: counts.php, server: counts.server };
}

/** Whether the site's series may still be those of `shape` (the store then checks their number). */
function sameShape(shape: SeriesShape, counts: SiteCounts): boolean {
  return shape.site === counts.site && shape.php === counts.php && shape.server === counts.server;
}

/** Every site's log-derived counts, as the store shows them. */
export class LogCounts {
  private readonly sites = new Map<number, SiteCounts>();
  /**
   * Sites whose counts moved since the store last read them. A busy site's counts move with every
   * export, several times a second; its series are rendered once per read of the store instead.
   */
  private readonly unpublished = new Set<SiteCounts>();

  constructor(
    private readonly store: MetricStore | undefined,
    private readonly opts: CountOptions = { histogram: FULL_HISTOGRAM, exemplars: true },
  ) {
    store?.onRead(() => this.publishHeld());
  }

  private publishHeld(): void {
    if (this.unpublished.size === 0 || !this.store) return;
    // At every read of the store thousands of sites publish the same series with new values: those
    // are written in place (nothing rendered, no entry made anew); a changed set of series in full.
    for (const entry of this.unpublished) {
      const last = entry.published;
      if (last?.fits && sameShape(last, entry) && updateCounts(this.store, entry, this.opts)) continue;
      const published = publishCounts(this.store, entry, this.opts);
      const fits = this.store.storedValueCount("logs", String(entry.site.id)) === published;
      entry.published = shapeOf(entry, fits);
    }
    this.unpublished.clear();
  }

  /**
   * A counted stream's checkpoint moved: its counts as they now stand, and the pages just shipped
   * (the newest records of which the exemplars name).
   */
  update(
    site: SiteIdentity,
    stream: LogStream,
    counts: Readonly<Record<string, number>>,
    shipped?: readonly PreparedPage[],
  ): void {
    if (!this.store || (stream !== "php" && stream !== "server")) return;
    let entry = this.sites.get(site.id);
    // Every field in the literal: one shape whichever stream comes first, no property array later.
    if (!entry)
      this.sites.set(
        site.id,
        (entry = {
          site,
          php: undefined,
          server: undefined,
          recent: undefined,
          published: undefined,
          exemplarsAt: undefined,
        }),
      );
    // The checkpoint's own counts (not a copy: thousands of sites would each hold a second one); the
    // store reads them as they stand when it publishes.
    entry[stream] = counts;
    if (shipped && stream === "server" && this.opts.exemplars)
      (entry.recent ??= new RecentRecords(this.opts.histogram)).take(shipped);
    this.unpublished.add(entry);
  }

  /** The site was renamed: its series carry the new name. */
  rename(site: SiteIdentity): void {
    const entry = this.sites.get(site.id);
    if (!entry || !this.store) return;
    entry.site = site;
    this.unpublished.add(entry);
  }

  /** The site's streams are gone: so are its series. */
  remove(siteId: number): void {
    const entry = this.sites.get(siteId);
    if (entry) this.unpublished.delete(entry);
    this.sites.delete(siteId);
    this.store?.replaceSite("logs", String(siteId), []);
  }
}
