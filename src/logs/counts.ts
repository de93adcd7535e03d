/**
 * The log-derived counters: cumulative counts kept in the checkpoints (so they stay monotonic across
 * restarts), published as site samples of collector "logs". One entry per site, fed by the site's
 * counted streams; a rename republishes it under the new name.
 */
import type { LogStream } from "../api/schemas.js";
import type { MetricStore } from "../metrics/store.js";
import type { Exemplar, Sample } from "../metrics/sample.js";
import type { PreparedPage } from "./prepared.js";
import { RecentRecords, serverSeries } from "./requestCounts.js";
import type { SiteIdentity } from "./read/types.js";
import { recordUid } from "./streams.js";

export interface SiteCounts {
  site: SiteIdentity;
  /** Severity label → count. */
  php?: Readonly<Record<string, number>>;
  /** `status_class|cached` → count. */
  server?: Readonly<Record<string, number>>;
  /** Counter key → the newest shipped record it counted (duration buckets, 5xx), for exemplars. */
  recent?: RecentRecords;
}

export interface CountOptions {
  /** Whether the duration histogram's cached="true" half is published. */
  cacheHits: boolean;
  /** Whether duration buckets and 5xx counts carry an exemplar naming a recent record (OpenMetrics). */
  exemplars: boolean;
}

/** The exemplar of the record behind a counter key, if one is known. */
function exemplarOf(counts: SiteCounts, key: string): { exemplar?: Exemplar } {
  const r = counts.recent?.get(key);
  if (!r) return {};
  const uid = recordUid(counts.site.id, "server", r.fingerprint, r.occurrence);
  return { exemplar: { labels: { log_record_uid: uid }, value: r.value, timestampMs: r.timeMs } };
}

/**
 * The series an alert or dashboard selects, at 0 from a stream's first read (a series that appears
 * with its first event hides that event from rate()): 5xx responses, untimed requests and response
 * bytes for the web server; fatal and parse errors for PHP. Not kept in checkpoints.
 */
const SERVER_ZERO: Readonly<Record<string, number>> = { "5xx|false": 0, "du|false": 0, "b|false": 0 };
const PHP_ZERO: Readonly<Record<string, number>> = { fatal: 0, parse: 0 };

/** Replace the site's log-derived samples (collector "logs"). */
export function publishCounts(store: MetricStore, counts: SiteCounts, opts: CountOptions): void {
  const labels = { site_id: String(counts.site.id), site: counts.site.name };
  const samples: Sample[] = [];
  const server = serverSeries(counts.server ? { ...SERVER_ZERO, ...counts.server } : {}, opts.cacheHits);
  for (const { statusClass: status_class, cached, value } of server.responses) {
    samples.push({
      name: "sitehost_site_http_responses_total",
      labels: { ...labels, status_class, cached },
      value,
      ...exemplarOf(counts, `${status_class}|${cached}`),
    });
  }
  const duration = "sitehost_site_http_request_duration_seconds";
  for (const { cached, buckets, sum, count } of server.durations) {
    const of = { ...labels, cached };
    for (const { le, value } of buckets) {
      samples.push({
        name: duration,
        suffix: "_bucket",
        labels: { ...of, le },
        value,
        ...exemplarOf(counts, `d|${cached}|${le}`),
      });
    }
    samples.push({ name: duration, suffix: "_sum", labels: of, value: sum });
    samples.push({ name: duration, suffix: "_count", labels: of, value: count });
  }
  for (const { cached, value } of server.untimed) {
    const name = "sitehost_site_http_requests_without_duration_total";
    samples.push({ name, labels: { ...labels, cached }, value });
  }
  for (const { cached, value } of server.bytes) {
    samples.push({
      name: "sitehost_site_http_response_size_bytes_total",
      labels: { ...labels, cached },
      value,
    });
  }
  for (const [severity, value] of Object.entries(counts.php ? { ...PHP_ZERO, ...counts.php } : {})) {
    samples.push({ name: "sitehost_site_php_log_entries_total", labels: { ...labels, severity }, value });
  }
  store.replaceSite("logs", String(counts.site.id), samples);
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
    private readonly opts: CountOptions = { cacheHits: true, exemplars: true },
  ) {
    store?.onRead(() => this.publishHeld());
  }

  private publishHeld(): void {
    if (this.unpublished.size === 0 || !this.store) return;
    for (const entry of this.unpublished) publishCounts(this.store, entry, this.opts);
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
      this.sites.set(site.id, (entry = { site, php: undefined, server: undefined, recent: undefined }));
    // The checkpoint's own counts (not a copy: thousands of sites would each hold a second one); the
    // store reads them as they stand when it publishes.
    entry[stream] = counts;
    if (shipped && stream === "server" && this.opts.exemplars)
      (entry.recent ??= new RecentRecords()).take(shipped);
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
