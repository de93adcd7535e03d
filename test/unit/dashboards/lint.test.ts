/**
 * grafana/dashboard-linter's rules (its lint/rule_*.go), checked here because the linter itself cannot be
 * installed in CI. Each `it` names the rule it stands for. PromQL validity (target-promql-rule) is checked
 * by promtool, which parses every query as a recording rule once the template variables are replaced.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { renderDashboards } from "../../../dashboards/src/index.js";
import { metricSelectors, PROBE_METRICS } from "../alerts/contract.js";

const PROMTOOL = process.env.PROMTOOL ?? "/usr/bin/promtool";

interface Target {
  expr: string;
}
interface PanelJson {
  type: string;
  title?: string;
  description?: string;
  datasource?: { uid?: string };
  targets?: Target[];
  fieldConfig?: { defaults?: { unit?: string; mappings?: unknown[] } };
  panels?: PanelJson[];
}
interface VariableJson {
  name: string;
  type: string;
  label?: string;
  query?: unknown;
  datasource?: { uid?: string };
  multi?: boolean;
  includeAll?: boolean;
  allValue?: string;
  refresh?: number;
  hide?: number;
}
interface DashboardJson {
  uid: string;
  editable: boolean;
  panels: PanelJson[];
  templating: { list: VariableJson[] };
  annotations?: { list?: Array<{ expr?: string }> };
}

const dashboards = [...renderDashboards()].map(
  ([file, text]) => [file, JSON.parse(text) as DashboardJson] as const,
);
/** The Prometheus panels (the Loki logs panel queries LogQL through its own variable). */
const panelsOf = (d: DashboardJson): PanelJson[] =>
  d.panels
    .flatMap((p) => (p.type === "row" ? (p.panels ?? []) : [p]))
    .filter((p) => p.datasource?.uid !== "${loki_datasource}");
const exprsOf = (d: DashboardJson): string[] => [
  ...panelsOf(d).flatMap((p) => (p.targets ?? []).map((t) => t.expr)),
  ...(d.annotations?.list ?? []).flatMap((a) => (a.expr ? [a.expr] : [])),
];
const variable = (d: DashboardJson, name: string): VariableJson | undefined =>
  d.templating.list.find((v) => v.name === name);

/** Grafana unit ids the dashboards may use (Grafana's valueFormats categories). */
const UNITS = new Set([
  "none",
  "short",
  "percentunit",
  "reqps",
  "Bps",
  "bytes",
  "s",
  "cps",
  "ops",
  "dateTimeAsIso",
]);
/** Panel kinds the linter's panel rules look at. */
const LINTED_PANELS = new Set(["stat", "timeseries", "gauge", "table"]);

describe.each(dashboards)("%s against dashboard-linter's rules", (_file, d) => {
  it("uneditable-dashboard: editable is false", () => {
    expect(d.editable).toBe(false);
  });

  it("template-datasource-rule: one datasource variable named datasource, labelled Data source", () => {
    const ds = d.templating.list.filter((v) => v.type === "datasource");
    expect(ds[0]).toMatchObject({ name: "datasource", label: "Data source", query: "prometheus" });
    // The rule's other allowed form, <type>_datasource: the optional Loki data source of the sites' logs.
    for (const other of ds.slice(1)) {
      expect(other).toMatchObject({ name: "loki_datasource", label: "Loki data source", query: "loki" });
    }
  });

  it.each(["job", "instance"])(
    "template-%s-rule: a query variable on $datasource, multi-select with All as .+",
    (name) => {
      const v = variable(d, name);
      expect(v).toMatchObject({
        type: "query",
        label: name[0]?.toUpperCase() + name.slice(1),
        datasource: { uid: "${datasource}" },
        multi: true,
        includeAll: true,
        allValue: ".+",
      });
    },
  );

  it("the cluster variable is optional: hidden, All matches series without the label", () => {
    expect(variable(d, "cluster")).toMatchObject({
      type: "query",
      multi: true,
      includeAll: true,
      allValue: ".*",
      hide: 2,
      datasource: { uid: "${datasource}" },
    });
  });

  it("template-label-promql-rule and template-on-time-change-reload-rule: query variables", () => {
    const queries = d.templating.list.filter((v) => v.type === "query");
    expect(queries.length).toBeGreaterThanOrEqual(3);
    for (const v of queries) {
      expect(v.query, v.name).toMatch(/^(label_names|label_values|metrics|query_result)\((.+)\)$/);
      expect(v.refresh, v.name).toBe(2);
    }
  });

  it("panel-datasource-rule, panel-title-description-rule, panel-units-rule, panel-no-targets-rule", () => {
    for (const p of panelsOf(d).filter((x) => LINTED_PANELS.has(x.type))) {
      expect(p.datasource?.uid, p.title).toBe("${datasource}");
      expect(p.title?.length ?? 0).toBeGreaterThan(0);
      expect(p.description?.length ?? 0, p.title).toBeGreaterThan(0);
      if (!p.fieldConfig?.defaults?.mappings?.length)
        expect(UNITS.has(p.fieldConfig?.defaults?.unit ?? ""), `${p.title}: unit`).toBe(true);
      expect(p.targets?.length ?? 0, p.title).toBeGreaterThan(0);
    }
  });

  it("target-job-rule, target-instance-rule: every selector matches job=~$job, instance=~$instance (and cluster)", () => {
    const queries = [
      ...exprsOf(d),
      ...d.templating.list.flatMap((v) =>
        !["cluster", "job", "instance"].includes(v.name) && typeof v.query === "string" ? [v.query] : [],
      ),
    ];
    for (const expr of queries) {
      for (const s of metricSelectors(expr)) {
        const matchers = (s.matchers ?? "").split(/,\s*/);
        // blackbox_exporter's probe series have its job and the probed URL as instance: kept to the
        // chosen exporters' sites by a join with the site's own series, which carry the scope.
        if (PROBE_METRICS.includes(s.name)) {
          expect(matchers, `${s.name} in ${expr}`).toContain('cluster=~"$cluster"');
          expect(expr).toMatch(
            /and on \(site_id\) sitehost_site_info\{cluster=~"\$cluster", job=~"\$job", instance=~"\$instance"/,
          );
          continue;
        }
        expect(matchers, `${s.name} in ${expr}`).toEqual(
          expect.arrayContaining(['cluster=~"$cluster"', 'job=~"$job"', 'instance=~"$instance"']),
        );
      }
    }
  });

  it("target-rate-interval-rule: rate and irate over $__rate_interval", () => {
    for (const expr of exprsOf(d)) {
      for (const m of expr.matchAll(/\b(i?rate)\(\s*[a-z_:]+\{[^}]*\}\[([^\]]+)\]/g))
        expect(m[2], expr).toBe("$__rate_interval");
    }
  });

  it("target-counter-agg-rule: every counter (_total) is inside rate, irate or increase", () => {
    for (const expr of exprsOf(d)) {
      for (const m of expr.matchAll(/\b[a-z_:]+_total\b/g)) {
        const before = expr.slice(0, m.index);
        const after = expr.slice((m.index ?? 0) + m[0].length);
        expect(
          /\b(rate|irate|increase)\(\s*$/.test(before) && /^\{[^}]*\}\[[^\]]+\]\)/.test(after),
          expr,
        ).toBe(true);
      }
    }
  });
});

describe("target-promql-rule", () => {
  it("every query of every dashboard is valid PromQL (promtool check rules)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sitehost-dashboard-promql-"));
    try {
      // Grafana's variables replaced by sample values, as the linter does before parsing.
      const rules = dashboards.flatMap(([, d]) =>
        exprsOf(d).map((expr, i) => ({
          record: `dashboard:${d.uid.replace(/-/g, "_")}:${i}`,
          expr: expr
            .replaceAll("$__rate_interval", "5m")
            .replace(/\$\{?(\w+)(:\w+)?\}?/g, (_m, name: string) => `sample_${name}`),
        })),
      );
      expect(rules.length).toBeGreaterThan(50);
      const file = join(dir, "queries.yaml");
      await writeFile(file, stringify({ groups: [{ name: "dashboards", rules }] }));
      const { stdout } = await promisify(execFile)(PROMTOOL, ["check", "rules", file]);
      expect(stdout).toContain(`SUCCESS: ${rules.length} rules found`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
