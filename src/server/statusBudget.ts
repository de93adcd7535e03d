/**
 * The status report's request-budget part: the plan against api.maxRequestsPerSecond, each source's
 * cost per site-hour planned and measured (a measurement of the first runs only said so, not compared),
 * and how many sites the budget covers at this account's mix, with the ways out when it is near.
 */
import { firstRunsIn } from "../scheduling/budgetPlanner.js";
import { coverageOf, coverageText } from "../scheduling/coverage.js";
import { perSiteHour } from "../scheduling/plan.js";
import type { StatusInputs, StatusReport } from "./statusTypes.js";

const round = (n: number) => Math.round(n * 1000) / 1000;

export function budgetPart(i: StatusInputs): StatusReport["budget"] {
  const plan = i.active?.plan;
  if (!plan) return { health: "pending", summary: "no plan yet" };
  const sources = plan.sources.map((s) => ({
    source: s.source,
    requestsPerSecond: round(s.requestsPerSecond),
    perSiteHour: round(perSiteHour(s.requestsPerSecond, plan.sites)),
    ...(s.measuredRequestsPerSecond !== undefined
      ? { measuredPerSiteHour: round(perSiteHour(s.measuredRequestsPerSecond, plan.sites)) }
      : {}),
    ...(s.measuredStarting ? { measuredStarting: true } : {}),
  }));
  const c = coverageOf(plan.sources, plan.sites, plan.budget);
  const discovered = i.active?.sitesDiscovered ?? plan.sites;
  const known = plan.sites > 0;
  const coverage = known ? coverageText(c, discovered, i.shard.count) : undefined;
  const picture = firstPicture(i, plan.budget);
  const base = {
    ...(picture ? { firstPicture: picture.part } : {}),
    plannedRequestsPerSecond: round(plan.total),
    budgetRequestsPerSecond: plan.budget,
    sources,
    ...(known && Number.isFinite(c.covers) ? { sitesCovered: c.covers } : {}),
    ...(coverage ? { coverage } : {}),
  };
  if (!plan.fits)
    return {
      ...base,
      health: "warning",
      summary:
        i.active?.budgetAdvice ??
        `planned ${plan.total.toFixed(2)} requests/s over the budget of ${plan.budget}/s`,
    };
  const planned = `${picture ? `${picture.sentence}; ` : ""}planned ${plan.total.toFixed(2)} requests/s of ${plan.budget}/s (api.maxRequestsPerSecond)`;
  return known && c.tight
    ? { ...base, health: "warning", summary: `${planned}; ${coverage ?? ""}` }
    : { ...base, health: "ok", summary: planned };
}

/**
 * When the first complete picture is expected: the collectors' first runs go first (the log streams
 * wait, see BudgetPlanner.refreshWeights), at most their whole runs' requests at the full budget.
 */
function firstPicture(
  i: StatusInputs,
  budget: number,
): { part: NonNullable<StatusReport["budget"]["firstPicture"]>; sentence: string } | undefined {
  const work = i.active?.startup ?? [];
  const collectors = firstRunsIn(work);
  if (collectors.length === 0) return undefined;
  const unreadStreams = work.find((w) => w.source === "logs")?.requests ?? 0;
  const requests = collectors.reduce((sum, c) => sum + c.requests, 0);
  const expectedInSeconds = Math.ceil(requests / Math.max(budget, 1e-9));
  const names = collectors.map((c) => c.source);
  const within =
    expectedInSeconds >= 120 ? `${Math.ceil(expectedInSeconds / 60)} minutes` : `${expectedInSeconds} s`;
  const logs = unreadStreams > 0 ? `, then the first reads of ${unreadStreams} log streams` : "";
  return {
    part: { collectorsPending: names, requests, expectedInSeconds, logStreamsUnread: unreadStreams },
    sentence: `starting: first runs of ${names.join(", ")} pending (at most ${requests} requests, complete in about ${within} at the budget${logs})`,
  };
}
