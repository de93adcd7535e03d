/**
 * Every shipped rule aggregates and matches by the grouping labels (RulesConfig.groupingLabels,
 * prometheusRule.groupingLabels): a Prometheus that holds two clusters never adds up or matches the
 * series of two exporters with the same job and instance. A rule written with a literal `job, instance`
 * instead of the context's grouping renders the same whatever the set, and fails here.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { GROUPS } from "../../../config/alerts/src/index.js";
import {
  DEFAULT_GROUPING_LABELS,
  DEFAULT_SELECTOR,
  renderRules,
  type RenderedRule,
} from "../../../config/alerts/src/render.js";
import {
  DEFAULT_GROUPING_LABELS as SLO_DEFAULT_GROUPING_LABELS,
  SlosSchema,
} from "../../../src/config/slos.js";
import { sloRuleGroups } from "../../../src/slo/rules.js";

const ROOT = join(import.meta.dirname, "..", "..", "..");

const AGGREGATIONS =
  /\b(sum|min|max|avg|count|group|stddev|stdvar|topk|bottomk|quantile|count_values|limitk|limit_ratio)\s*(by|without)?\s*\(/g;

/** The label lists of an expression's `by (...)` and `on (...)` clauses (string literals left out). */
function groupingClauses(expr: string): string[][] {
  const code = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  return [...code.matchAll(/\b(?:by|on)\s*\(([^)]*)\)/g)].map((m) =>
    (m[1] as string)
      .split(",")
      .map((l) => l.trim())
      .filter(Boolean),
  );
}

/** Why a rule's expression does not keep `labels` apart, or undefined when it does. */
function groupingProblem(expr: string, labels: readonly string[]): string | undefined {
  const code = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  for (const m of code.matchAll(AGGREGATIONS))
    if (!m[2]) return `${m[1]} without by (...) aggregates every exporter together`;
  for (const m of code.matchAll(/\b(?:without|ignoring)\s*\(([^)]*)\)/g)) {
    const dropped = (m[1] as string).split(",").map((l) => l.trim());
    const lost = dropped.filter((l) => labels.includes(l));
    if (lost.length) return `${m[0]} drops ${lost.join(", ")}`;
  }
  const acrossInstances = labels.filter((l) => l !== "instance");
  for (const clause of groupingClauses(expr)) {
    const startsWith = (prefix: readonly string[]) => prefix.every((l, i) => clause[i] === l);
    if (startsWith(labels)) continue;
    // The set without instance: an aggregation across the pods of one exporter (shard overlap).
    if (startsWith(acrossInstances) && !clause.includes("instance")) continue;
    // The probe SLI: blackbox_exporter's series have its job and the probed URL as instance, so they
    // are summed by the labels they share with the exporter's and the site, then given the site's own.
    const probeJoin = [...labels.filter((l) => l !== "job" && l !== "instance"), "site_id"];
    if (/\bprobe_\w+\{/.test(code) && startsWith(probeJoin)) continue;
    return `(${clause.join(", ")}) does not start with ${labels.join(", ")}`;
  }
  return undefined;
}

const shipped = (labels: readonly string[]): RenderedRule[] => [
  ...renderRules(GROUPS, { selector: DEFAULT_SELECTOR, groupingLabels: labels }).groups.flatMap(
    (g) => g.rules,
  ),
  // The SLO rules (src/slo) take the same set as slos.groupingLabels.
  ...(sloRuleGroups(SlosSchema.parse({ groupingLabels: [...labels] })).flatMap(
    (g) => g.rules,
  ) as RenderedRule[]),
];

describe("grouping labels", () => {
  it.each([
    ["the default", DEFAULT_GROUPING_LABELS],
    ["another cluster label and namespace", ["k8s_cluster", "namespace", "job", "instance"]],
    ["instance first", ["instance", "tenant"]],
  ])("with %s every shipped rule aggregates and matches by the set", (_, labels) => {
    const rules = shipped(labels);
    expect(rules.length).toBeGreaterThan(60);
    const problems = rules.flatMap((r) => {
      const p = groupingProblem(r.expr, labels);
      return p ? [`${r.alert ?? r.record}: ${p}`] : [];
    });
    expect(problems).toEqual([]);
  });

  it("the check catches a rule that aggregates or matches by job and instance alone", () => {
    const labels = DEFAULT_GROUPING_LABELS;
    expect(groupingProblem("sum by (job, instance) (rate(x[5m])) > 0", labels)).toMatch(/does not start/);
    expect(groupingProblem("a > on (job, instance) b", labels)).toMatch(/does not start/);
    expect(groupingProblem("count by (job, namespace, shard) (x) > 1", labels)).toMatch(/does not start/);
    expect(groupingProblem("sum(rate(x[5m])) > 0", labels)).toMatch(/aggregates every exporter/);
    expect(groupingProblem("a / ignoring (cluster) b", labels)).toMatch(/drops cluster/);
    expect(groupingProblem("count by (cluster, job, namespace, shard) (x) > 1", labels)).toBeUndefined();
  });

  it("the shard overlap counts across the pods of a cluster: by the set without instance, each label once", () => {
    const expr = (labels: readonly string[]) =>
      renderRules(GROUPS, { selector: DEFAULT_SELECTOR, groupingLabels: labels })
        .groups.flatMap((g) => g.rules)
        .find((r) => r.alert === "SitehostExporterShardServedTwice")?.expr;
    expect(expr(DEFAULT_GROUPING_LABELS)).toBe(
      'count by (cluster, job, namespace, shard) (sitehost_exporter_shard_info{job="sitehost-exporter"}) > 1',
    );
    expect(expr(["region", "namespace", "job", "instance"])).toMatch(
      /^count by \(region, namespace, job, shard\) /,
    );
  });

  it("a set the rules cannot be written with is refused", () => {
    const render = (groupingLabels: string[]) => () =>
      renderRules(GROUPS, { selector: DEFAULT_SELECTOR, groupingLabels });
    expect(render([])).toThrow(/groupingLabels is empty/);
    expect(render(["cluster", "k8s-cluster"])).toThrow(/"k8s-cluster" is not a Prometheus label name/);
    expect(render(["job", "job"])).toThrow(/names a label twice/);
  });

  it("the rule file, the chart's values and the SLO rules have one default: cluster, job, instance", async () => {
    expect(DEFAULT_GROUPING_LABELS).toEqual(["cluster", "job", "instance"]);
    const values = parse(await readFile(join(ROOT, "helm", "sitehost-exporter", "values.yaml"), "utf8")) as {
      prometheusRule: { groupingLabels: unknown };
    };
    expect(values.prometheusRule.groupingLabels).toEqual(DEFAULT_GROUPING_LABELS);
    expect(SLO_DEFAULT_GROUPING_LABELS).toEqual(DEFAULT_GROUPING_LABELS);
    const committed = await readFile(join(ROOT, "config", "alerts", "sitehost-exporter.rules.yaml"), "utf8");
    expect(committed).toContain("sum by (cluster, job, instance) (");
  });
});
