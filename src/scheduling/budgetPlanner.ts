/**
 * Keeps the request plan current: recomputed at start and after every discovery, published as
 * gauges, handed to the shared budget as fair-share weights, and a warning when the demand does not
 * fit the budget (again only when the answer changes).
 */
import type { Logger } from "pino";
import type { Gauge, Registry } from "prom-client";
import type { BudgetSource, RequestBudget, UnscheduledSource } from "../api/budget.js";
import { gauge } from "../metrics/selfMetric.js";
import { adviceFor, makePlan, type PlannedSource, type RequestPlan } from "./plan.js";

export interface PlanInputs {
  /** Planned requests per second by source (collectors and logs) for the current sites. */
  sources(): PlannedSource[];
  /** The selected sites. */
  sites?(): number;
  /** Requests per second each source took from the budget lately (MeasuredRates). */
  measured?(): ReadonlyMap<BudgetSource, number>;
  /** The sources whose measurement still holds only the first runs (MeasuredRates.starting). */
  measuredStarting?(): ReadonlySet<BudgetSource>;
  /**
   * Start-up work still pending: the first run of a collector, the first read of each log stream, in
   * requests, and how soon it should be done. It is weighted for that, not at the steady rate (an
   * hourly collector's first run would otherwise take most of an hour when the budget is contended).
   */
  startupWork?(): StartupWork[];
}

/** Sources without a schedule: they share what the collectors' deadlines leave. */
const UNSCHEDULED: ReadonlySet<BudgetSource> = new Set<UnscheduledSource>(["logs", "webhooks"]);
/** A collector's share while its runs compete: its planned rate plus a quarter, so a run ends in 80 % of its period. */
const DEADLINE_HEADROOM = 1.25;

/** While start-up work remains, the weights are refreshed this often. */
const STARTUP_REFRESH_MS = 5_000;
/**
 * The plan is made again this often, besides after each discovery: how the log streams and the
 * traffic polls are spaced follows what the sites do, and the plan follows them.
 */
const PLAN_REFRESH_MS = 60_000;

export interface PlannerSettings {
  /** `api.maxRequestsPerSecond`. */
  budgetRequestsPerSecond: number;
  /** `sites.shard.count`, for the advice to shard. */
  shardCount: number;
  /** `logs.maxPollInterval`, for the advice to poll logs less often. */
  logsMaxPollInterval: string;
  /** `collectors.traffic.schedule` and `.maxInterval`, for the advice to poll traffic less often. */
  traffic?: { schedule: string; maxInterval: string };
}

export interface StartupWork {
  source: BudgetSource;
  requests: number;
  withinSeconds: number;
}

/** The collectors' first runs among the start-up work (not the log streams' first reads). */
export function firstRunsIn(work: readonly StartupWork[]): StartupWork[] {
  return work.filter((w) => !UNSCHEDULED.has(w.source));
}

export class BudgetPlanner {
  private readonly planned: Gauge<"source">;
  private readonly budgetGauge: Gauge;
  private plan: RequestPlan | undefined;
  private warnedTotal: number | undefined;
  private readonly log: Logger;
  private startupTimer: NodeJS.Timeout | undefined;
  private planTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly settings: PlannerSettings,
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
    this.budgetGauge.set(settings.budgetRequestsPerSecond);
  }

  /**
   * Plan now and every minute; refresh the weights every few seconds while start-up work remains or
   * `starting()` says more may come (before a first discovery, the sites and their streams are not
   * known yet).
   */
  start(starting: () => boolean = () => false): void {
    this.update();
    this.startupTimer = setInterval(() => {
      const pending = this.refreshWeights();
      if (!pending && !starting()) this.stopStartup();
    }, STARTUP_REFRESH_MS);
    this.startupTimer.unref();
    this.planTimer = setInterval(() => this.update(), PLAN_REFRESH_MS);
    this.planTimer.unref();
  }

  stop(): void {
    this.stopStartup();
    clearInterval(this.planTimer);
    this.planTimer = undefined;
  }

  private stopStartup(): void {
    clearInterval(this.startupTimer);
    this.startupTimer = undefined;
  }

  /** The ways out of a plan over the budget (the warning's text, and the status page's). */
  adviceFor(plan: RequestPlan): string {
    return adviceFor(plan, {
      shardCount: this.settings.shardCount,
      maxPollInterval: this.settings.logsMaxPollInterval,
      traffic: this.settings.traffic,
    });
  }

  /** The plan, with what each source took from the budget lately. */
  current(): RequestPlan | undefined {
    const plan = this.plan;
    const measured = this.inputs.measured?.();
    if (!plan || !measured) return plan;
    const starting = this.inputs.measuredStarting?.();
    return {
      ...plan,
      sources: plan.sources.map((s) => ({
        ...s,
        measuredRequestsPerSecond: measured.get(s.source),
        ...(starting?.has(s.source) ? { measuredStarting: true } : {}),
      })),
    };
  }

  /**
   * Hand the budget its fair-share weights. Called after each plan and while start-up work remains
   * (the daemon refreshes it every few seconds). Returns whether any start-up work is still pending.
   *
   * - Start-up work (a collector's first run, a stream's first read) raises its source towards the
   *   rate that finishes it in time, as far as what the plan leaves of the budget allows, but at
   *   least a quarter of it (weight P/3 beside the plan's P), so that when the plan alone exceeds the
   *   budget first runs still finish. The most urgent work is raised first (see startupRaises).
   * - What a user looks at first comes first: while any collector's first run is pending, the log
   *   streams wait with the budget's floor share (their checkpoints keep every entry for later).
   * - Scheduled collectors have deadlines (a run must end before the next tick, or the tick is
   *   skipped): while they fit in the budget they get their planned rate plus a quarter, as an
   *   absolute share of it, however much start-up work competes; the log streams, webhook refreshes
   *   and start-up work share the rest in proportion to their weights.
   */
  refreshWeights(): boolean {
    const budget = this.settings.budgetRequestsPerSecond;
    const sources = this.plan?.sources ?? this.inputs.sources();
    const planned = new Map<BudgetSource, number>();
    for (const s of sources) planned.set(s.source, s.requestsPerSecond);
    const work = this.inputs.startupWork?.() ?? [];
    const collectorsStarting = firstRunsIn(work).length > 0;
    if (collectorsStarting) planned.delete("logs");
    const plannedTotal = [...planned.values()].reduce((a, b) => a + b, 0);
    const room = Math.max(budget - plannedTotal, plannedTotal / 3);
    const extra = startupRaises(
      collectorsStarting ? work.filter((w) => w.source !== "logs") : work,
      planned,
      room,
    );

    // Deadline work (the collectors' steady rates with headroom) against the rest (shared work).
    let deadlineTotal = 0;
    let sharedTotal = 0;
    for (const [source, rate] of planned) {
      if (UNSCHEDULED.has(source)) sharedTotal += rate;
      else deadlineTotal += rate * DEADLINE_HEADROOM;
    }
    for (const more of extra.values()) sharedTotal += more;
    // Weights are relative: a collector's weight per planned request/s is chosen so that its share of
    // the budget is its rate with headroom. When the collectors alone exceed the budget (or nothing
    // else asks), plain shares of the plan.
    const collectorScale =
      deadlineTotal >= budget || sharedTotal === 0
        ? 1
        : (DEADLINE_HEADROOM * sharedTotal) / (budget - deadlineTotal);
    const weights: Partial<Record<BudgetSource, number>> = {};
    for (const [source, rate] of planned)
      weights[source] = UNSCHEDULED.has(source) ? rate : rate * collectorScale;
    for (const [source, more] of extra) weights[source] = (weights[source] ?? 0) + more;
    this.budget.setWeights(weights);
    return work.length > 0;
  }

  update(): RequestPlan {
    const measured = this.inputs.measured?.();
    const sources = this.inputs.sources().map((s) => {
      const rate = measured?.get(s.source);
      return rate === undefined ? s : { ...s, measuredRequestsPerSecond: rate };
    });
    const plan = makePlan(sources, this.settings.budgetRequestsPerSecond, this.inputs.sites?.() ?? 0);
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
          this.adviceFor(plan),
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

/**
 * How much each source's weight is raised for its start-up work: towards the rate that finishes the
 * work in time (above its planned rate), the earliest deadline first, within `room` requests/s. Work
 * with the same deadline shares what is left in proportion to what it asks.
 */
export function startupRaises(
  work: readonly StartupWork[],
  planned: ReadonlyMap<BudgetSource, number>,
  room: number,
): Map<BudgetSource, number> {
  const byDeadline = new Map<number, Array<{ source: BudgetSource; more: number }>>();
  for (const { source, requests, withinSeconds } of work) {
    const more = requests / withinSeconds - (planned.get(source) ?? 0);
    if (more <= 0) continue;
    const group = byDeadline.get(withinSeconds) ?? [];
    group.push({ source, more });
    byDeadline.set(withinSeconds, group);
  }
  const raises = new Map<BudgetSource, number>();
  let left = room;
  for (const within of [...byDeadline.keys()].sort((a, b) => a - b)) {
    const group = byDeadline.get(within) ?? [];
    const asked = group.reduce((a, g) => a + g.more, 0);
    const scale = asked > left ? left / asked : 1;
    for (const { source, more } of group) raises.set(source, (raises.get(source) ?? 0) + more * scale);
    left = Math.max(0, left - asked * scale);
  }
  return raises;
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
