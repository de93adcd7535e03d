/**
 * One definition per alert or recording rule, the way a monitoring mixin's `_config` works: the PromQL,
 * the annotations and the defaults of every setting a user may change (enabled, severity, `for`, named
 * thresholds, extra labels and annotations). The same definition renders the rule file with defaults
 * (config/alerts/), a file with any settings (tests, `prometheusRule.rules` of the chart), and the
 * chart's copy in which every setting is a placeholder its template fills in from the values.
 */

export type Severity = "critical" | "warning" | "info";

/** What a rule's text is written from: real values, or the chart's placeholders. */
export interface RuleContext<P extends string> {
  /** Label matchers that select the exporter's series (`job="sitehost-exporter"`). */
  sel: string;
  /** Label matchers that select the OpenTelemetry Collector sidecar's own metrics. */
  collectorSel: string;
  /**
   * The grouping labels (`cluster, job, instance` by default): what every aggregation keeps and every
   * `on (...)` matches on, so that no rule adds up or matches series of two exporters or clusters.
   */
  by: string;
  /** The grouping labels, then `extra` (each label once): `by (cluster, job, instance, site_id, site)`. */
  byWith(...extra: string[]): string;
  /**
   * The grouping labels without `instance`, then `extra` (each label once): for an aggregation across
   * the pods of one exporter (`cluster, job` by default).
   */
  byWithoutInstance(...extra: string[]): string;
  /**
   * The grouping labels without `job` and `instance`, then `extra`: what blackbox_exporter's series of
   * a site's probes share with the exporter's (its job, the probed URL as instance; `cluster` by default).
   */
  byWithoutTarget(...extra: string[]): string;
  /** The rule's thresholds as PromQL numbers. */
  p: Record<P, string>;
  /** The alert's `for` as written (`5m`). */
  for: string;
  /** A threshold of another alert, so that two alerts on one metric leave no gap between them. */
  ref(alert: string, param: string): string;
}

interface RuleBase<P extends string> {
  /** Thresholds with their defaults, by name (the chart's `prometheusRule.rules.<name>.<param>`). */
  params?: Record<P, number>;
  /** What each threshold means (README and values schema). */
  paramDocs?: Record<P, string>;
  /** Why the expression is what it is: a comment above the rule in the rendered file. */
  comment?: string;
  expr(c: RuleContext<P>): string;
}

export interface AlertDef<P extends string = string> extends RuleBase<P> {
  alert: string;
  severity: Severity;
  /** Absent: the alert fires at its first evaluation. */
  for?: string;
  summary: string | ((c: RuleContext<P>) => string);
  description(c: RuleContext<P>): string;
}

export interface RecordDef<P extends string = string> extends RuleBase<P> {
  record: string;
}

export type RuleDef = AlertDef | RecordDef;

export interface GroupDef {
  name: string;
  /** A comment above the group in the rendered file. */
  comment?: string;
  rules: RuleDef[];
}

/** Keeps the parameter names of a definition checked against its params (a typo does not compile). */
export function alert<P extends string = never>(def: AlertDef<P>): AlertDef {
  return def as unknown as AlertDef;
}

export function recording<P extends string = never>(def: RecordDef<P>): RecordDef {
  return def as unknown as RecordDef;
}

export function ruleName(r: RuleDef): string {
  return "alert" in r ? r.alert : r.record;
}

export { RUNBOOK_BASE, runbookUrl } from "../../../src/util/runbook.js";
