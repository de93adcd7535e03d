/**
 * What the schedules and the log streams will ask of the platform, in requests per second, against
 * the budget (`api.maxRequestsPerSecond`): published as gauges, used as the budget's fair-share
 * weights, and, when the demand does not fit, a warning that names the ways out.
 */
import cron from "node-cron";
import type { BudgetSource } from "../api/budget.js";
import { TRAFFIC_MAX_INTERVAL_LIMIT, type CollectorName } from "../config/schema.js";
import { coverageOf } from "./coverage.js";

/** Average runs per second of a cron schedule (the month and weekday restrictions averaged over a year). */
export function runsPerSecond(schedule: string): number {
  const f = cron.parse(schedule);
  const perDay = f.second.length * f.minute.length * f.hour.length;
  const domShare = f.dayOfMonth.length >= 31 ? 1 : f.dayOfMonth.length / 30.44;
  const dowShare = f.dayOfWeek.length >= 7 ? 1 : f.dayOfWeek.length / 7;
  // cron runs on a day that matches either restriction when both are given.
  const dayShare =
    domShare < 1 && dowShare < 1 ? 1 - (1 - domShare) * (1 - dowShare) : Math.min(domShare, dowShare);
  return (perDay * dayShare * (f.month.length / 12)) / 86_400;
}

/** How long one period of a collector's schedule is on average, ms; undefined for a source without one. */
export function schedulePeriodMs(
  collectors: Readonly<Record<CollectorName, { schedule: string }>>,
  source: BudgetSource,
): number | undefined {
  const schedule = (collectors as Readonly<Record<string, { schedule: string } | undefined>>)[source]
    ?.schedule;
  return schedule === undefined ? undefined : 1000 / runsPerSecond(schedule);
}

/**
 * How soon a collector's first run should be done: 90 s, or a twelfth of its period for collectors
 * that run hourly or less often (5 minutes for an hourly one), which leave the budget to the
 * frequent ones and the log streams first.
 */
export function firstRunWithinSeconds(schedule: string): number {
  return Math.max(90, 1 / runsPerSecond(schedule) / 12);
}

export interface PlannedSource {
  /** A collector name, `logs`, or `webhooks` (site refreshes after webhook events, as observed). */
  source: BudgetSource;
  requestsPerSecond: number;
  /** What the source took from the budget lately (MeasuredRates), when known. */
  measuredRequestsPerSecond?: number;
  /**
   * The measurement does not span its whole window yet (MeasuredRates.starting): it holds the first
   * runs since the start and reads high, not comparable to the plan.
   */
  measuredStarting?: boolean;
}

export interface RequestPlan {
  sources: PlannedSource[];
  total: number;
  budget: number;
  fits: boolean;
  /** Selected sites the plan is for. */
  sites: number;
}

export function makePlan(sources: PlannedSource[], budget: number, sites = 0): RequestPlan {
  const total = sources.reduce((sum, s) => sum + s.requestsPerSecond, 0);
  return { sources, total, budget, fits: total <= budget, sites };
}

/** Requests per second as requests per site-hour. */
export function perSiteHour(requestsPerSecond: number, sites: number): number {
  return (requestsPerSecond * 3600) / Math.max(1, sites);
}

export interface AdviceContext {
  shardCount: number;
  /** logs.maxPollInterval. */
  maxPollInterval: string;
  /** The traffic collector's schedule and collectors.traffic.maxInterval. */
  traffic?: { schedule: string; maxInterval: string };
}

/**
 * The warning's text: demand, budget, and concrete ways out, slower traffic polling first (it is
 * most of the collectors' cost, and its counters stay exact whatever the polling).
 */
export function adviceFor(plan: RequestPlan, ctx: AdviceContext): string {
  const rate = (source: BudgetSource) =>
    plan.sources.find((s) => s.source === source)?.requestsPerSecond ?? 0;
  const traffic = rate("traffic");
  // Logs and webhook refreshes have no schedule to slow down; traffic has its own way out.
  const top = [...plan.sources]
    .filter((s) => s.source !== "logs" && s.source !== "webhooks" && s.source !== "traffic")
    .sort((a, b) => b.requestsPerSecond - a.requestsPerSecond)
    .slice(0, 2)
    .map((s) => `collectors.${s.source}.schedule (${s.requestsPerSecond.toFixed(1)}/s)`);
  const logs = rate("logs");
  const shards = Math.ceil((plan.total / plan.budget) * ctx.shardCount);
  const now = (value: string | undefined) => (value ? `now ${value}, ` : "");
  const ways = [
    traffic > 0
      ? `poll traffic less often (its counters stay exact): collectors.traffic.schedule for busy live sites ` +
        `(${now(ctx.traffic?.schedule)}traffic plans ${traffic.toFixed(1)}/s), collectors.traffic.maxInterval ` +
        `for idle, staging, sandbox and kit sites (${now(ctx.traffic?.maxInterval)}up to ${TRAFFIC_MAX_INTERVAL_LIMIT})`
      : undefined,
    `raise api.maxRequestsPerSecond to at least ${Math.ceil(plan.total * 1.1)} (if the platform allows)`,
    top.length > 0 ? `slow down ${top.join(" or ")}` : undefined,
    `split the sites over ${shards} replicas with sites.shard (SITEHOST_SHARD)`,
    logs > 0
      ? `lengthen logs.maxPollInterval (now ${ctx.maxPollInterval}; logs plan ${logs.toFixed(1)}/s)`
      : undefined,
  ].filter(Boolean);
  // A measurement of the first runs only reads high: not a cost to compare.
  const measured = plan.sources.reduce(
    (sum, s) => sum + (s.measuredStarting ? 0 : (s.measuredRequestsPerSecond ?? 0)),
    0,
  );
  const covers = coverageOf(plan.sources, plan.sites, plan.budget).covers;
  const cost =
    plan.sites > 0
      ? ` (${perSiteHour(plan.total, plan.sites).toFixed(1)} per site-hour for ${plan.sites} sites` +
        (measured > 0 ? `; measured lately: ${perSiteHour(measured, plan.sites).toFixed(1)}` : "") +
        (Number.isFinite(covers) ? `; the budget covers about ${covers} sites at this mix` : "") +
        ")"
      : "";
  return (
    `the schedules and log streams plan ${plan.total.toFixed(1)} API requests/s${cost} but the budget ` +
    `(api.maxRequestsPerSecond) is ${plan.budget}: collector runs will stretch and be skipped, and ` +
    `logs will be read late. Ways out: ${ways.join("; ")}`
  );
}

/** Each collector's requests per run at steady state (for the current sites) times its runs per second. */
export function collectorSources(
  collectors: ReadonlyArray<{ name: CollectorName; plannedRequestsPerRun: number; schedule: string }>,
): PlannedSource[] {
  return collectors.map((c) => ({
    source: c.name,
    requestsPerSecond: c.plannedRequestsPerRun * runsPerSecond(c.schedule),
  }));
}
