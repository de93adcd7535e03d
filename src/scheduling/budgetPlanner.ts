/**
 * Keeps the request plan current: recomputed at start and after every discovery, published as
 * gauges, handed to the shared budget as fair-share weights, and a warning when the demand does not
 * fit the budget (again only when the answer changes).
 */
import type { Logger } from "pino";
import type { Gauge, Registry } from "prom-client";
import type { RequestBudget } from "../api/budget.js";
import type { Config } from "../config/schema.js";
import { gauge } from "../metrics/selfMetric.js";
import { adviceFor, makePlan, type PlannedSource, type RequestPlan } from "./plan.js";

export interface PlanInputs {
  /** Planned requests per second by source (collectors and logs) for the current sites. */
  sources(): PlannedSource[];
  /**
   * Start-up work still pending: the first run of a collector, the first read of each log stream, in
   * requests, and how soon it should be done. It is weighted for that, not at the steady rate (an
   * hourly collector's first run would otherwise take most of an hour when the budget is contended).
   */
  startupWork?(): StartupWork[];
}

export interface StartupWork {
  source: string;
  requests: number;
  withinSeconds: number;
}

export class BudgetPlanner {
  private readonly planned: Gauge<"source">;
  private readonly budgetGauge: Gauge;
  private plan: RequestPlan | undefined;
  private warnedTotal: number | undefined;
  private readonly log: Logger;

  constructor(
    private readonly config: Config,
    registry: Registry,
    logger: Logger,
    private readonly budget: Pick<RequestBudget, "setWeights">,
    private readonly inputs: PlanInputs,
  ) {
    this.log = logger.child({ component: "budget" });
    this.planned = gauge(registry, {
      name: "sitehost_exporter_api_planned_requests_per_second",
      help: "API requests per second the schedules (by collector) and the log streams (source logs) plan for the current sites, and the site refreshes after webhook events made lately (source webhooks).",
      labelNames: ["source"],
    });
    this.budgetGauge = gauge(registry, {
      name: "sitehost_exporter_api_budget_requests_per_second",
      help: "The API request budget, api.maxRequestsPerSecond.",
    });
    this.budgetGauge.set(config.api.maxRequestsPerSecond);
  }

  current(): RequestPlan | undefined {
    return this.plan;
  }

  /**
   * Hand the budget its fair-share weights: each source's planned rate, raised towards the rate that
   * finishes its pending start-up work in time, as far as the budget left over by the plan allows.
   * Called after each plan and while start-up work remains (the daemon refreshes it every few seconds).
   * Returns whether any start-up work is still pending.
   */
  refreshWeights(): boolean {
    const weights = new Map<string, number>();
    for (const s of this.plan?.sources ?? this.inputs.sources()) weights.set(s.source, s.requestsPerSecond);
    const planned = [...weights.values()].reduce((a, b) => a + b, 0);
    const extra = new Map<string, number>();
    const work = this.inputs.startupWork?.() ?? [];
    for (const { source, requests, withinSeconds } of work) {
      const more = requests / withinSeconds - (weights.get(source) ?? 0);
      if (more > 0) extra.set(source, (extra.get(source) ?? 0) + more);
    }
    // Start-up work shares what the plan leaves of the budget, so steady work (traffic every minute)
    // keeps the rate it needs while first runs catch up; but at least a quarter of it (weight P/3
    // beside the plan's P), so that when the plan alone exceeds the budget first runs still finish.
    const extraTotal = [...extra.values()].reduce((a, b) => a + b, 0);
    const room = Math.max(this.config.api.maxRequestsPerSecond - planned, planned / 3);
    const scale = extraTotal > room ? room / extraTotal : 1;
    for (const [source, more] of extra) weights.set(source, (weights.get(source) ?? 0) + more * scale);
    this.budget.setWeights(Object.fromEntries(weights));
    return work.length > 0;
  }

  update(): RequestPlan {
    const plan = makePlan(this.inputs.sources(), this.config.api.maxRequestsPerSecond);
    this.planned.reset();
    for (const s of plan.sources) this.planned.set({ source: s.source }, round(s.requestsPerSecond));
    const before = this.plan;
    this.plan = plan;
    this.refreshWeights();
    if (!plan.fits) {
      const changed =
        this.warnedTotal === undefined || Math.abs(plan.total - this.warnedTotal) > 0.1 * this.warnedTotal;
      if (changed) {
        this.warnedTotal = plan.total;
        this.log.warn(
          { plannedRequestsPerSecond: round(plan.total), budgetRequestsPerSecond: plan.budget },
          adviceFor(plan, {
            shardCount: this.config.sites.shard.count,
            maxPollInterval: this.config.logs.maxPollInterval,
          }),
        );
      }
    } else if (before && !before.fits) {
      this.warnedTotal = undefined;
      this.log.info(
        { plannedRequestsPerSecond: round(plan.total), budgetRequestsPerSecond: plan.budget },
        "the planned API requests fit the budget again",
      );
    }
    return plan;
  }
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
