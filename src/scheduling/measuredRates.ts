/**
 * What each source of requests actually costs: the places it took in the request budget over its
 * window, per second and per site-hour, beside the plan. The window is the last half hour (long
 * enough to hold several runs of every frequent schedule and of the slow traffic polls), or one
 * period of a slower schedule (an hourly collector's run is in every hour-long window once, but in a
 * half hour only every other time), up to six hours. The counts are kept in one-minute buckets, six
 * hours of them a source.
 *
 * Published as `sitehost_exporter_api_requests_per_site_hour{source}`: until a source has been
 * measured over a whole window that began after the start-up work (every first run, every stream's
 * first read) was done, the measurement holds first runs (each reading every site at once) and would
 * extrapolate them, so the gauge holds the source's plan instead, and
 * `sitehost_exporter_api_requests_per_site_hour_measured{source}` is 0. The landing page and the
 * budget warning use the measurement too (perSecond, starting), so a user can tell how many more
 * sites fit in the budget.
 */
import type { Gauge, Registry } from "prom-client";
import type { BudgetSource } from "../api/budget.js";
import { gauge } from "../metrics/selfMetric.js";
import { CountBuckets } from "./countBuckets.js";

/** Rates are measured over this long at least. */
export const MEASURE_WINDOW_MS = 30 * 60_000;
/** The longest window: a source whose schedule runs less often is measured over six hours. */
export const MAX_MEASURE_WINDOW_MS = 6 * 3_600_000;
/** How often the counts are sampled, and how long each bucket of counts is. */
const SAMPLE_EVERY_MS = 60_000;

export interface MeasuredRatesInputs {
  /** Places granted since the start, by source (RequestBudget.grantedBySource). */
  granted(): ReadonlyMap<BudgetSource, number>;
  /** The selected sites now. */
  sites(): number;
  /** How long one period of the source's schedule is, ms (none: it has no schedule). */
  periodMs?(source: BudgetSource): number | undefined;
  /**
   * Planned requests per second by source (the request plan), published for a source until its
   * window has been measured; a source without a plan (auth) is published once it has been.
   */
  planned?(): ReadonlyMap<BudgetSource, number>;
  /**
   * When the start-up work (first runs, first reads) was done, undefined while it is not: a window is
   * whole only once it begins after that, so no measurement holds a first run.
   */
  startupDoneAt?(): number | undefined;
  now?: () => number;
}

export class MeasuredRates {
  private readonly counts = new CountBuckets<BudgetSource>(
    SAMPLE_EVERY_MS,
    Math.ceil(MAX_MEASURE_WINDOW_MS / SAMPLE_EVERY_MS),
  );
  /** The places granted by source at the last sample. */
  private last: Map<BudgetSource, number> | undefined;
  private startedAt = 0;
  private lastAt = 0;
  private readonly perSiteHour: Gauge<"source">;
  private readonly measured: Gauge<"source">;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    registry: Registry,
    private readonly inputs: MeasuredRatesInputs,
  ) {
    this.now = inputs.now ?? Date.now;
    this.perSiteHour = gauge(registry, {
      name: "sitehost_exporter_api_requests_per_site_hour",
      help: "API requests made per selected site and hour over the last 30 minutes (a collector that runs less often: over one period of its schedule, up to 6 hours), by source (a collector, logs, webhooks, auth), retries included: the measured cost beside sitehost_exporter_api_planned_requests_per_second. Until a source has been measured over a whole window begun after the start-up work (every first run and first log read) was done, this is its plan per site-hour instead (a source without a plan, auth, is left out until then): see sitehost_exporter_api_requests_per_site_hour_measured.",
      labelNames: ["source"],
    });
    this.measured = gauge(registry, {
      name: "sitehost_exporter_api_requests_per_site_hour_measured",
      help: "1 when sitehost_exporter_api_requests_per_site_hour{source} is measured over the source's whole window, 0 while it is the source's plan (the exporter has not run that long since its start-up work was done).",
      labelNames: ["source"],
    });
  }

  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), SAMPLE_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Take a sample now and publish the rates per site-hour (or the plan, for a source still starting). */
  sample(): void {
    const at = this.now();
    const granted = new Map(this.inputs.granted());
    if (this.last) {
      this.counts.advance(at);
      for (const [source, count] of granted) {
        const added = count - (this.last.get(source) ?? 0);
        if (added > 0) this.counts.add(source, at, added);
      }
    } else {
      this.startedAt = at;
      this.counts.advance(at);
    }
    this.last = granted;
    this.lastAt = at;
    this.publish();
  }

  /** Requests per second by source, each over its window as sampled so far (empty before two samples). */
  perSecond(): Map<BudgetSource, number> {
    const rates = new Map<BudgetSource, number>();
    const elapsed = this.lastAt - this.startedAt;
    if (!this.last || elapsed <= 0) return rates;
    for (const source of this.last.keys()) {
      const buckets = this.windowBuckets(source);
      const ms = Math.min(elapsed, buckets * SAMPLE_EVERY_MS);
      rates.set(source, this.counts.sum(source, buckets) / (ms / 1000));
    }
    return rates;
  }

  /**
   * The sources whose measurement does not span its whole window yet (half an hour, or one period of
   * a slower schedule): since the start it holds the first runs, each of every site, so it reads high
   * and is not comparable to the plan.
   */
  starting(): Set<BudgetSource> {
    return new Set([...(this.last?.keys() ?? [])].filter((s) => !this.complete(s)));
  }

  private publish(): void {
    const sites = Math.max(1, this.inputs.sites());
    const rates = this.perSecond();
    const planned = this.inputs.planned?.() ?? new Map<BudgetSource, number>();
    this.perSiteHour.reset();
    this.measured.reset();
    for (const source of new Set([...planned.keys(), ...rates.keys()])) {
      const complete = this.complete(source) && this.lastAt > this.startedAt;
      const perSecond = complete ? (rates.get(source) ?? 0) : planned.get(source);
      if (perSecond === undefined) continue;
      this.perSiteHour.set({ source }, Math.round(((perSecond * 3600) / sites) * 1000) / 1000);
      this.measured.set({ source }, complete ? 1 : 0);
    }
  }

  /** Measured over its whole window since the start-up work was done. */
  private complete(source: BudgetSource): boolean {
    const from = this.inputs.startupDoneAt ? this.inputs.startupDoneAt() : this.startedAt;
    if (from === undefined) return false;
    return this.lastAt - Math.max(this.startedAt, from) >= this.windowBuckets(source) * SAMPLE_EVERY_MS;
  }

  /** The source's window in buckets: 30 minutes, or one period of a slower schedule, up to 6 hours. */
  private windowBuckets(source: BudgetSource): number {
    const period = this.inputs.periodMs?.(source) ?? 0;
    const ms = Math.min(MAX_MEASURE_WINDOW_MS, Math.max(MEASURE_WINDOW_MS, period));
    return Math.ceil(ms / SAMPLE_EVERY_MS);
  }
}
