/**
 * Shared building blocks for the dashboards: queries, thresholds, links, table columns, panel ids and
 * the dashboard every Sitehost dashboard starts from. Variables and selectors: variables.ts; panels:
 * panels.ts.
 */
import {
  DashboardBuilder,
  DashboardCursorSync,
  DashboardLinkBuilder,
  DashboardLinkType,
  ThresholdsConfigBuilder,
  ThresholdsMode,
  type DataTransformerConfig,
  type Panel,
  type Dashboard,
  type RowPanel,
  type Threshold,
} from "@grafana/grafana-foundation-sdk/dashboard";
import { DataqueryBuilder, PromQueryFormat } from "@grafana/grafana-foundation-sdk/prometheus";
import { ReduceDataOptionsBuilder } from "@grafana/grafana-foundation-sdk/common";
import { clusterVariable, datasourceVariable, DS, instanceVariable, jobVariable } from "./variables.js";

export { DS, sel } from "./variables.js";

/** Seconds in a day (thresholds of ages and times left). */
export const DAY = 86400;

export interface QueryOpts {
  legend?: string;
  /** Instant query in table format (tables, bar gauges of "now"). */
  table?: boolean;
  instant?: boolean;
  /** Ask for the series' exemplars (the log records behind duration buckets and 5xx counts). */
  exemplar?: boolean;
}

export function q(expr: string, opts: QueryOpts = {}): DataqueryBuilder {
  const b = new DataqueryBuilder().datasource(DS).expr(expr);
  if (opts.legend !== undefined) b.legendFormat(opts.legend);
  if (opts.exemplar) b.exemplar(true);
  if (opts.table) b.instant().format(PromQueryFormat.Table);
  else if (opts.instant) b.instant();
  else b.range();
  return b;
}

/** The "Sitehost" drop-down at the top of each dashboard: the other dashboards, keeping time and variables. */
export function sitehostLinks(): DashboardLinkBuilder {
  return new DashboardLinkBuilder("Sitehost dashboards")
    .type(DashboardLinkType.Dashboards)
    .tags(["sitehost"])
    .asDropdown(true)
    .includeVars(true)
    .keepTime(true);
}

/**
 * A data link from a per-site value to the site detail dashboard. `from` is how the panel exposes the
 * site name: a series label (bar gauges, stats) or a table column.
 */
export function siteDetailLink(from: "label" | "column"): DashboardLinkBuilder {
  const site = from === "label" ? "${__field.labels.site}" : "${__data.fields.site}";
  return new DashboardLinkBuilder("Site detail: " + site).url(
    "/d/sitehost-site/sitehost-site-detail?${datasource:queryparam}&${cluster:queryparam}&${job:queryparam}&${instance:queryparam}" +
      `&var-site=${site}&\${__url_time_range}`,
  );
}

export function thresholds(steps: Threshold[]): ThresholdsConfigBuilder {
  return new ThresholdsConfigBuilder().mode(ThresholdsMode.Absolute).steps(steps);
}

/** Green below `warn`, orange from `warn`, red from `crit`. */
export function upThresholds(warn: number, crit: number): ThresholdsConfigBuilder {
  return thresholds([
    { value: null, color: "green" },
    { value: warn, color: "orange" },
    { value: crit, color: "red" },
  ]);
}

/** Red below `crit`, orange below `warn`, green above. */
export function downThresholds(crit: number, warn: number): ThresholdsConfigBuilder {
  return thresholds([
    { value: null, color: "red" },
    { value: crit, color: "orange" },
    { value: warn, color: "green" },
  ]);
}

/** Hides the bookkeeping columns of an instant table query and names the value column. */
export function organize(valueName: string, hide: string[] = []): DataTransformerConfig {
  const excludeByName: Record<string, boolean> = { Time: true, __name__: true, job: true, instance: true };
  for (const h of hide) excludeByName[h] = true;
  return { id: "organize", options: { excludeByName, renameByName: { Value: valueName } } };
}

/**
 * Panel ids are assigned here, in layout order, so they stay stable as long
 * as the layout does (Grafana links to panels by id).
 */
export function finalize(d: Dashboard): Dashboard {
  // The SDK marks every link "inControlsMenu", which hides dashboard links in newer Grafana; the default
  // placement (above the panels) is what we want.
  for (const l of d.links ?? []) delete l.placement;
  // The same for annotation toggles: shown above the panels, next to the variables.
  for (const a of d.annotations?.list ?? []) delete a.placement;
  let id = 1;
  const panels = (d.panels ?? []) as Array<Panel | RowPanel>;
  for (const p of panels) {
    p.id = id++;
    if (p.type === "row") for (const inner of (p as RowPanel).panels) inner.id = id++;
    else for (const l of (p as Panel).fieldConfig?.defaults?.links ?? []) delete l.placement;
  }
  return d;
}

/** Show the last non-null value (stat and gauge panels). */
export function lastValue(): ReduceDataOptionsBuilder {
  return new ReduceDataOptionsBuilder().calcs(["lastNotNull"]).values(false);
}

/**
 * What every Sitehost dashboard shares: tags, time, crosshair, links, the variables of variables.ts, and
 * `editable: false` (provisioned dashboards are changed in dashboards/src, not in Grafana).
 */
export function sitehostDashboard(o: {
  title: string;
  uid: string;
  description: string;
  from: string;
  refresh: string;
}): DashboardBuilder {
  return new DashboardBuilder(o.title)
    .uid(o.uid)
    .description(o.description)
    .tags(["sitehost", "sitehost-exporter"])
    .time({ from: o.from, to: "now" })
    .refresh(o.refresh)
    .tooltip(DashboardCursorSync.Crosshair)
    .readonly()
    .link(sitehostLinks())
    .withVariable(datasourceVariable())
    .withVariable(clusterVariable())
    .withVariable(jobVariable())
    .withVariable(instanceVariable());
}
