import { AuditNames, type PerformanceReport, type StrategyReport } from "../api/schemas.js";
import { AUDIT_STRATEGIES, type AuditStrategy } from "../config/collectorOptions.js";
import type { Sample } from "../metrics/sample.js";
import { sampleFor, type SiteRef } from "../metrics/siteSample.js";
import { perSite } from "./perSite.js";

const CATEGORIES = ["performance", "accessibility", "best_practices", "seo"] as const;
/** Every audit but the unitless layout shift is a timing. */
const TIMINGS = AuditNames.filter((a) => a !== "cumulative_layout_shift");

/** Seconds per unit of `<audit>_numeric_unit`. */
const UNIT_SECONDS: Record<string, number> = {
  millisecond: 0.001,
  milliseconds: 0.001,
  ms: 0.001,
  second: 1,
  seconds: 1,
  s: 1,
  microsecond: 0.000001,
};

function finite(value: unknown): number | undefined {
  const n = typeof value === "string" ? Number(value.trim()) : typeof value === "number" ? value : NaN;
  return typeof value === "string" && value.trim() === "" ? undefined : Number.isFinite(n) ? n : undefined;
}

export function collectStrategy(site: SiteRef, strategy: AuditStrategy, r: StrategyReport): Sample[] {
  const out: Sample[] = [];
  const report = r as Record<string, unknown>;
  for (const category of CATEGORIES) {
    const score = finite(report[`${category}_score`]);
    if (score !== undefined)
      out.push(sampleFor(site, "sitehost_site_audit_score", { strategy, category }, score));
  }
  for (const audit of TIMINGS) {
    const value = finite(report[`${audit}_numeric_value`]);
    const unitName = String(report[`${audit}_numeric_unit`] ?? "millisecond").toLowerCase();
    // Unknown units are skipped rather than published wrong; lighthouse reports milliseconds.
    const factor = UNIT_SECONDS[unitName];
    if (value !== undefined && factor !== undefined) {
      out.push(sampleFor(site, "sitehost_site_audit_timing_seconds", { strategy, audit }, value * factor));
    }
  }
  const cls = finite(report.cumulative_layout_shift_numeric_value);
  if (cls !== undefined)
    out.push(sampleFor(site, "sitehost_site_audit_cumulative_layout_shift", { strategy }, cls));
  const at = [r.fetch_time, r.created_at, r.updated_at]
    .map((t) => (t ? Date.parse(t) : NaN))
    .find((t) => !Number.isNaN(t));
  if (at !== undefined)
    out.push(sampleFor(site, "sitehost_site_audit_timestamp_seconds", { strategy }, at / 1000));
  return out;
}

/** The reports of the `strategies` asked for, in the order of AUDIT_STRATEGIES (once each). */
export function collectPerformance(
  site: SiteRef,
  report: PerformanceReport,
  strategies: readonly AuditStrategy[],
): Sample[] {
  const out: Sample[] = [];
  for (const strategy of AUDIT_STRATEGIES) {
    const r = strategy === "mobile" ? report.mobile_report : report.desktop_report;
    if (r && strategies.includes(strategy)) out.push(...collectStrategy(site, strategy, r as StrategyReport));
  }
  return out;
}

/**
 * The `performance` collector: the latest audit report, one request per site, published for
 * `strategies` (`collectors.performance.strategies`; one answer holds every strategy's report).
 */
export function performanceCollector(strategies: readonly AuditStrategy[]) {
  return perSite<PerformanceReport, "performance">({
    name: "performance",
    requestsPerSite: 1,
    fetch: (api, site, signal) => api.performanceReport({ id: site.id }, { signal }),
    collect: (site, input) => collectPerformance(site, input, strategies),
  });
}
