/**
 * The log-derived counters: cumulative counts kept in the checkpoints (so they stay monotonic across
 * restarts), published as site samples of collector "logs". One entry per site, fed by the site's
 * counted streams; a rename republishes it under the new name.
 */
import type { LogStream } from "../api/schemas.js";
import type { MetricStore } from "../metrics/store.js";
import type { Sample } from "../metrics/sample.js";
import type { SiteIdentity } from "./tailer.js";

export interface SiteCounts {
  site: SiteIdentity;
  /** Severity label → count. */
  php?: Readonly<Record<string, number>>;
  /** `status_class|cached` → count. */
  server?: Readonly<Record<string, number>>;
}

/** Replace the site's log-derived samples (collector "logs"). */
export function publishCounts(store: MetricStore, counts: SiteCounts): void {
  const labels = { site_id: String(counts.site.id), site: counts.site.name };
  const samples: Sample[] = [];
  for (const [key, value] of Object.entries(counts.server ?? {})) {
    const [status_class, cached] = key.split("|") as [string, string];
    samples.push({
      name: "sitehost_site_http_responses_total",
      labels: { ...labels, status_class, cached },
      value,
    });
  }
  for (const [severity, value] of Object.entries(counts.php ?? {})) {
    samples.push({ name: "sitehost_site_php_log_entries_total", labels: { ...labels, severity }, value });
  }
  store.replaceSite("logs", String(counts.site.id), samples);
}

/** Every site's log-derived counts, as the store shows them. */
export class LogCounts {
  private readonly sites = new Map<number, SiteCounts>();

  constructor(private readonly store: MetricStore | undefined) {}

  /** A counted stream's checkpoint moved: its counts as they now stand. */
  update(site: SiteIdentity, stream: LogStream, counts: Readonly<Record<string, number>>): void {
    if (!this.store || (stream !== "php" && stream !== "server")) return;
    let entry = this.sites.get(site.id);
    if (!entry) this.sites.set(site.id, (entry = { site }));
    entry[stream] = { ...counts };
    publishCounts(this.store, entry);
  }

  /** The site was renamed: its series carry the new name. */
  rename(site: SiteIdentity): void {
    const entry = this.sites.get(site.id);
    if (!entry || !this.store) return;
    entry.site = site;
    publishCounts(this.store, entry);
  }

  /** The site's streams are gone: so are its series. */
  remove(siteId: number): void {
    this.sites.delete(siteId);
    this.store?.replaceSite("logs", String(siteId), []);
  }
}
