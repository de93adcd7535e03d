/** The log-derived counters: cumulative counts kept in the checkpoints, published as site samples. */
import type { MetricStore } from "../metrics/store.js";
import type { Sample } from "../metrics/sample.js";
import type { SiteIdentity } from "./tailer.js";

export interface SiteCounts {
  site: SiteIdentity;
  /** Severity label → count. */
  php: Record<string, number>;
  /** `status_class|cached` → count. */
  server: Record<string, number>;
}

/** Replace the site's log-derived samples (collector "logs"); counts resume from the checkpoints, so they stay monotonic. */
export function publishCounts(store: MetricStore, counts: SiteCounts): void {
  const labels = { site_id: String(counts.site.id), site: counts.site.name };
  const samples: Sample[] = [];
  for (const [key, value] of Object.entries(counts.server)) {
    const [status_class, cached] = key.split("|") as [string, string];
    samples.push({
      name: "sitehost_site_http_responses_total",
      labels: { ...labels, status_class, cached },
      value,
    });
  }
  for (const [severity, value] of Object.entries(counts.php)) {
    samples.push({ name: "sitehost_site_php_log_entries_total", labels: { ...labels, severity }, value });
  }
  store.replaceSite("logs", String(counts.site.id), samples);
}
