/**
 * The metric store's parts: a family's state, a (collector, site) entry, what the store derives from
 * a sample, and an entry's values replaced in place (`updateInPlace`).
 */
import type { ExpositionFormat } from "./openMetrics.js";
import { escapeLabelValue } from "./render.js";
import type { MetricFamily, Sample } from "./sample.js";
import type { Layout } from "./layouts.js";
import { lineCount, type LiveMarks, type Marks, type ShapeTable } from "./storedLines.js";

export interface FamilyState {
  readonly family: MetricFamily;
  /** Position in name order; what entries refer to. */
  readonly index: number;
  readonly header: string;
  /** The header in OpenMetrics (a counter's family named without `_total`). */
  readonly omHeader: string;
  /** `name{`, the start of every line that carries labels. */
  readonly head: string;
  /** What rendered lines start with, as bytes, by line kind (storedLines.ts). */
  readonly lineHeads: readonly Buffer[];
  /** One copy of each shape this family's entries share. */
  readonly shapes: ShapeTable;
  /** Collectors that have stored lines of this family (rendering visits only their entries). */
  readonly producers: Set<string>;
  /** Entries holding lines of this family; no lines, no header. */
  entries: number;
  /** Entries whose lines of this family carry exemplars (OpenMetrics renders its own body then). */
  exemplarEntries: number;
  /** The headers as gzip members, made once. */
  headerGzip: Record<ExpositionFormat, Buffer | undefined>;
  /** This family's series lines as gzip members (see gzipMembers.ts); dropped when the family changes. */
  gzip: Buffer[] | undefined;
  /** The same lines with their exemplars, for OpenMetrics (only while some entry has exemplars). */
  omGzip: Buffer[] | undefined;
}

/**
 * One (collector, site) entry: its layout, and the values of all its lines, family after family.
 */
export interface Entry {
  sitePart: string;
  layout: Layout;
  values: number[];
  /**
   * Per family, when any of its lines has an exemplar: each line's exemplar as text ("" for none),
   * one per line of its shape, joined by newlines; or what writes them (LiveMarks).
   */
  marks?: Array<Marks | undefined>;
}

/**
 * A writer's live exemplars for the entry's lines `from` … `from + count - 1`, one family's (asked
 * once per family when the entry is stored), or undefined for none.
 */
export type LiveExemplars = (family: MetricFamily, from: number, count: number) => LiveMarks | undefined;

/** `site_id="…",site="…"` as renderSample writes them, or "" when a sample lacks them. */
export function sitePartOf<N extends string>(family: MetricFamily<N>, sample: Sample<N>): string {
  const { site_id: id, site } = sample.labels;
  if (!family.perSite || id === undefined || site === undefined) return "";
  return `site_id="${escapeLabelValue(id)}",site="${escapeLabelValue(site)}"`;
}

/** Whether OpenMetrics allows an exemplar on any line of the family (see exemplarAllowed). */
export function exemplarsAllowed(family: MetricFamily): boolean {
  return family.type === "counter" || family.type === "histogram";
}

/** Where OpenMetrics allows an exemplar: a counter's series, a histogram's buckets. */
export function exemplarAllowed(family: MetricFamily, sample: Pick<Sample<string>, "suffix">): boolean {
  return exemplarsAllowed(family) && (family.type !== "histogram" || sample.suffix === "_bucket");
}

/** Where the values of the entry's `at`-th family start. */
export function valuesFrom(entry: Entry, at: number): number {
  let from = 0;
  for (let i = 0; i < at; i++) from += lineCount(entry.layout.shapes[i] as string);
  return from;
}

export function sameValues(
  a: readonly number[],
  from: number,
  b: readonly number[],
  to: number,
  n: number,
): boolean {
  for (let i = 0; i < n; i++) if (!Object.is(a[from + i], b[to + i])) return false;
  return true;
}

/** The family's rendered lines are out of date. */
export function invalidate(state: FamilyState): void {
  state.gzip = undefined;
  state.omGzip = undefined;
}

/**
 * The entry's values replaced in place by `values`, one per line in the entry's order (family after
 * family, as its last full replace stored them): nothing is rendered and no entry is made anew. With
 * `exemplarsMoved`, its live exemplars have changed (their families' OpenMetrics lines are out of
 * date). The families whose lines changed are invalidated; true when any did. The caller has checked
 * that the count of values is the entry's.
 */
export function updateInPlace(
  entry: Entry,
  states: readonly FamilyState[],
  values: readonly number[],
  exemplarsMoved: boolean,
): boolean {
  const { families, shapes } = entry.layout;
  let changed = false;
  let from = 0;
  for (let i = 0; i < families.length; i++) {
    const state = states[families[i] as number] as FamilyState;
    const n = lineCount(shapes[i] as string);
    if (!sameValues(entry.values, from, values, from, n)) {
      for (let k = from; k < from + n; k++) entry.values[k] = values[k] as number;
      invalidate(state);
      changed = true;
    }
    if (exemplarsMoved && typeof entry.marks?.[i] === "object") {
      state.omGzip = undefined;
      changed = true;
    }
    from += n;
  }
  return changed;
}
