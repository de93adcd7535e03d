/**
 * How the metric store keeps a family's series lines for one (collector, site) entry: their label
 * text without the values (the "shape"), and the values apart. Thousands of sites publish the same
 * label sets (`strategy="mobile",audit="…"`, `status_class="5xx",cached="false"`, every histogram
 * bucket), so one shape string serves every site that has it (see `ShapeTable`) and a site adds only
 * its numbers. Lines are put together when a family is rendered.
 *
 * A shape holds one line per series, each ending in `"} "` or `" "` (where the value goes) and a
 * newline. A line that starts with `,` or `}` is stored without its `name{site_id=…,site=…` head (the
 * entry's `sitePart`); a histogram's such lines start with a mark for their suffix (`name_bucket{…`).
 * Any other line is stored whole.
 */
import type { HistogramSuffix } from "./family.js";
import { formatValue } from "./render.js";

export const SUFFIX_MARKS: Record<HistogramSuffix, string> = {
  _bucket: "\u0001",
  _sum: "\u0002",
  _count: "\u0003",
};
const MARKED_SUFFIXES = ["", "_bucket", "_sum", "_count"];

/**
 * A copy of `text` in a string of its own. A slice of a rendered line, or a line built by
 * concatenation, is a view that keeps the whole source alive, which would defeat the sharing.
 */
export function detached(text: string): string {
  return Buffer.from(text, "utf8").toString("utf8");
}

/** How many lines (series) a shape holds. */
export function lineCount(shape: string): number {
  let n = 0;
  for (let at = shape.indexOf("\n"); at >= 0; at = shape.indexOf("\n", at + 1)) n++;
  return n;
}

/**
 * The lines of one family of an entry, each line's head put back and its value (from `values` at
 * `from`) and exemplar (`marks`: newline-joined, one per line, "" for none) written in.
 */
export function renderStoredLines(
  shape: string,
  values: readonly number[],
  from: number,
  name: string,
  sitePart: string,
  marks?: string,
): string {
  const head = `${name}{${sitePart}`;
  const each = marks?.split("\n");
  let out = "";
  let start = 0;
  for (let i = 0; start < shape.length; i++) {
    const end = shape.indexOf("\n", start);
    const c = shape.charCodeAt(start);
    if (c === 44 || c === 125) out += head + shape.slice(start, end);
    else if (c >= 1 && c <= 3)
      out += `${name}${MARKED_SUFFIXES[c] as string}{${sitePart}${shape.slice(start + 1, end)}`;
    else out += shape.slice(start, end);
    out += formatValue(values[from + i] as number) + (each?.[i] ?? "") + "\n";
    start = end + 1;
  }
  return out;
}

/** The most shapes a family remembers for sharing; past it the table starts afresh (no growth without end). */
const SHAPES_PER_FAMILY = 512;

/**
 * One stored copy of each shape a family's entries have, so that equal shapes are one string.
 * Bounded: shapes with per-site labels (domains, certificates) are many and each is used once, so
 * the table is emptied when full rather than keeping every shape ever seen (entries keep theirs).
 */
export class ShapeTable {
  private readonly shapes = new Map<string, string>();

  /** The stored copy of `shape`, made when it is new. */
  shared(shape: string): string {
    const known = this.shapes.get(shape);
    if (known !== undefined) return known;
    if (this.shapes.size >= SHAPES_PER_FAMILY) this.shapes.clear();
    const copy = detached(shape);
    this.shapes.set(copy, copy);
    return copy;
  }
}
