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
      help: "API requests per second the schedules (by collector) and the log streams (source logs) plan for the current sites.",
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

  update(): RequestPlan {
    const plan = makePlan(this.inputs.sources(), this.config.api.maxRequestsPerSecond);
    this.planned.reset();
    for (const s of plan.sources) this.planned.set({ source: s.source }, round(s.requestsPerSecond));
    this.budget.setWeights(Object.fromEntries(plan.sources.map((s) => [s.source, s.requestsPerSecond])));
    const before = this.plan;
    this.plan = plan;
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
