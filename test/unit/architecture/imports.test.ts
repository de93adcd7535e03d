/**
 * The import graph of src/: no two files import each other (directly or round a loop, types
 * included), and no folder imports a folder that imports it back. docs/architecture.md says why.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "../../../src");
const SPECIFIER = /(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)\.js["']/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** file (relative to src/) → the files it imports. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, "utf8");
    const targets = [...text.matchAll(SPECIFIER)].map((m) =>
      relative(SRC, normalize(join(dirname(file), `${m[1]}.ts`))),
    );
    graph.set(relative(SRC, file), [...new Set(targets)]);
  }
  return graph;
}

/** Strongly connected components with more than one member (Tarjan), each sorted. */
function loops(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const members: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        members.push(w);
      } while (w !== v);
      if (members.length > 1) found.push(members.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

const folderOf = (file: string): string => (file.includes("/") ? file.split("/")[0]! : file);

describe("the import graph of src/", () => {
  const graph = importGraph();

  it("resolves every relative import to a file of src/", () => {
    const missing = [...graph].flatMap(([from, to]) =>
      to.filter((t) => !graph.has(t)).map((t) => `${from} → ${t}`),
    );
    expect(missing).toEqual([]);
    expect(graph.size).toBeGreaterThan(100);
  });

  it("has no loop of files", () => {
    expect(loops(graph)).toEqual([]);
  });

  it("has no loop of folders", () => {
    const folders = new Map<string, string[]>();
    for (const [from, to] of graph) {
      const f = folderOf(from);
      const targets = to.map(folderOf).filter((t) => t !== f);
      folders.set(f, [...new Set([...(folders.get(f) ?? []), ...targets])]);
    }
    expect(loops(folders)).toEqual([]);
  });
});
