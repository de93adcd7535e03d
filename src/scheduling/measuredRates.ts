/**
 * What each source of requests actually costs: the places it took in the request budget over the last
 * half hour (long enough to hold several runs of every frequent schedule and of the slow traffic
 * polls), per second and per site-hour, beside the plan. Published as
 * `sitehost_exporter_api_requests_per_site_hour{source}`; the landing page and the budget warning use
 * it too, so a user can tell how many more sites fit in the budget.
 */
import type { Gauge, Registry } from "prom-client";
import type { BudgetSource } from "../api/budget.js";
import { gauge } from "../metrics/selfMetric.js";

/** Rates are measured over this long (or since the start, when shorter). */
export const MEASURE_WINDOW_MS = 30 * 60_000;
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
      help: "API requests made per selected site and hour over the last 30 minutes, by source (a collector, logs, webhooks, auth), retries included: the measured cost beside sitehost_exporter_api_planned_requests_per_second.",
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
    while (this.snapshots.length > 2 && at - (this.snapshots[1] as Snapshot).at >= MEASURE_WINDOW_MS) {
      this.snapshots.shift();
    }
    const sites = Math.max(1, this.inputs.sites());
    this.perSiteHour.reset();
    for (const [source, perSecond] of this.perSecond()) {
      this.perSiteHour.set({ source }, Math.round(((perSecond * 3600) / sites) * 1000) / 1000);
    }
  }

  /** Requests per second by source over the window sampled so far (empty before two samples). */
  perSecond(): Map<BudgetSource, number> {
    const rates = new Map<BudgetSource, number>();
    const first = this.snapshots[0];
    const last = this.snapshots[this.snapshots.length - 1];
    if (!first || !last || last.at <= first.at) return rates;
    const seconds = (last.at - first.at) / 1000;
    for (const [source, count] of last.granted) {
      rates.set(source, (count - (first.granted.get(source) ?? 0)) / seconds);
    }
    return rates;
  }
}
