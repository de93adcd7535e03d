/**
 * Settings of single collectors beyond `enabled` and `schedule`: which of the platform's answers a
 * collector publishes. Each choice only trims what is published from an answer the collector fetches
 * anyway, so none changes the requests a run makes.
 */
import { z } from "zod";

/** The performance audits' strategies (`strategy` label): one report answers both. */
export const AUDIT_STRATEGIES = ["mobile", "desktop"] as const;
export type AuditStrategy = (typeof AUDIT_STRATEGIES)[number];
/** Google judges Core Web Vitals on mobile first: the audits of the other strategy are opt-in. */
export const DEFAULT_AUDIT_STRATEGIES: readonly AuditStrategy[] = ["mobile"];

/** The statistics' periods (`period` label values), as the platform reports them. */
export const STATISTICS_PERIODS = [
  "today",
  "yesterday",
  "current_month",
  "last_month",
  "two_months_ago",
  "last_one_year",
  "last_two_years",
] as const;
export type StatisticsPeriod = (typeof STATISTICS_PERIODS)[number];
/**
 * The last whole day and the current and last months: today's count is partial until the platform's
 * daily update, and the longer periods are sums of months Prometheus keeps anyway.
 */
export const DEFAULT_STATISTICS_PERIODS: readonly StatisticsPeriod[] = [
  "yesterday",
  "current_month",
  "last_month",
];

/** A non-empty list of `values` without repeats. */
const choiceList = <T extends string>(values: readonly [T, ...T[]], fallback: readonly T[]) =>
  z
    .array(z.enum(values))
    .min(1)
    .refine((list) => new Set(list).size === list.length, { message: "lists a value twice" })
    .default([...fallback]);

/** `collectors.performance` besides `enabled` and `schedule`. */
export const performanceOptions = {
  /** The strategies whose audits are published. */
  strategies: choiceList(AUDIT_STRATEGIES, DEFAULT_AUDIT_STRATEGIES),
};

/** `collectors.statistics` besides `enabled` and `schedule`. */
export const statisticsOptions = {
  /** The periods whose page views and unique visits are published. */
  periods: choiceList(STATISTICS_PERIODS, DEFAULT_STATISTICS_PERIODS),
};
