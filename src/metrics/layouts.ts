/**
 * The families a store entry has lines in (by index) and, for each, the shape of its lines (see
 * storedLines.ts: the label text, shared between entries). Entries with the same layout share one
 * object: most sites of a collector have the same label sets (at 5,000 sites, 60,000 entries each
 * holding two arrays of their own made the store 31 MB instead of 27).
 */
export interface Layout {
  readonly families: readonly number[];
  readonly shapes: readonly string[];
}

/** Layouts kept per collector for new entries to find theirs in (beside their own previous one). */
export const RECENT_LAYOUTS = 8;

function sameLayout(layout: Layout, families: readonly number[], shapes: readonly string[]): boolean {
  if (layout.families.length !== families.length) return false;
  for (let i = 0; i < families.length; i++) {
    if (layout.families[i] !== families[i] || layout.shapes[i] !== shapes[i]) return false;
  }
  return true;
}

export class Layouts {
  /** Per collector, the layouts made last, newest first. */
  private readonly recent = new Map<string, Layout[]>();

  /** The layout of `families` and `shapes`: the entry's previous one, a recent one, or a new one. */
  of(
    collector: string,
    previous: Layout | undefined,
    families: readonly number[],
    shapes: readonly string[],
  ): Layout {
    if (previous && sameLayout(previous, families, shapes)) return previous;
    let recent = this.recent.get(collector);
    if (!recent) this.recent.set(collector, (recent = []));
    for (const layout of recent) if (sameLayout(layout, families, shapes)) return layout;
    const layout: Layout = { families, shapes };
    recent.unshift(layout);
    if (recent.length > RECENT_LAYOUTS) recent.pop();
    return layout;
  }
}
