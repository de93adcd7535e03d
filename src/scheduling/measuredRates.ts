/**
 * What each source of requests actually costs: the places it took in the request budget over the last
 * half hour (long enough to hold several runs of every frequent schedule and of the slow traffic
 * polls), or over one period of a slower schedule (an hourly collector's run is in every hour-long
 * window once, but in a half hour only every other time), up to six hours; per second and per
 * site-hour, beside the plan. Published as
 * `sitehost_exporter_api_requests_per_site_hour{source}`; the landing page and the budget warning use
 * it too, so a user can tell how many more sites fit in the budget.
 */
import type { Gauge, Registry } from "prom-client";
import type { BudgetSource } from "../api/budget.js";
import { gauge } from "../metrics/selfMetric.js";

/** Rates are measured over this long at least (or since the start, when shorter). */
export const MEASURE_WINDOW_MS = 30 * 60_000;
/** The longest window: a source whose schedule runs less often is measured over six hours. */
export const MAX_MEASURE_WINDOW_MS = 6 * 3_600_000;
/** How often the counts are sampled. */
const SAMPLE_EVERY_MS = 60_000;

interface Snapshot {
  at: number;
  granted: ReadonlyMap<BudgetSource, number>;
}

export interface MeasuredRatesInputs {
  /** Places granted since the start, by source (RequestBudget.grantedBySource). */
  granted(): ReadonlyMap<BudgetSource, number>;
  /** The selected sites now. */
  sites(): number;
  /** How long one period of the source's schedule is, ms (none: it has no schedule). */
  periodMs?(source: BudgetSource): number | undefined;
  now?: () => number;
}

export class MeasuredRates {
  private readonly snapshots: Snapshot[] = [];
  private readonly perSiteHour: Gauge<"source">;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    registry: Registry,
    private readonly inputs: MeasuredRatesInputs,
  ) {
    this.now = inputs.now ?? Date.now;
    this.perSiteHour = gauge(registry, {
      name: "sitehost_exporter_api_requests_per_site_hour",
      help: "API requests made per selected site and hour over the last 30 minutes (a collector that runs less often: over one period of its schedule, up to 6 hours), by source (a collector, logs, webhooks, auth), retries included: the measured cost beside sitehost_exporter_api_planned_requests_per_second.",
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

  /** Take a sample now and publish the rates per site-hour. */
  sample(): void {
    const at = this.now();
    this.snapshots.push({ at, granted: new Map(this.inputs.granted()) });
    const longest = Math.max(
      MEASURE_WINDOW_MS,
      ...[...this.inputs.granted().keys()].map((s) => this.windowMs(s)),
    );
    while (this.snapshots.length > 2 && at - (this.snapshots[1] as Snapshot).at >= longest) {
      this.snapshots.shift();
    }
    const sites = Math.max(1, this.inputs.sites());
    this.perSiteHour.reset();
    for (const [source, perSecond] of this.perSecond()) {
      this.perSiteHour.set({ source }, Math.round(((perSecond * 3600) / sites) * 1000) / 1000);
    }
  }

  /** Requests per second by source, each over its window as sampled so far (empty before two samples). */
  perSecond(): Map<BudgetSource, number> {
    const rates = new Map<BudgetSource, number>();
    const last = this.snapshots[this.snapshots.length - 1];
    if (!last) return rates;
    for (const [source, count] of last.granted) {
      const first = this.windowStart(last.at - this.windowMs(source));
      if (!first || last.at <= first.at) continue;
      rates.set(source, (count - (first.granted.get(source) ?? 0)) / ((last.at - first.at) / 1000));
    }
    return rates;
  }

  /**
   * The sources whose measurement does not span its whole window yet (half an hour, or one period of
   * a slower schedule): since the start it holds the first runs, each of every site, so it reads high
   * and is not comparable to the plan.
   */
  starting(): Set<BudgetSource> {
    const out = new Set<BudgetSource>();
    const last = this.snapshots[this.snapshots.length - 1];
    if (!last) return out;
    for (const source of last.granted.keys()) {
      const window = this.windowMs(source);
      const first = this.windowStart(last.at - window);
      if (!first || last.at - first.at < window) out.add(source);
    }
    return out;
  }

  private windowMs(source: BudgetSource): number {
    const period = this.inputs.periodMs?.(source) ?? 0;
    return Math.min(MAX_MEASURE_WINDOW_MS, Math.max(MEASURE_WINDOW_MS, period));
  }

  /** The newest snapshot taken by `from`, or the oldest one kept when none was. */
  private windowStart(from: number): Snapshot | undefined {
    let start = this.snapshots[0];
    for (const s of this.snapshots) {
      if (s.at > from) break;
      start = s;
    }
    return start;
  }
}
