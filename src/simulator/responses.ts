/**
 * Response bodies of the read endpoints, computed from a site's data and the
 * clock. Field names and casing exactly as the platform's tables.
 */
import { GIB_BYTES, type PerfNumbers, type SimSiteData } from "./fleet.js";
import { unit } from "./random.js";

const DAY = 86_400_000;

/** Requests per second at time `ms`: a daily curve (quiet at 04:00 UTC) with per-minute noise. */
export function requestsPerSecond(data: SimSiteData, ms: number): number {
  const hour = (ms / 3_600_000) % 24;
  const curve = 0.2 + 0.8 * (0.5 - 0.5 * Math.cos((2 * Math.PI * (hour - 4)) / 24));
  const noise = 0.85 + 0.3 * unit(data.seed, Math.floor(ms / 60_000));
  if (data.site.state === "disabled") return 0;
  return Math.round(data.peakRps * curve * noise * 1000) / 1000;
}

function pageViewsBetween(data: SimSiteData, from: number, to: number): { views: number; people: number } {
  // Average of the curve is about 0.6 of the peak; a third of requests are page views.
  const seconds = Math.max(0, (to - from) / 1000);
  const views = Math.round(data.peakRps * 0.6 * seconds * 0.33);
  return { views, people: Math.round(views * 0.31) };
}

export function statistics(data: SimSiteData, now: number) {
  const today = Math.floor(now / DAY) * DAY;
  const d = new Date(now);
  const monthStart = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const lastMonthStart = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1);
  const twoMonthsAgoStart = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 2, 1);
  return {
    id: data.site.id,
    databaseUsageBytes: data.site.databaseUsageBytes,
    fileSystemUsageBytes: data.site.fileSystemUsageBytes,
    pageViews: {
      today: pageViewsBetween(data, today, now),
      yesterday: pageViewsBetween(data, today - DAY, today),
      currentMonth: pageViewsBetween(data, monthStart, now),
      lastMonth: pageViewsBetween(data, lastMonthStart, monthStart),
      twoMonthsAgo: pageViewsBetween(data, twoMonthsAgoStart, lastMonthStart),
      lastOneYear: pageViewsBetween(data, now - 365 * DAY, now),
      lastTwoYears: pageViewsBetween(data, now - 730 * DAY, now),
    },
  };
}

function ymd(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Three monthly billing cycles, deliberately not in chronological order. */
export function usageReport(data: SimSiteData, now: number) {
  const d = new Date(now);
  const cycles = [0, 1, 2].map((back) => {
    const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - back, 1);
    const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - back + 1, 0);
    const shrink = 1 - back * 0.04;
    const storageGib =
      Math.round(
        ((data.site.fileSystemUsageBytes + data.site.databaseUsageBytes) / GIB_BYTES) * shrink * 1000,
      ) / 1000;
    const visits = Math.round(data.peakRps * 0.6 * 86_400 * 0.33 * 0.31 * shrink);
    return {
      billing_cycle: {
        start_date: ymd(start),
        end_date: ymd(end),
        total_daily_average_storage_usage_in_gigabytes: storageGib,
        total_unique_visits: visits * 30,
        site: {
          id: data.site.id,
          name: data.site.name,
          url: data.site.url,
          daily_average_visits: visits,
          daily_average_storage_usage_in_gigabytes: storageGib,
        },
      },
    };
  });
  return [cycles[1], cycles[0], cycles[2]];
}

const AUDITS: Array<[string, keyof PerfNumbers, string]> = [
  ["first_contentful_paint", "fcpMs", "First Contentful Paint"],
  ["largest_contentful_paint", "lcpMs", "Largest Contentful Paint"],
  ["speed_index", "speedIndexMs", "Speed Index"],
  ["interactive", "interactiveMs", "Time to Interactive"],
  ["total_blocking_time", "tbtMs", "Total Blocking Time"],
  ["server_response_time", "serverResponseMs", "Initial server response time"],
];

function strategyReport(p: PerfNumbers, data: SimSiteData, fetchedAt: number) {
  const report: Record<string, unknown> = {
    created_at: new Date(fetchedAt).toISOString(),
    updated_at: new Date(fetchedAt).toISOString(),
    final_url: data.site.url + "/",
    thumbnail_location: `https://thumbnails.sites.example/${data.site.id}.jpg`,
    performance_score: p.performance,
    performance_title: "Performance",
    accessibility_score: p.accessibility,
    accessibility_title: "Accessibility",
    best_practices_score: p.bestPractices,
    best_practices_title: "Best Practices",
    seo_score: p.seo,
    seo_title: "SEO",
    audit_tool_version: "12.1.0",
    fetch_time: new Date(fetchedAt).toISOString(),
  };
  for (const [name, key, title] of AUDITS) {
    const ms = p[key];
    report[`${name}_title`] = title;
    report[`${name}_description`] = `${title} of the page.`;
    report[`${name}_score`] = Math.max(0, Math.min(1, Math.round((1 - ms / 8000) * 100) / 100));
    report[`${name}_display_value`] = ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
    report[`${name}_numeric_value`] = String(ms);
    report[`${name}_numeric_unit`] = "millisecond";
  }
  report.cumulative_layout_shift_title = "Cumulative Layout Shift";
  report.cumulative_layout_shift_description = "Movement of visible elements.";
  report.cumulative_layout_shift_score = p.cls < 0.1 ? 1 : 0.5;
  report.cumulative_layout_shift_display_value = p.cls.toFixed(3);
  report.cumulative_layout_shift_numeric_value = String(p.cls);
  report.cumulative_layout_shift_numeric_unit = "unitless";
  return report;
}

/** When the latest audit ran: a few hours to a day ago, stable per site. */
export function performanceFetchedAt(data: SimSiteData, now: number): number {
  const day = Math.floor(now / DAY) * DAY;
  return day - DAY + Math.floor(unit(data.seed, 17) * 20) * 3_600_000;
}

export function performanceReport(data: SimSiteData, now: number) {
  const at = performanceFetchedAt(data, now);
  return {
    desktop_report: strategyReport(data.performance.desktop, data, at),
    mobile_report: strategyReport(data.performance.mobile, data, at + 60_000),
  };
}

/** Window length of a start_at phrase: "3 hours ago", "last 2 hours", "30 minutes ago", "-1h"; default 1 hour. */
export function windowSeconds(startAt: unknown): number {
  const text = typeof startAt === "string" ? startAt.toLowerCase() : "";
  const m = /(\d+)\s*(minute|min|m|hour|h|day|d)/.exec(text);
  if (!m) return 3600;
  const n = Number(m[1]);
  const unitName = m[2] as string;
  const seconds = unitName.startsWith("m") ? n * 60 : unitName.startsWith("d") ? n * 86_400 : n * 3600;
  return Math.min(Math.max(seconds, 60), 7 * 86_400);
}

export const TRAFFIC_RESOLUTION = 60;

/** POST /sites/{id}/metrics: one period per minute; the newest is the current, still filling minute. */
export function trafficMetrics(
  data: SimSiteData,
  now: number,
  startAt: unknown,
  metrics: string[],
  dims: string[],
) {
  const window = windowSeconds(startAt);
  const endAt = Math.floor(now / 1000);
  const startAtSec = endAt - window;
  const first = Math.floor(startAtSec / TRAFFIC_RESOLUTION) * TRAFFIC_RESOLUTION;
  const periods: Array<Record<string, unknown>> = [];
  const wanted = metrics.length > 0 ? metrics : ["requests_persec", "response_bytes_persec"];
  for (let ts = first; ts <= endAt; ts += TRAFFIC_RESOLUTION) {
    const filling = ts + TRAFFIC_RESOLUTION > endAt;
    const rates = periodRates(data, ts, filling ? Math.max(0.05, (endAt - ts) / TRAFFIC_RESOLUTION) : 1);
    const values: Record<string, Record<string, number>> = {};
    for (const metric of wanted) {
      if (metric === "requests_persec") values[metric] = rates.requests;
      else if (metric === "response_bytes_persec") values[metric] = rates.bytes;
    }
    periods.push({ timestamp: ts, page_is_cached: values });
  }
  return {
    id: data.site.id,
    name: data.site.name,
    displayName: data.site.displayName,
    url: data.site.url,
    search: {
      startAt: startAtSec,
      endAt,
      resolution: TRAFFIC_RESOLUTION,
      metrics: wanted,
      dimensions: dims.length > 0 ? dims : ["page_is_cached"],
    },
    periods,
  };
}

/**
 * One period's rates as the answer gives them, by `page_is_cached`: requests and response bytes per
 * second (`fraction`: how much of a still-filling period has come in).
 */
function periodRates(data: SimSiteData, ts: number, fraction = 1) {
  const rps = requestsPerSecond(data, ts * 1000) * fraction;
  const cached = Math.round(rps * data.cacheHitRatio * 1000) / 1000;
  const uncached = Math.round((rps - cached) * 1000) / 1000;
  return {
    requests: { true: cached, false: uncached },
    bytes: {
      true: Math.round(cached * data.bytesPerRequest),
      false: Math.round(uncached * data.bytesPerRequest * 1.1),
    },
  };
}

/**
 * Ground truth for tests and benchmarks: the requests and response bytes of the periods that start in
 * [fromSec, toSec) once complete (rate × period length), by cache status.
 */
export function trafficTruth(data: SimSiteData, fromSec: number, toSec: number) {
  const truth = { requests: { true: 0, false: 0 }, bytes: { true: 0, false: 0 } };
  const first = Math.ceil(fromSec / TRAFFIC_RESOLUTION) * TRAFFIC_RESOLUTION;
  for (let ts = first; ts < toSec; ts += TRAFFIC_RESOLUTION) {
    const rates = periodRates(data, ts);
    for (const total of ["requests", "bytes"] as const) {
      truth[total].true += rates[total].true * TRAFFIC_RESOLUTION;
      truth[total].false += rates[total].false * TRAFFIC_RESOLUTION;
    }
  }
  return truth;
}

export function securityAlerts(data: SimSiteData, kind: "plugins" | "themes") {
  const groups: Record<string, unknown[]> =
    kind === "plugins"
      ? { active: [], "active-network": [], "drop-ins": [], inactive: [], "must-use": [] }
      : { active: [], inactive: [], parent: [] };
  const list = kind === "plugins" ? data.plugins : data.themes;
  list.forEach((ext, i) => {
    const group = groups[ext.group] ? ext.group : "inactive";
    (groups[group] as unknown[]).push({
      id: data.site.id * 100 + i,
      site_id: data.site.id,
      name: ext.name,
      version: ext.version,
      status: ext.status,
      active: ext.status === "active",
      update_available: ext.updateVersion !== null,
      update_version: ext.updateVersion,
      security_risk: ext.alerts.length > 0,
      security_alerts: ext.alerts.map((a) => ({
        ...a,
        reference_urls: [`https://advisories.example/${ext.name}`],
      })),
    });
  });
  return groups;
}

function backupStamp(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())}-${p(d.getUTCHours())}-${p(d.getUTCMinutes())}`;
}

/**
 * Newest backup time, minute precision (ground truth): `lastBackupAgeHours` old when the fleet was
 * built, then one a day at the same time of day, as the platform's daily backups; a site whose newest
 * was a day or more old then has stopped backing up.
 */
export function newestBackupAt(data: SimSiteData, now: number): number {
  const first = Math.floor((data.builtAt - data.lastBackupAgeHours * 3_600_000) / 60_000) * 60_000;
  if (data.lastBackupAgeHours >= 24 || now <= first) return first;
  return first + Math.floor((now - first) / DAY) * DAY;
}

/** Combined listing: 14 daily entries, newest first; every 5th site's newest one is database-only. */
export function backups(data: SimSiteData, now: number) {
  const newest = newestBackupAt(data, now);
  const index = data.site.id % 5;
  return Array.from({ length: 14 }, (_, k) => ({
    timestamp: backupStamp(newest - k * DAY),
    siteId: data.site.id,
    databaseBackupId: data.site.id * 1000 + 14 - k,
    filesystemBackupId: k === 0 && index === 4 ? null : data.site.id * 1000 + 500 + 14 - k,
  }));
}
