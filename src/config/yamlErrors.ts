/**
 * YAML syntax errors as a person fixes them: `file:line:col: YAML syntax error: what`, then the
 * offending line (and the one above it, for context) with a caret under the column. The `yaml`
 * package's own position is where its parser noticed the fault, which is not always where the fault
 * is: a line indented deeper than the key above it is reported at that key's value (the line
 * before), an unclosed quote at the end of the file. Those two are moved to the line to fix.
 */
import { isScalar, visit, type Document, type YAMLError } from "yaml";

interface Located {
  /** 0-based offset of the character to point at. */
  offset: number;
  message: string;
}

/** Offsets where each line starts. */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === "\n") starts.push(i + 1);
  return starts;
}

/** 0-based line index of an offset. */
function lineIndexOf(starts: readonly number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] as number) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function lineText(text: string, starts: readonly number[], index: number): string {
  const start = starts[index] as number;
  const end = starts[index + 1] ?? text.length + 1;
  return text.slice(start, end - 1).replace(/\r$/, "");
}

const indentOf = (line: string): number => /^[ \t]*/.exec(line)?.[0].length ?? 0;
const isBlank = (line: string): boolean => /^\s*(#.*)?$/.test(line);

/** Where the quoted scalar that an unclosed-quote error is about opens, if it is found. */
function openingQuote(doc: Document, errorOffset: number): number | undefined {
  let found: number | undefined;
  visit(doc, {
    Scalar(_key, node) {
      if (!isScalar(node) || !node.range) return;
      if (node.type !== "QUOTE_DOUBLE" && node.type !== "QUOTE_SINGLE") return;
      const [start, end] = node.range;
      if (start < errorOffset && errorOffset <= end) found = start;
    },
  });
  return found;
}

/** The place to fix and what to say for one of the parser's errors. */
function locate(error: YAMLError, doc: Document, text: string, starts: readonly number[]): Located {
  const [start, end] = error.pos;
  const message = error.message.replace(/ at line \d+, column \d+:[\s\S]*$/, "");
  if (error.code === "MISSING_CHAR" && /quote/.test(message)) {
    const open = openingQuote(doc, start);
    if (open !== undefined) {
      return { offset: open, message: `${message}: the quoted value that opens here is never closed` };
    }
  }
  if (error.code === "MULTILINE_IMPLICIT_KEY") {
    // A "key" that runs over several lines: either the next line is indented deeper than the line
    // the value started on (that line is the fault), or this line lacks its `: ` (this line is).
    const first = lineIndexOf(starts, start);
    const last = lineIndexOf(starts, Math.max(start, end - 1));
    const firstIndent = indentOf(lineText(text, starts, first));
    for (let i = first + 1; i <= last; i++) {
      const line = lineText(text, starts, i);
      if (isBlank(line)) continue;
      if (indentOf(line) > firstIndent) {
        return {
          offset: (starts[i] as number) + indentOf(line),
          message: `this line is indented deeper than the line above it; indent it as far as the keys beside it, or end the line above with a key and ":"`,
        };
      }
      break;
    }
    return {
      offset: start,
      message: `${message}: a key needs ": " (a colon and a space) after it`,
    };
  }
  if (error.code === "BLOCK_AS_IMPLICIT_KEY") {
    return {
      offset: start,
      message: `${message}: quote a value that holds ": ", or indent the line below less`,
    };
  }
  if (error.code === "BAD_INDENT" && /same column/.test(message)) {
    return { offset: start, message: `${message}: indent this line as far as the keys beside it` };
  }
  if (error.code === "DUPLICATE_KEY") {
    return { offset: start, message: `${message}: this key is already set above in the same mapping` };
  }
  return { offset: start, message };
}

/**
 * A position on a blank or comment line (where the parser noticed a badly indented key that comes
 * after comments) moves to the first character of the next line with content: the line to fix.
 */
function toContent(text: string, starts: readonly number[], located: Located): Located {
  for (let i = lineIndexOf(starts, located.offset); i < starts.length; i++) {
    const line = lineText(text, starts, i);
    if (isBlank(line)) continue;
    if (i === lineIndexOf(starts, located.offset)) return located;
    return { ...located, offset: (starts[i] as number) + indentOf(line) };
  }
  return located;
}

/** The line to fix, the non-blank line above it for context, and a caret under the column. */
function snippet(text: string, starts: readonly number[], offset: number): string[] {
  const index = lineIndexOf(starts, offset);
  const col = offset - (starts[index] as number);
  const shown: number[] = [];
  for (let i = index - 1; i >= 0; i--) {
    if (!isBlank(lineText(text, starts, i))) {
      shown.push(i);
      break;
    }
  }
  shown.push(index);
  const width = String(index + 1).length;
  // A tab is shown as one visible character so that the caret stays under its column.
  const show = (line: string) => line.replace(/\t/g, "→");
  const lines = shown.map((i) => `    ${String(i + 1).padStart(width)} | ${show(lineText(text, starts, i))}`);
  lines.push(`    ${" ".repeat(width)} | ${" ".repeat(col)}^`);
  return lines;
}

/** At most this many errors are reported: after the first few, the parser mostly reports their echoes. */
const MAX_ERRORS = 3;

/** One problem per syntax error (a message with its snippet), in the order of the file. */
export function yamlSyntaxProblems(file: string, text: string, doc: Document): string[] {
  const starts = lineStarts(text);
  // The parser reports an over-indented line twice (as a block in a compact mapping and as a
  // multi-line key, both at the same offset): the multi-line key's error says which line it is.
  const multiline = new Set(
    doc.errors.filter((e) => e.code === "MULTILINE_IMPLICIT_KEY").map((e) => e.pos[0]),
  );
  const located = doc.errors
    .filter((e) => !(e.code === "BLOCK_AS_IMPLICIT_KEY" && multiline.has(e.pos[0])))
    .map((e) => toContent(text, starts, locate(e, doc, text, starts)))
    .sort((a, b) => a.offset - b.offset)
    .filter((l, i, all) => i === 0 || l.offset !== all[i - 1]?.offset);
  const problems = located.slice(0, MAX_ERRORS).map(({ offset, message }) => {
    const index = lineIndexOf(starts, offset);
    const col = offset - (starts[index] as number) + 1;
    return [
      `${file}:${index + 1}:${col}: YAML syntax error: ${message}`,
      ...snippet(text, starts, offset),
    ].join("\n");
  });
  if (located.length > MAX_ERRORS) {
    problems.push(
      `${file}: ${located.length - MAX_ERRORS} more YAML syntax error(s) after these; fix these first`,
    );
  }
  return problems;
}
