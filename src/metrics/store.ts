/**
 * The metric store: samples keyed by (collector, site). A collector run
 * replaces exactly its own samples for the sites it covered, so a removed
 * domain or a deleted site leaves no ghost series.
 *
 * Memory is the product's limit at thousands of sites (about 70 series each), so
 * a site's lines are kept as label text shared with every other site that has the
 * same labels, and the site's values apart (storedLines.ts); the metric name and
 * `site_id="…",site="…"` are put back when a family is rendered (only families
 * that changed are rendered, see `gzipParts`).
 */
import type { MetricName } from "./families.js";
import type { MetricFamily, Sample } from "./sample.js";
import { GzipMembers, gzipText, writtenText, type ChunkWriter } from "./gzipMembers.js";
import { Layouts } from "./layouts.js";
import { renderFamilyHeader, renderSample } from "./render.js";
import {
  detached,
  lineCount,
  lineHeads,
  ShapeTable,
  SUFFIX_MARKS,
  writeStoredLines,
  type Marks,
} from "./storedLines.js";
import {
  exemplarAllowed,
  exemplarsAllowed,
  invalidate,
  sameValues,
  sitePartOf,
  updateInPlace,
  valuesFrom,
  type Entry,
  type LiveExemplars,
  type FamilyState,
} from "./storeEntry.js";
import { openMetricsHeader, renderExemplar, type ExpositionFormat } from "./openMetrics.js";
import { globToRegExp } from "../config/glob.js";

const GLOBAL = "\u0000global";
/** An entry's site labels as bytes while its lines are rendered (renders run one at a time). */
let sitePartBytes = Buffer.alloc(256);

/**
 * `N`: the family names it keeps, taken from the families it is built with (METRIC_FAMILIES: every
 * published name), so samples of an unknown family do not compile.
 */
export class MetricStore<N extends string = MetricName> {
  private readonly byName = new Map<string, FamilyState>();
  /** In name order. */
  private readonly families: FamilyState[];
  /** collector → site id (or GLOBAL) → entry */
  private readonly collectors = new Map<string, Map<string, Entry>>();
  /** site id → collectors with an entry for it (a few each: an array is a third of a Set's size) */
  private readonly siteCollectors = new Map<string, string[]>();
  /** site id → its current `sitePart`, so that a site's entries share one string */
  private readonly siteParts = new Map<string, string>();
  private readonly layouts = new Layouts();
  private readonly exclude: RegExp[];
  private readonly listeners: Array<() => void> = [];
  private readonly heldWriters: Array<() => void> = [];
  private versionCounter = 0;

  constructor(families: readonly MetricFamily<N>[], opts: { exclude?: string[] } = {}) {
    this.families = [...families]
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((family, index) => ({
        family,
        index,
        header: renderFamilyHeader(family),
        omHeader: openMetricsHeader(family.name, family.help, family.type),
        head: `${family.name}{`,
        lineHeads: lineHeads(family.name),
        shapes: new ShapeTable(),
        producers: new Set<string>(),
        entries: 0,
        exemplarEntries: 0,
        headerGzip: { text: undefined, openmetrics: undefined },
        gzip: undefined,
        omGzip: undefined,
      }));
    for (const state of this.families) this.byName.set(state.family.name, state);
    this.exclude = (opts.exclude ?? []).map((p) => globToRegExp(p));
  }

  get version(): number {
    return this.versionCounter;
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /**
   * A writer that holds changes back (one that would otherwise replace a site's samples many times a
   * second) and publishes them when asked: before every read of the store.
   */
  onRead(publishHeld: () => void): void {
    this.heldWriters.push(publishHeld);
  }

  /** Have held-back changes published; every read does this first, so no reader sees them late. */
  settle(): void {
    for (const publish of this.heldWriters) publish();
  }

  isExcluded(metricName: string): boolean {
    return this.exclude.some((re) => re.test(metricName));
  }

  /** True when every family the collector produces is excluded: then it need not be fetched at all. */
  collectorFullyExcluded(collector: string): boolean {
    const own = this.families.filter((f) => f.family.collector === collector);
    return own.length > 0 && own.every((f) => this.isExcluded(f.family.name));
  }

  /**
   * The site's samples of `collector`, replacing those it had. `live`: exemplars the writer keeps
   * itself for lines whose samples carry none (see LiveMarks), asked per family.
   */
  replaceSite(collector: string, siteId: string, samples: readonly Sample<N>[], live?: LiveExemplars): void {
    if (this.replace(collector, siteId, samples, live)) this.changed();
  }

  /**
   * The site's values of `collector` replaced in place, one per line in the order of the samples its
   * last `replaceSite` stored, for a writer that publishes the same series again and again (the
   * log-derived counts, at every read of the store): nothing is rendered. `exemplarsMoved`: its live
   * exemplars changed. False, and nothing changed, when the site has no such entry or the count of
   * values is not its count of lines; the writer then calls `replaceSite`.
   */
  updateSiteValues(
    collector: string,
    siteId: string,
    values: readonly number[],
    exemplarsMoved = false,
  ): boolean {
    const entry = this.collectors.get(collector)?.get(siteId);
    if (!entry || entry.values.length !== values.length) return false;
    if (updateInPlace(entry, this.families, values, exemplarsMoved)) this.changed();
    return true;
  }

  /** How many values (series) the site's entry of `collector` holds, or undefined without one. */
  storedValueCount(collector: string, siteId: string): number | undefined {
    return this.collectors.get(collector)?.get(siteId)?.values.length;
  }

  replaceGlobal(collector: string, samples: readonly Sample<N>[]): void {
    if (this.replace(collector, GLOBAL, samples)) this.changed();
  }

  removeSite(siteId: string): void {
    const collectors = this.siteCollectors.get(siteId);
    if (!collectors) return;
    let changed = false;
    for (const collector of [...collectors]) changed = this.drop(collector, siteId) || changed;
    this.siteCollectors.delete(siteId);
    this.siteParts.delete(siteId);
    if (changed) this.changed();
  }

  /** Drop every collector's samples of sites not in `keep`. */
  retainSites(keep: ReadonlySet<string>): void {
    for (const siteId of [...this.siteCollectors.keys()]) if (!keep.has(siteId)) this.removeSite(siteId);
  }

  /** Drop every series of every collector (the exporter stopped collecting: it stands by). */
  clear(): void {
    let changed = false;
    for (const [collector, entries] of this.collectors) {
      for (const scope of [...entries.keys()]) changed = this.drop(collector, scope) || changed;
    }
    if (changed) this.changed();
  }

  /** Site ids that currently have samples (of any collector). */
  siteIds(): string[] {
    this.settle();
    return [...this.siteCollectors.keys()];
  }

  /** The exposition text of every family (for `once`; the daemon serves `gzipParts`), without `# EOF`. */
  render(format: ExpositionFormat = "text"): string {
    this.settle();
    let text = "";
    for (const state of this.families) {
      if (state.entries === 0) continue;
      text += (format === "text" ? state.header : state.omHeader) + this.renderLines(state, format);
    }
    return text;
  }

  /**
   * The exposition as gzip members, a header and the series lines per family, in name order. A gzip
   * stream may hold several members and decompresses to their concatenation, so a change to one
   * family (traffic, every minute) re-renders and re-compresses only that family. Both formats share
   * the lines of a family without exemplars; the headers are compressed once.
   */
  gzipParts(format: ExpositionFormat = "text"): Buffer[] {
    this.settle();
    const parts: Buffer[] = [];
    for (const state of this.families) {
      if (state.entries === 0) continue;
      parts.push((state.headerGzip[format] ??= gzipText(format === "text" ? state.header : state.omHeader)));
      if (format === "openmetrics" && state.exemplarEntries > 0) {
        parts.push(...(state.omGzip ??= this.zipLines(state, format)));
      } else parts.push(...(state.gzip ??= this.zipLines(state, "text")));
    }
    return parts;
  }

  private renderLines(state: FamilyState, format: ExpositionFormat): string {
    return writtenText((out) => this.eachLines(state, format, out));
  }

  private zipLines(state: FamilyState, format: ExpositionFormat): Buffer[] {
    const members = new GzipMembers();
    try {
      this.eachLines(state, format, members.writer);
      return members.finish();
    } finally {
      members.writer.finish(); // a render that threw leaves the buffer to the next one
    }
  }

  /** The family's lines, entry by entry. */
  private eachLines(state: FamilyState, format: ExpositionFormat, out: ChunkWriter): void {
    // A histogram's live exemplars go on its buckets only.
    const buckets = state.family.type === "histogram";
    let sitePart = "";
    let sitePartLength = 0;
    for (const collector of state.producers) {
      for (const entry of this.collectors.get(collector)?.values() ?? []) {
        const at = entry.layout.families.indexOf(state.index);
        if (at < 0) continue;
        // The entry's site labels as bytes, once per entry (a site's entries share one string).
        if (entry.sitePart !== sitePart) {
          sitePart = entry.sitePart;
          if (sitePartBytes.length < 3 * sitePart.length) sitePartBytes = Buffer.alloc(6 * sitePart.length);
          sitePartLength = sitePartBytes.write(sitePart, 0, "utf8");
        }
        const marks = format === "openmetrics" ? entry.marks?.[at] : undefined;
        const shape = state.shapes.compiled(entry.layout.shapes[at] as string);
        const from = valuesFrom(entry, at);
        writeStoredLines(
          out,
          shape,
          entry.values,
          from,
          state.lineHeads,
          sitePartBytes,
          sitePartLength,
          marks,
          buckets,
        );
      }
    }
  }

  /** Stores the entry's new lines; true when the exposition text changed. */
  private replace(
    collector: string,
    scope: string,
    samples: readonly Sample<N>[],
    live?: LiveExemplars,
  ): boolean {
    /** Per family, series → its shape line and value. */
    const byFamily = new Map<FamilyState, Map<string, { shape: string; value: number }>>();
    /** Per family, label set → the exemplar to append to that line. */
    const exemplars = new Map<FamilyState, Map<string, string>>();
    let sitePart: string | undefined;
    for (const sample of samples) {
      const state = this.byName.get(sample.name);
      if (!state || this.isExcluded(sample.name)) continue;
      const line = renderSample(state.family, sample);
      const part = sitePartOf(state.family, sample);
      if (part !== "") sitePart ??= part;
      const prefix = sample.suffix ? `${state.family.name}${sample.suffix}{${part}` : state.head + part;
      const mark = sample.suffix ? SUFFIX_MARKS[sample.suffix] : "";
      const space = line.lastIndexOf(" ");
      const shape =
        part !== "" && part === sitePart && line.startsWith(prefix)
          ? mark + line.slice(prefix.length, space + 1)
          : line.slice(0, space + 1);
      let lines = byFamily.get(state);
      if (!lines) byFamily.set(state, (lines = new Map()));
      // Same label set twice: the last one wins (no duplicate series).
      const series = line.slice(0, space);
      lines.set(series, { shape, value: sample.value });
      const exemplar =
        sample.exemplar && exemplarAllowed(state.family, sample) ? renderExemplar(sample.exemplar) : "";
      let marks = exemplars.get(state);
      if (exemplar !== "") {
        if (!marks) exemplars.set(state, (marks = new Map()));
        marks.set(series, exemplar);
      } else marks?.delete(series);
    }

    let entries = this.collectors.get(collector);
    const previous = entries?.get(scope);
    if (byFamily.size === 0) return previous ? this.drop(collector, scope) : false;

    if (sitePart && scope !== GLOBAL) {
      const known = this.siteParts.get(scope);
      if (known === sitePart) sitePart = known;
      else this.siteParts.set(scope, sitePart);
    }
    const states = [...byFamily.keys()];
    // Arrays of exact size: pushing would reserve 17 slots for entries that mostly hold one or two.
    const values: number[] = [];
    const shapes = states.map((state) => {
      let shape = "";
      for (const line of (byFamily.get(state) as Map<string, { shape: string; value: number }>).values()) {
        shape += `${line.shape}\n`;
        values.push(line.value);
      }
      return state.shapes.shared(shape);
    });
    const layout = this.layouts.of(
      collector,
      previous?.layout,
      states.map((state) => state.index),
      shapes,
    );
    const next: Entry = { sitePart: sitePart ?? "", layout, values: values.slice() };
    if (exemplars.size > 0) {
      next.marks = states.map((state) => {
        const marks = exemplars.get(state);
        if (!marks?.size) return undefined;
        return [...(byFamily.get(state) as Map<string, unknown>).keys()]
          .map((series) => marks.get(series) ?? "")
          .join("\n");
      });
    } else if (live) {
      let from = 0;
      next.marks = states.map((state, i) => {
        const count = lineCount(shapes[i] as string);
        const marks = exemplarsAllowed(state.family) ? live(state.family, from, count) : undefined;
        from += count;
        return marks;
      });
    }

    let changed = false;
    const renamed = previous !== undefined && previous.sitePart !== next.sitePart;
    for (let i = 0; i < states.length; i++) {
      const state = states[i] as FamilyState;
      const at = previous ? previous.layout.families.indexOf(state.index) : -1;
      if (at < 0) {
        state.entries += 1;
        state.producers.add(collector);
      }
      const marked = next.marks?.[i];
      const hadMarked = at >= 0 ? previous?.marks?.[at] : undefined;
      state.exemplarEntries += (marked !== undefined ? 1 : 0) - (hadMarked !== undefined ? 1 : 0);
      if (marked !== hadMarked) {
        if (typeof marked === "string") (next.marks as Marks[])[i] = detached(marked);
        state.omGzip = undefined;
        changed = true;
      } else if (marked !== undefined) (next.marks as Marks[])[i] = hadMarked as Marks;
      const shape = layout.shapes[i] as string;
      const same =
        previous !== undefined &&
        at >= 0 &&
        previous.layout.shapes[at] === shape &&
        sameValues(
          previous.values,
          valuesFrom(previous, at),
          next.values,
          valuesFrom(next, i),
          lineCount(shape),
        );
      if (same && !renamed) continue;
      invalidate(state);
      changed = true;
    }
    for (const [at, index] of (previous?.layout.families ?? []).entries()) {
      if (layout.families.includes(index)) continue;
      const state = this.families[index] as FamilyState;
      state.entries -= 1;
      if (previous?.marks?.[at] !== undefined) state.exemplarEntries -= 1;
      invalidate(state);
      changed = true;
    }

    if (!entries) this.collectors.set(collector, (entries = new Map()));
    entries.set(scope, next);
    if (scope !== GLOBAL) {
      const collectors = this.siteCollectors.get(scope);
      if (!collectors) this.siteCollectors.set(scope, [collector]);
      else if (!collectors.includes(collector)) collectors.push(collector);
    }
    return changed;
  }

  /** Removes one entry; true when it had lines. */
  private drop(collector: string, scope: string): boolean {
    const entries = this.collectors.get(collector);
    const entry = entries?.get(scope);
    if (!entries || !entry) return false;
    entries.delete(scope);
    for (const [at, index] of entry.layout.families.entries()) {
      const state = this.families[index] as FamilyState;
      state.entries -= 1;
      if (entry.marks?.[at] !== undefined) state.exemplarEntries -= 1;
      invalidate(state);
    }
    if (scope !== GLOBAL) {
      const collectors = this.siteCollectors.get(scope);
      const at = collectors?.indexOf(collector) ?? -1;
      if (at >= 0) collectors?.splice(at, 1);
      if (collectors?.length === 0) {
        this.siteCollectors.delete(scope);
        this.siteParts.delete(scope);
      }
    }
    return entry.layout.families.length > 0;
  }

  private changed(): void {
    this.versionCounter += 1;
    for (const listener of this.listeners) listener();
  }
}
