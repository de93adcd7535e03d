/**
 * Which buckets of `sitehost_site_http_request_duration_seconds` are published, and for which cache
 * states. The checkpoints count every request in its bucket of DURATION_BUCKETS (the fine buckets,
 * whatever is published, so a changed setting never changes what was counted); a published bucket
 * adds up the fine ones up to its bound. By default the origin's half (`cached="false"`) with the
 * bounds of `metrics.requestDurationBuckets` and every latency threshold an objective uses (its SLI
 * reads that bucket), plus +Inf.
 *
 * Exemplars follow the published buckets: a bucket's exemplar is the newest record counted in any of
 * its fine buckets, so its value always lies within the bucket.
 */
import type { Config } from "../config/schema.js";
import { DURATION_BUCKETS, thresholdsInUse } from "../config/slos.js";
import { counterKeyId } from "./counterKeys.js";

/** The fine buckets' `le`, as the checkpoints' keys (`d|<cached>|<le>`) write them. */
export const FINE_LE: readonly string[] = [...DURATION_BUCKETS.map(String), "+Inf"];
export const CACHE_STATES = ["false", "true"] as const;

/** The published bounds for a configuration: its buckets and its objectives' thresholds, ascending. */
export function publishedBounds(config: Pick<Config, "metrics" | "slos">): number[] {
  const thresholds = config.slos.enabled ? thresholdsInUse(config.slos).map(Number) : [];
  return DURATION_BUCKETS.filter(
    (b) => config.metrics.requestDurationBuckets.includes(b) || thresholds.includes(b),
  );
}

export class HistogramLayout {
  /** Published `le`, +Inf last. */
  readonly le: readonly string[];
  /** Per fine bucket: 1 when it ends a published bucket (+Inf always does). */
  readonly ends: Uint8Array;
  /** Per cache state and published bucket: its labels beside the site's. */
  readonly labels: ReadonlyArray<ReadonlyArray<Readonly<Record<string, string>>>>;
  /** Per cache state and published bucket: the counter key its exemplar is kept under. */
  readonly keys: ReadonlyArray<readonly string[]>;
  /** Exemplar slots: one per published bucket and cache state, then 5xx of each cache state. */
  readonly exemplarSlots: number;
  /** Exemplar slot by counter key id (a fine bucket's key: its published bucket's), -1 for none. */
  readonly slotByKeyId: Int16Array;
  private readonly slotByKey = new Map<string, number>();

  constructor(
    bounds: readonly number[],
    /** Whether the `cached="true"` half is published. */
    readonly cacheHits: boolean,
  ) {
    const published = new Set(bounds.map(String));
    this.ends = Uint8Array.from(FINE_LE, (le, i) => (published.has(le) || i === FINE_LE.length - 1 ? 1 : 0));
    this.le = FINE_LE.filter((_, i) => this.ends[i] === 1);
    this.labels = CACHE_STATES.map((cached) => this.le.map((le) => Object.freeze({ cached, le })));
    this.keys = CACHE_STATES.map((cached) => this.le.map((le) => `d|${cached}|${le}`));
    const fineKeys: Array<[string, number]> = [];
    CACHE_STATES.forEach((cached, c) => {
      let p = 0;
      FINE_LE.forEach((le, i) => {
        fineKeys.push([`d|${cached}|${le}`, c * this.le.length + p]);
        if (this.ends[i] === 1) p += 1;
      });
    });
    const buckets = CACHE_STATES.length * this.le.length;
    CACHE_STATES.forEach((cached, c) => fineKeys.push([`5xx|${cached}`, buckets + c]));
    this.exemplarSlots = buckets + CACHE_STATES.length;
    for (const [key, slot] of fineKeys) this.slotByKey.set(key, slot);
    const ids = fineKeys.map(([key]) => counterKeyId(key));
    this.slotByKeyId = new Int16Array(Math.max(...ids) + 1).fill(-1);
    fineKeys.forEach(([, slot], i) => (this.slotByKeyId[ids[i] as number] = slot));
  }

  /** The exemplar slot of a counter key, or -1 for a key without exemplars. */
  exemplarSlot(key: string): number {
    return this.slotByKey.get(key) ?? -1;
  }
}

/** Every fine bucket and both cache states: what a histogram published in full looks like. */
export const FULL_HISTOGRAM = new HistogramLayout(DURATION_BUCKETS, true);

export function histogramLayout(config: Pick<Config, "metrics" | "slos">): HistogramLayout {
  return new HistogramLayout(publishedBounds(config), config.metrics.requestDurationCacheHits);
}
