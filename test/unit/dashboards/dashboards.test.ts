import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderDashboards } from "../../../dashboards/src/index.js";
import { METRIC_FAMILIES } from "../../../src/metrics/families.js";
import { KNOWN_METRICS as KNOWN, metricSelectors as selectors } from "../alerts/contract.js";

const DIR = join(import.meta.dirname, "..", "..", "..", "dashboards");

interface Target {
  expr: string;
  refId?: string;
  datasource?: { type?: string; uid?: string };
}
interface PanelJson {
  id: number;
  type: string;
  title?: string;
  description?: string;
  datasource?: { type?: string; uid?: string };
  targets?: Target[];
  fieldConfig?: { defaults?: { unit?: string } };
  panels?: PanelJson[];
}
interface VariableJson {
  name: string;
  type: string;
  query?: unknown;
  datasource?: { type?: string; uid?: string };
}
interface AnnotationJson {
  name: string;
  datasource?: { type?: string; uid?: string };
  expr?: string;
  target?: { expr?: string };
  useValueForTime?: boolean;
}
interface DashboardJson {
  uid: string;
  title: string;
  panels: PanelJson[];
  templating: { list: VariableJson[] };
  annotations?: { list?: AnnotationJson[] };
}

const committed = new Map<string, { text: string; json: DashboardJson }>();
for (const file of renderDashboards().keys()) {
  const text = await readFile(join(DIR, file), "utf8");
  committed.set(file, { text, json: JSON.parse(text) as DashboardJson });
}
const all = [...committed.entries()];

/** The Loki panels (the sites' logs, optional) query LogQL through the `loki` variable. */
const isLoki = (p: PanelJson) => p.datasource?.type === "loki";
/** The Prometheus panels: every panel but the Loki ones. */
function panelsOf(d: DashboardJson): PanelJson[] {
  return d.panels.flatMap((p) => (p.type === "row" ? (p.panels ?? []) : [p])).filter((p) => !isLoki(p));
}
function annotationExprsOf(d: DashboardJson): string[] {
  return (d.annotations?.list ?? []).flatMap((a) => [a.expr, a.target?.expr].filter((e) => e !== undefined));
}
/** Every query: panel targets and annotations. */
function exprsOf(d: DashboardJson): string[] {
  return [...panelsOf(d).flatMap((p) => (p.targets ?? []).map((t) => t.expr)), ...annotationExprsOf(d)];
}
describe("generated dashboards", () => {
  it("ships the three dashboards with stable, unique uids", () => {
    const uids = all.map(([, d]) => d.json.uid).sort();
    expect(uids).toEqual(["sitehost-exporter-health", "sitehost-fleet", "sitehost-site"]);
  });

  it("committed JSON is what the generator produces from dashboards/src (run npm run dashboards)", () => {
    for (const [file, text] of renderDashboards()) expect(committed.get(file)?.text, file).toBe(text);
  });

  it.each(all)("%s has no __inputs and no hard-coded datasource", (_file, { text, json }) => {
    expect(text).not.toContain("__inputs");
    expect(text).not.toMatch(/\$\{DS_/);
    const ds = json.templating.list.find((v) => v.name === "datasource");
    expect(ds).toMatchObject({ type: "datasource", query: "prometheus" });
    // Every datasource reference anywhere in the file is the variable.
    const uids = [...text.matchAll(/"uid":\s*"([^"]*)"/g)].map((m) => m[1]).filter((u) => u !== json.uid);
    expect(uids.length).toBeGreaterThan(0);
    // The Loki data source (the sites' logs) is a variable too.
    expect(new Set(uids.filter((u) => u !== "${loki_datasource}"))).toEqual(new Set(["${datasource}"]));
  });

  it.each(all)("%s: every panel and every query uses the datasource variable", (_file, { json }) => {
    const panels = panelsOf(json).filter((p) => p.type !== "row");
    expect(panels.length).toBeGreaterThan(5);
    for (const p of panels) {
      expect(p.datasource, p.title).toEqual({ type: "prometheus", uid: "${datasource}" });
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets ?? []) expect(t.datasource, `${p.title}: ${t.expr}`).toEqual(p.datasource);
    }
    for (const v of json.templating.list.filter((v) => v.type === "query")) {
      expect(v.datasource, v.name).toEqual({ type: "prometheus", uid: "${datasource}" });
    }
  });

  it.each(all)("%s: every panel has a title, a description and a unit; ids are unique", (_file, { json }) => {
    const ids = new Set<number>();
    for (const p of json.panels.flatMap((p) => [p, ...(p.panels ?? [])])) {
      expect(ids.has(p.id), `duplicate panel id ${p.id}`).toBe(false);
      ids.add(p.id);
      if (p.type === "row") continue;
      expect(p.title?.trim(), `panel ${p.id}`).toBeTruthy();
      expect(p.description?.trim().length ?? 0, p.title).toBeGreaterThan(20);
      expect(p.fieldConfig?.defaults?.unit, p.title).toBeTruthy();
    }
  });

  it.each(all)("%s: every rate/increase uses $__rate_interval", (_file, { json }) => {
    for (const expr of exprsOf(json)) {
      const fns = [...expr.matchAll(/\b(rate|irate|increase|delta|deriv|[a-z]+_over_time)\s*\(/g)].length;
      const ranges = [...expr.matchAll(/\[([^\]]*)\]/g)].map((m) => m[1]);
      expect(ranges.length, expr).toBe(fns);
      for (const r of ranges) expect(r, expr).toBe("$__rate_interval");
    }
  });

  it.each(all)("%s: every metric referenced is part of the documented contract", (_file, { json }) => {
    for (const expr of exprsOf(json)) {
      for (const s of selectors(expr)) expect(KNOWN.has(s.name), `${s.name} in ${expr}`).toBe(true);
    }
  });

  it("the site dashboard has a site variable and every per-site query selects it", () => {
    const site = all.find(([, d]) => d.json.uid === "sitehost-site")?.[1].json as DashboardJson;
    const v = site.templating.list.find((x) => x.name === "site");
    expect(v?.query).toBe(
      'label_values(sitehost_site_info{cluster=~"$cluster", job=~"$job", instance=~"$instance"}, site)',
    );
    for (const expr of exprsOf(site)) {
      for (const s of selectors(expr)) expect(s.matchers, expr).toContain('site="$site"');
    }
  });

  it("together the dashboards chart every per-site family of the contract, the site dashboard each one", () => {
    const site = all.find(([, d]) => d.json.uid === "sitehost-site")?.[1].json as DashboardJson;
    const used = new Set(exprsOf(site).flatMap((e) => selectors(e).map((s) => s.name)));
    const charted = (name: string) => used.has(name) || used.has(`${name}_bucket`);
    const missing = METRIC_FAMILIES.filter((f) => f.perSite && !charted(f.name)).map((f) => f.name);
    expect(missing).toEqual([]);
    const everywhere = new Set(
      all.flatMap(([, d]) => exprsOf(d.json).flatMap((e) => selectors(e).map((s) => s.name))),
    );
    const notCharted = [...KNOWN].filter(
      (n) =>
        n.startsWith("sitehost_") &&
        !n.endsWith("_sum") &&
        !n.endsWith("_count") &&
        !everywhere.has(n) &&
        !everywhere.has(`${n}_bucket`) &&
        // Recorded SLIs: the dashboards chart the burn-rate windows and the budget's period.
        !/^sitehost_site_slo:.*:increase(5m|30m|2h|1d)$/.test(n),
    );
    expect(notCharted).toEqual([]);
  });

  it("the site dashboard marks its changes and failed git deploys as annotations at their own time", () => {
    const site = all.find(([, d]) => d.json.uid === "sitehost-site")?.[1].json as DashboardJson;
    const annotations = site.annotations?.list ?? [];
    expect(annotations.map((a) => a.name)).toEqual(["Changes", "Failed git deploy"]);
    for (const a of annotations) {
      expect(a.datasource).toEqual({ type: "prometheus", uid: "${datasource}" });
      expect(a.useValueForTime).toBe(true);
      expect(a.target?.expr).toBe(a.expr);
    }
    // Grafana reads the value as milliseconds.
    const [changes, failed] = annotations;
    expect(changes?.expr).toMatch(
      /^sitehost_site_change_timestamp_seconds\{[^}]*site="\$site"[^}]*\} \* 1000$/,
    );
    expect(failed?.expr).toMatch(
      /^sitehost_site_git_last_deploy_timestamp_seconds\{[^}]*\} \* 1000 .* == 0$/,
    );
  });

  it("log-derived counters are charted on the site dashboard as rates by status class and severity", () => {
    const site = all.find(([, d]) => d.json.uid === "sitehost-site")?.[1].json as DashboardJson;
    const exprs = exprsOf(site);
    expect(
      exprs.some((e) => /sum by \(status_class\) \(rate\(sitehost_site_http_responses_total\{/.test(e)),
    ).toBe(true);
    expect(
      exprs.some((e) => /sum by \(severity\) \(rate\(sitehost_site_php_log_entries_total\{/.test(e)),
    ).toBe(true);
  });
});
