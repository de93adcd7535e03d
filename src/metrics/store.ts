/**
 * The metric store: samples keyed by (collector, site). A collector run
 * replaces exactly its own samples for the sites it covered, so a removed
 * domain or a deleted site leaves no ghost series. Series lines are rendered
 * once, when stored.
 */
import type { MetricFamily, Sample } from "./sample.js";
import { gzipSync } from "node:zlib";
import { renderFamilyHeader, renderSample } from "./render.js";
import { globToRegExp } from "../config/glob.js";

const GLOBAL = "\u0000global";

interface FamilyState {
  family: MetricFamily;
  /** entry key (collector|site) → rendered lines of that entry for this family */
  entries: Map<string, string>;
  /** This family's text as one gzip member; dropped when the family changes. */
  gzip: Buffer | undefined;
}

export class MetricStore {
  private readonly families = new Map<string, FamilyState>();
  /** entry key → families it currently has lines in */
  private readonly entryFamilies = new Map<string, Set<string>>();
  private readonly siteEntries = new Map<string, Set<string>>();
  private readonly exclude: RegExp[];
  private readonly listeners: Array<() => void> = [];
  private versionCounter = 0;
  private readonly sortedNames: string[];

  constructor(families: readonly MetricFamily[], opts: { exclude?: string[] } = {}) {
    for (const family of families)
      this.families.set(family.name, { family, entries: new Map(), gzip: undefined });
    this.exclude = (opts.exclude ?? []).map((p) => globToRegExp(p));
    this.sortedNames = [...this.families.keys()].sort();
  }

  get version(): number {
    return this.versionCounter;
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  isExcluded(metricName: string): boolean {
    return this.exclude.some((re) => re.test(metricName));
  }

  /** True when every family the collector produces is excluded: then it need not be fetched at all. */
  collectorFullyExcluded(collector: string): boolean {
    const own = [...this.families.values()].filter((f) => f.family.collector === collector);
    return own.length > 0 && own.every((f) => this.isExcluded(f.family.name));
  }

  replaceSite(collector: string, siteId: string, samples: readonly Sample[]): void {
    const key = `${collector}|${siteId}`;
    let keys = this.siteEntries.get(siteId);
    if (!keys) this.siteEntries.set(siteId, (keys = new Set()));
    keys.add(key);
    this.replace(key, samples);
  }

  replaceGlobal(collector: string, samples: readonly Sample[]): void {
    this.replace(`${collector}|${GLOBAL}`, samples);
  }

  removeSite(siteId: string): void {
    const keys = this.siteEntries.get(siteId);
    if (!keys) return;
    this.siteEntries.delete(siteId);
    let changed = false;
    for (const key of keys) changed = this.drop(key) || changed;
    if (changed) this.changed();
  }

  /** Drop every collector's samples of sites not in `keep`. */
  retainSites(keep: ReadonlySet<string>): void {
    for (const siteId of [...this.siteEntries.keys()]) if (!keep.has(siteId)) this.removeSite(siteId);
  }

  /** Site ids that currently have samples (of any collector). */
  siteIds(): string[] {
    return [...this.siteEntries.keys()];
  }

  /**
   * The exposition text of every family. Series lines are rendered once, when a
   * collector stores them; this only joins them. Nothing else is cached here, so
   * memory holds each line once; `gzipParts` keeps the compressed families.
   */
  render(): string {
    const parts: string[] = [];
    for (const name of this.sortedNames) {
      const state = this.families.get(name) as FamilyState;
      if (state.entries.size === 0) continue;
      parts.push(renderFamilyHeader(state.family));
      for (const text of state.entries.values()) parts.push(text);
    }
    return parts.join("");
  }

  /**
   * The exposition as gzip members, one per family, in name order. A gzip stream
   * may hold several members and decompresses to their concatenation, so a change
   * to one family (traffic, every minute) re-compresses only that family.
   */
  gzipParts(): Buffer[] {
    const parts: Buffer[] = [];
    for (const name of this.sortedNames) {
      const state = this.families.get(name) as FamilyState;
      if (state.entries.size === 0) continue;
      // Level 1: scrapes are frequent and the text compresses well anyway.
      state.gzip ??= gzipSync(renderFamilyHeader(state.family) + [...state.entries.values()].join(""), {
        level: 1,
      });
      parts.push(state.gzip);
    }
    return parts;
  }

  private replace(key: string, samples: readonly Sample[]): void {
    const byFamily = new Map<string, Map<string, string>>();
    for (const sample of samples) {
      if (!this.families.has(sample.name) || this.isExcluded(sample.name)) continue;
      const state = this.families.get(sample.name) as FamilyState;
      const line = renderSample(state.family, sample);
      let lines = byFamily.get(sample.name);
      if (!lines) byFamily.set(sample.name, (lines = new Map()));
      // Same label set twice: the last one wins (no duplicate series).
      lines.set(line.slice(0, line.lastIndexOf(" ")), line);
    }
    let changed = false;
    const previous = this.entryFamilies.get(key) ?? new Set<string>();
    for (const name of previous) {
      if (!byFamily.has(name)) changed = this.dropFamilyEntry(name, key) || changed;
    }
    for (const [name, lines] of byFamily) {
      const state = this.families.get(name) as FamilyState;
      const text = [...lines.values()].join("");
      if (state.entries.get(key) !== text) {
        state.entries.set(key, text);
        state.gzip = undefined;
        changed = true;
      }
    }
    if (byFamily.size > 0) this.entryFamilies.set(key, new Set(byFamily.keys()));
    else this.entryFamilies.delete(key);
    if (changed) this.changed();
  }

  private drop(key: string): boolean {
    let changed = false;
    for (const name of this.entryFamilies.get(key) ?? [])
      changed = this.dropFamilyEntry(name, key) || changed;
    this.entryFamilies.delete(key);
    return changed;
  }

  private dropFamilyEntry(name: string, key: string): boolean {
    const state = this.families.get(name);
    if (!state || !state.entries.delete(key)) return false;
    state.gzip = undefined;
    return true;
  }

  private changed(): void {
    this.versionCounter += 1;
    for (const listener of this.listeners) listener();
  }
}
