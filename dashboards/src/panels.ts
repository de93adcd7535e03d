/**
 * Panel helpers: one call per kind of panel, with what every Sitehost panel of that kind shares
 * (datasource, refIds, last value, horizontal bars, value words, links to the site dashboard), so a
 * dashboard reads as a list of what each panel shows.
 */
import type * as cog from "@grafana/grafana-foundation-sdk/cog";
import { PanelBuilder as BarGaugeBuilder } from "@grafana/grafana-foundation-sdk/bargauge";
import {
  BarGaugeDisplayMode,
  BigValueTextMode,
  VizOrientation,
  type DataSourceRef,
} from "@grafana/grafana-foundation-sdk/common";
import {
  MappingType,
  RowBuilder,
  type DashboardBuilder,
  type DashboardLink,
  type DataTransformerConfig,
  type Panel,
  type ThresholdsConfig,
  type ValueMapping,
} from "@grafana/grafana-foundation-sdk/dashboard";
import { PanelBuilder as GaugeBuilder } from "@grafana/grafana-foundation-sdk/gauge";
import type { DataqueryBuilder } from "@grafana/grafana-foundation-sdk/prometheus";
import { PanelBuilder as StatBuilder } from "@grafana/grafana-foundation-sdk/stat";
import { PanelBuilder as TableBuilder } from "@grafana/grafana-foundation-sdk/table";
import { PanelBuilder as TimeSeriesBuilder } from "@grafana/grafana-foundation-sdk/timeseries";
import { DS, lastValue, organize, siteDetailLink, upThresholds } from "./common.js";

/** What every panel builder of the SDK offers and the helpers rely on. */
interface PanelLike<T> extends cog.Builder<Panel> {
  title(title: string): T;
  description(description: string): T;
  datasource(datasource: DataSourceRef): T;
  unit(unit: string): T;
  withTarget(target: cog.Builder<cog.Dataquery>): T;
  span(w: number): T;
  height(h: number): T;
  min(min: number): T;
  max(max: number): T;
  decimals(decimals: number): T;
  thresholds(thresholds: cog.Builder<ThresholdsConfig>): T;
  mappings(mappings: ValueMapping[]): T;
  dataLinks(links: cog.Builder<DashboardLink>[]): T;
  interval(interval: string): T;
}

export interface PanelOpts {
  title: string;
  /** What the panel shows and how to read it (dashboard-linter wants one on every panel). */
  description: string;
  unit: string;
  targets: DataqueryBuilder[];
  /** Width in grid columns (24 = full width); 12 by default. */
  w?: number;
  /** Height in grid rows; 8 by default. */
  h?: number;
  min?: number;
  max?: number;
  decimals?: number;
  thresholds?: cog.Builder<ThresholdsConfig>;
  /** Values shown as words: value → [text, colour]. */
  words?: Record<string, readonly [string, string?]>;
  /** A data link from each value to the site detail dashboard, where the panel exposes the site name. */
  siteLink?: "label" | "column";
  /**
   * The panel's minimum interval: `$__rate_interval` is at least this, for counters that move less
   * often than every scrape (the traffic counters move when a site is polled).
   */
  minInterval?: string;
}

/** Fills in what every panel must have, then the options of `o` the panel kind takes. */
function build<T extends PanelLike<T>>(b: T, o: PanelOpts): T {
  b.title(o.title).description(o.description).datasource(DS).unit(o.unit);
  o.targets.forEach((t, i) => b.withTarget(t.refId(String.fromCharCode(65 + i))));
  b.span(o.w ?? 12).height(o.h ?? 8);
  if (o.siteLink) b.dataLinks([siteDetailLink(o.siteLink)]);
  if (o.words) b.mappings(words(o.words));
  if (o.min !== undefined) b.min(o.min);
  if (o.max !== undefined) b.max(o.max);
  if (o.decimals !== undefined) b.decimals(o.decimals);
  if (o.thresholds) b.thresholds(o.thresholds);
  if (o.minInterval) b.interval(o.minInterval);
  return b;
}

/** Value mappings that show each value as a word, in a colour when given. */
export function words(texts: Record<string, readonly [string, string?]>): ValueMapping[] {
  const options = Object.fromEntries(
    Object.entries(texts).map(([value, [text, color]], index) => [
      value,
      color === undefined ? { text, index } : { text, color, index },
    ]),
  );
  return [{ type: MappingType.ValueToText, options }];
}

export function timeSeries(o: PanelOpts): TimeSeriesBuilder {
  return build(new TimeSeriesBuilder(), o);
}

export interface StatOpts extends PanelOpts {
  /** What the stat prints: the value (default), the series name only, or both. */
  show?: "value" | "name" | "both";
}

/** A stat of each series' last value. */
export function stat(o: StatOpts): StatBuilder {
  const b = build(new StatBuilder(), o).reduceOptions(lastValue());
  if (o.show === "name") b.textMode(BigValueTextMode.Name);
  if (o.show === "both") b.textMode(BigValueTextMode.ValueAndName);
  return b;
}

/** A count of things that want attention (`... or vector(0)`): orange-red from 1, green at 0. */
export function problemCount(o: PanelOpts): StatBuilder {
  return stat({ thresholds: upThresholds(1, 1), ...o });
}

export function gauge(o: PanelOpts): GaugeBuilder {
  return build(new GaugeBuilder(), o).reduceOptions(lastValue());
}

export interface BarGaugeOpts extends PanelOpts {
  /** Gradient bars (rankings across sites) instead of plain ones. */
  gradient?: boolean;
}

/** Horizontal bars of each series' last value. */
export function barGauge(o: BarGaugeOpts): BarGaugeBuilder {
  return build(new BarGaugeBuilder(), o)
    .reduceOptions(lastValue())
    .displayMode(o.gradient ? BarGaugeDisplayMode.Gradient : BarGaugeDisplayMode.Basic)
    .orientation(VizOrientation.Horizontal);
}

/** A ranking of sites (top or bottom ten), each bar linking to its site detail dashboard. */
export function siteRanking(o: PanelOpts): BarGaugeBuilder {
  return barGauge({ w: 12, h: 10, siteLink: "label", gradient: true, ...o });
}

export interface TableOpts extends PanelOpts {
  /** The value column's name and the columns to hide besides the bookkeeping ones (organize). */
  columns?: { value: string; hide?: string[] };
  transformations?: DataTransformerConfig[];
}

/** A table of instant queries. */
export function table(o: TableOpts): TableBuilder {
  const b = build(new TableBuilder(), o);
  for (const t of o.transformations ?? []) b.withTransformation(t);
  if (o.columns) b.withTransformation(organize(o.columns.value, o.columns.hide));
  return b;
}

/** A row and the panels under it, in layout order. */
export function section(d: DashboardBuilder, title: string, panels: cog.Builder<Panel>[]): void {
  d.withRow(new RowBuilder(title));
  for (const p of panels) d.withPanel(p);
}

/**
 * The least window of rate() over the traffic counters: they move when a site is polled (busy live
 * sites every 5 minutes by default, the others up to every 15), so a shorter window would see steps.
 */
const TRAFFIC_MIN_INTERVAL = "15m";

/** The rate of a traffic counter, over the panel's interval (at least TRAFFIC_MIN_INTERVAL). */
export function trafficRate(metric: string, selector: string): string {
  return `rate(${metric}${selector}[$__rate_interval])`;
}

/** A time series of traffic counters' rates. */
export function trafficSeries(o: PanelOpts): TimeSeriesBuilder {
  return timeSeries({ minInterval: TRAFFIC_MIN_INTERVAL, ...o });
}

/** A ranking of sites by a traffic counter's rate. */
export function trafficRanking(o: PanelOpts): BarGaugeBuilder {
  return siteRanking({ minInterval: TRAFFIC_MIN_INTERVAL, ...o });
}
