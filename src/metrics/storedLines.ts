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
import type { ChunkWriter } from "./gzipMembers.js";
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
 * Exemplars their writer keeps itself, written when the family is rendered in OpenMetrics (the
 * log-derived counts: every site's exemplars change with every export, and most scrapes do not ask
 * for them).
 */
export interface LiveMarks {
  /** Writes the exemplar of the family's line `line` (` # {…} value timestamp`), or nothing. */
  write(out: ChunkWriter, line: number): void;
}

/** A family's exemplars in an entry: as text, each line's joined by newlines, or live. */
export type Marks = string | LiveMarks;

/** A shape as bytes, and per line how it is written: [kind, start, end] (byte offsets into `bytes`). */
export interface CompiledShape {
  readonly bytes: Buffer;
  /** Kind: 0 the line whole; 1–3 the head with a suffix (SUFFIX_MARKS) put back; 4 the head put back. */
  readonly lines: Int32Array;
}

const HEAD = 4;

/** The shape's lines as bytes, each without its newline (and its mark), and how each is written. */
export function compileShape(shape: string): CompiledShape {
  const bytes = Buffer.from(shape, "utf8");
  const lines = new Int32Array(3 * lineCount(shape));
  for (let i = 0, start = 0; start < bytes.length; i++) {
    const end = bytes.indexOf(0x0a, start);
    const c = bytes[start] as number;
    const kind = c >= 1 && c <= 3 ? c : c === 0x2c || c === 0x7d ? HEAD : 0;
    lines[3 * i] = kind;
    lines[3 * i + 1] = kind >= 1 && kind <= 3 ? start + 1 : start;
    lines[3 * i + 2] = end;
    start = end + 1;
  }
  return { bytes, lines };
}

/** What every line of a family starts with, by line kind (see CompiledShape): `name{`, `name_bucket{`, … */
export function lineHeads(name: string): readonly Buffer[] {
  const heads = MARKED_SUFFIXES.map((suffix) => Buffer.from(`${name}${suffix}{`, "utf8"));
  heads[HEAD] = Buffer.from(`${name}{`, "utf8");
  return heads;
}

/**
 * The lines of one family of an entry, each line's head put back (`heads`, then the entry's
 * `site_id="…",site="…"`, `sitePart` bytes up to `sitePartLength`) and its value (from `values` at
 * `from`) and exemplar written in: `marks` as text (newline-joined, one per line, "" for none) or
 * written by their keeper (on bucket lines only when `bucketsOnly`).
 */
export function writeStoredLines(
  out: ChunkWriter,
  shape: CompiledShape,
  values: readonly number[],
  from: number,
  heads: readonly Buffer[],
  sitePart: Buffer,
  sitePartLength: number,
  marks?: Marks,
  bucketsOnly = false,
): void {
  const { bytes, lines } = shape;
  const bucketHead = heads[1] as Buffer;
  let mark = 0;
  for (let i = 0; 3 * i < lines.length; i++) {
    const kind = lines[3 * i] as number;
    const start = lines[3 * i + 1] as number;
    if (kind !== 0) {
      const head = heads[kind] as Buffer;
      out.bytes(head, 0, head.length);
      out.bytes(sitePart, 0, sitePartLength);
    }
    out.bytes(bytes, start, lines[3 * i + 2] as number);
    out.number(values[from + i] as number, formatValue);
    if (typeof marks === "string") {
      const end = marks.indexOf("\n", mark);
      const stop = end < 0 ? marks.length : end;
      if (stop > mark) out.text(marks.slice(mark, stop));
      mark = stop + 1;
    } else if (
      marks &&
      (!bucketsOnly || kind === 1 || (kind === 0 && startsWithBytes(bytes, start, bucketHead)))
    )
      marks.write(out, i);
    out.line();
  }
}

/** Whether `bytes` at `at` hold `head` (a line stored whole that begins `name_bucket{`). */
function startsWithBytes(bytes: Buffer, at: number, head: Buffer): boolean {
  return bytes.compare(head, 0, head.length, at, at + head.length) === 0;
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
  /** Shapes as bytes, made when first rendered; bounded the same way. */
  private readonly compiledShapes = new Map<string, CompiledShape>();

  /** The shape as bytes for rendering (see writeStoredLines). */
  compiled(shape: string): CompiledShape {
    let known = this.compiledShapes.get(shape);
    if (known === undefined) {
      if (this.compiledShapes.size >= SHAPES_PER_FAMILY) this.compiledShapes.clear();
      known = compileShape(shape);
      this.compiledShapes.set(shape, known);
    }
    return known;
  }

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
