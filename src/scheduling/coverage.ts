/**
 * How many sites the request budget (`api.maxRequestsPerSecond`) covers at an account's mix of sites,
 * and what to do when the account nears it: one computation and one wording for `doctor` and the
 * status page.
 */
import type { BudgetSource } from "../api/budget.js";

/** At this share of the sites covered, the ways out are named before the budget is exceeded. */
export const COVERAGE_CLOSE_SHARE = 0.8;

export interface Coverage {
  /** `api.maxRequestsPerSecond`. */
  budget: number;
  /** The sites the plan is for. */
  sites: number;
  /** Requests/s that do not grow with the sites (the discovery's listing). */
  fixed: number;
  /** Requests/s each site adds, at this account's mix; 0 when no site is known. */
  perSite: number;
  /** The sites the budget covers at that mix (Infinity when a site costs nothing known). */
  covers: number;
  /** More sites than covered, or more than COVERAGE_CLOSE_SHARE of them. */
  tight: boolean;
}

/**
 * The budget's coverage from a plan's sources: what the discovery's listing costs is fixed, the rest
 * is shared by the sites.
 */
export function coverageOf(
  sources: ReadonlyArray<{ source: BudgetSource; requestsPerSecond: number }>,
  sites: number,
  budget: number,
): Coverage {
  const total = sources.reduce((sum, s) => sum + s.requestsPerSecond, 0);
  const fixed = sources.find((s) => s.source === "inventory")?.requestsPerSecond ?? 0;
  const perSite = sites > 0 ? Math.max(0, total - fixed) / sites : 0;
  const covers = perSite > 0 ? Math.max(0, Math.floor((budget - fixed) / perSite)) : Infinity;
  return { budget, sites, fixed, perSite, covers, tight: sites > COVERAGE_CLOSE_SHARE * covers };
}

/** "the budget of 20 requests/s covers about 1200 sites at this account's current mix (150 discovered)". */
export function coverageSentence(c: Coverage, discovered: number, noun = "discovered"): string {
  const covers = Number.isFinite(c.covers) ? `about ${c.covers}` : "any number of";
  return `the budget of ${c.budget} requests/s (api.maxRequestsPerSecond) covers ${covers} sites at this account's current mix (${discovered} ${noun})`;
}

/** The ways to make room, the same in `doctor` and on the status page. */
export function coverageWays(c: Coverage, shardCount = 1): string {
  const need = c.fixed + c.perSite * c.sites;
  const replicas = Math.max(2, Math.ceil((need / Math.max(c.budget, 1e-9)) * shardCount * 1.1));
  return [
    `raise api.maxRequestsPerSecond${need > c.budget ? ` to at least ${Math.ceil(need * 1.1)}` : ""} if the platform allows it`,
    "slow the heaviest collector schedules (collectors.<name>.schedule; collectors.<name>.maxInterval for idle traffic and for sites whose answers stay the same) or lengthen logs.maxPollInterval",
    `split the sites over ${replicas} replicas with sites.shard (SITEHOST_SHARD)`,
    "or split the account's sites over several API accounts",
  ].join("; ");
}

/** The sentence, and the ways out when the sites come near to what the budget covers. */
export function coverageText(c: Coverage, discovered: number, shardCount = 1): string {
  const sentence = coverageSentence(c, discovered);
  if (!c.tight) return sentence;
  const near = c.sites > c.covers ? "more than it covers" : `over ${COVERAGE_CLOSE_SHARE * 100} % of it`;
  return `${sentence}: ${near}. Ways to make room: ${coverageWays(c, shardCount)}`;
}
