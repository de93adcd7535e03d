/**
 * Where a V8 heap snapshot's memory goes: `node dist/bench/heapSummary.js <file> [top=30]`.
 *
 * Prints the object kinds (constructor or type) by shallow size and count, the kinds by retained size
 * (objects of a kind not dominated by another of the same kind, so nothing is counted twice), and the
 * single objects that retain the most with the chain of edges that leads to each. Retained sizes come
 * from the dominator tree (Cooper, Harvey and Kennedy's iterative algorithm over a reverse postorder),
 * with weak edges left out as DevTools does.
 */
import { readFile } from "node:fs/promises";

interface Snapshot {
  snapshot: {
    meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] };
    node_count: number;
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

const [file, topArg] = process.argv.slice(2);
if (!file) throw new Error("usage: heapSummary.js <file.heapsnapshot> [top]");
const top = Number(topArg ?? 30);
const snap = JSON.parse(await readFile(file, "utf8")) as Snapshot;
const { meta } = snap.snapshot;
const nf = meta.node_fields.length;
const ef = meta.edge_fields.length;
const [nType, nName, nSize, nEdges] = ["type", "name", "self_size", "edge_count"].map((f) =>
  meta.node_fields.indexOf(f),
) as [number, number, number, number];
const [eType, eName, eTo] = ["type", "name_or_index", "to_node"].map((f) => meta.edge_fields.indexOf(f)) as [
  number,
  number,
  number,
];
const nodeTypes = meta.node_types[0];
const edgeTypes = meta.edge_types[0];
const weak = edgeTypes.indexOf("weak");
const N = snap.nodes.length / nf;

const firstEdge = new Uint32Array(N + 1);
for (let i = 0, e = 0; i < N; i++) {
  firstEdge[i] = e;
  e += (snap.nodes[i * nf + nEdges] as number) * ef;
}
firstEdge[N] = snap.edges.length;

const kindOf = (i: number): string => {
  const type = nodeTypes[snap.nodes[i * nf + nType] as number] as string;
  const name = snap.strings[snap.nodes[i * nf + nName] as number] as string;
  if (type === "object" || type === "closure" || type === "native") return `${name} (${type})`;
  if (type === "hidden" || type === "code" || type === "array") return `(${type}) ${name.slice(0, 40)}`;
  return `(${type})`;
};
const selfSize = (i: number) => snap.nodes[i * nf + nSize] as number;

// Reverse postorder from the root (node 0), iteratively.
const order = new Int32Array(N).fill(-1);
const rpo: number[] = [];
{
  const stack: number[] = [0];
  const edgeAt = new Uint32Array(N);
  const seen = new Uint8Array(N);
  seen[0] = 1;
  for (let i = 0; i < N; i++) edgeAt[i] = firstEdge[i] as number;
  const post: number[] = [];
  while (stack.length > 0) {
    const v = stack[stack.length - 1] as number;
    let pushed = false;
    while ((edgeAt[v] as number) < (firstEdge[v + 1] as number)) {
      const e = edgeAt[v] as number;
      edgeAt[v] = e + ef;
      if (snap.edges[e + eType] === weak) continue;
      const w = (snap.edges[e + eTo] as number) / nf;
      if (seen[w]) continue;
      seen[w] = 1;
      stack.push(w);
      pushed = true;
      break;
    }
    if (!pushed) post.push(stack.pop() as number);
  }
  for (let k = post.length - 1; k >= 0; k--) {
    order[post[k] as number] = rpo.length;
    rpo.push(post[k] as number);
  }
}

// Predecessors (strong edges between reachable nodes).
const predCount = new Uint32Array(N + 1);
for (let v = 0; v < N; v++) {
  if (order[v] === -1) continue;
  for (let e = firstEdge[v] as number; e < (firstEdge[v + 1] as number); e += ef) {
    if (snap.edges[e + eType] === weak) continue;
    const w = (snap.edges[e + eTo] as number) / nf;
    if (order[w] !== -1) predCount[w + 1] = (predCount[w + 1] as number) + 1;
  }
}
for (let i = 0; i < N; i++) predCount[i + 1] = (predCount[i + 1] as number) + (predCount[i] as number);
const preds = new Uint32Array(predCount[N] as number);
{
  const fill = predCount.slice();
  for (let v = 0; v < N; v++) {
    if (order[v] === -1) continue;
    for (let e = firstEdge[v] as number; e < (firstEdge[v + 1] as number); e += ef) {
      if (snap.edges[e + eType] === weak) continue;
      const w = (snap.edges[e + eTo] as number) / nf;
      if (order[w] === -1) continue;
      const at = fill[w] as number;
      fill[w] = at + 1;
      preds[at] = v;
    }
  }
}

const idom = new Int32Array(N).fill(-1);
idom[0] = 0;
for (let changed = true; changed;) {
  changed = false;
  for (let k = 1; k < rpo.length; k++) {
    const b = rpo[k] as number;
    let d = -1;
    for (let p = predCount[b] as number; p < (predCount[b + 1] as number); p++) {
      let x = preds[p] as number;
      if (idom[x] === -1) continue;
      if (d === -1) {
        d = x;
        continue;
      }
      let y = d;
      while (x !== y) {
        while ((order[x] as number) > (order[y] as number)) x = idom[x] as number;
        while ((order[y] as number) > (order[x] as number)) y = idom[y] as number;
      }
      d = x;
    }
    if (d !== -1 && idom[b] !== d) {
      idom[b] = d;
      changed = true;
    }
  }
}

const retained = new Float64Array(N);
for (let k = rpo.length - 1; k >= 0; k--) {
  const v = rpo[k] as number;
  retained[v] = (retained[v] as number) + selfSize(v);
  if (v !== 0)
    retained[idom[v] as number] = (retained[idom[v] as number] as number) + (retained[v] as number);
}

const mb = (n: number) => `${(n / 1048576).toFixed(2)} MB`;
console.log(`${file}: ${N} nodes, ${rpo.length} reachable, ${mb(retained[0] as number)} reachable`);

const shallow = new Map<string, { size: number; count: number; retained: number }>();
for (const v of rpo) {
  const k = kindOf(v);
  const row = shallow.get(k) ?? { size: 0, count: 0, retained: 0 };
  row.size += selfSize(v);
  row.count += 1;
  if (v !== 0 && kindOf(idom[v] as number) !== k) row.retained += retained[v] as number;
  shallow.set(k, row);
}
const rows = [...shallow.entries()];
console.log(`\nBy shallow size (top ${top}): size, count, kind`);
for (const [k, r] of rows.sort((a, b) => b[1].size - a[1].size).slice(0, top))
  console.log(`${mb(r.size).padStart(10)} ${String(r.count).padStart(9)}  ${k}`);
console.log(`\nBy retained size (top ${top}): retained, count, kind`);
for (const [k, r] of rows.sort((a, b) => b[1].retained - a[1].retained).slice(0, top))
  console.log(`${mb(r.retained).padStart(10)} ${String(r.count).padStart(9)}  ${k}`);

/** The edge name from a node's dominator chain, for the path print. */
const edgeName = (from: number, to: number): string => {
  for (let e = firstEdge[from] as number; e < (firstEdge[from + 1] as number); e += ef) {
    if ((snap.edges[e + eTo] as number) / nf !== to) continue;
    const t = edgeTypes[snap.edges[e + eType] as number];
    const n = snap.edges[e + eName] as number;
    return t === "element" || t === "hidden" ? `[${n}]` : String(snap.strings[n]);
  }
  return "~";
};
console.log(`\nLargest single retainers (top ${top}), each with its dominator chain:`);
const biggest = rpo
  .filter((v) => v !== 0 && (retained[v] as number) > 1048576)
  .sort((a, b) => (retained[b] as number) - (retained[a] as number));
let shown = 0;
for (const v of biggest) {
  // Only the deepest of a chain of near-equal retainers is interesting; skip a node whose child holds most.
  const chain: string[] = [];
  for (let x = v, depth = 0; x !== 0 && depth < 8; depth++) {
    const d = idom[x] as number;
    chain.push(`${kindOf(x)}.${edgeName(d, x)}`);
    x = d;
  }
  console.log(`${mb(retained[v] as number).padStart(10)}  ${chain.reverse().join(" > ")}`);
  if (++shown >= top) break;
}

// `heapSummary.js <file> <top> <Kind>...`: what each object of those kinds holds, two edges deep.
for (const wanted of process.argv.slice(4)) {
  const buckets = new Map<string, number>();
  let instances = 0;
  const walk = (v: number, prefix: string, depth: number) => {
    for (let e = firstEdge[v] as number; e < (firstEdge[v + 1] as number); e += ef) {
      if (snap.edges[e + eType] === weak) continue;
      const w = (snap.edges[e + eTo] as number) / nf;
      if (idom[w] !== v) continue;
      const t = edgeTypes[snap.edges[e + eType] as number];
      const n = snap.edges[e + eName] as number;
      const name = `${prefix}${t === "element" || t === "hidden" ? "[]" : String(snap.strings[n])}:${kindOf(w)}`;
      buckets.set(name, (buckets.get(name) ?? 0) + (retained[w] as number));
      if (depth > 1) walk(w, `${name} > `, depth - 1);
    }
  };
  for (const v of rpo) {
    if (kindOf(v) !== wanted) continue;
    instances += 1;
    walk(v, "", 3);
  }
  console.log(`\n${wanted}: ${instances} objects; bytes retained per object, by path:`);
  for (const [k, b] of [...buckets.entries()].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${(b / Math.max(instances, 1)).toFixed(0).padStart(10)}  ${k}`);
}

// Strings by what holds them (the kind of their dominator), to find copies and views kept alive.
{
  const holders = new Map<string, { bytes: number; count: number }>();
  for (const v of rpo) {
    const k = kindOf(v);
    if (k !== "(string)" && k !== "(sliced string)" && k !== "(concatenated string)") continue;
    const owner = (x: number): number => {
      let d = idom[x] as number;
      while (d !== 0 && (kindOf(d).startsWith("(") || kindOf(d).startsWith("system"))) d = idom[d] as number;
      return d;
    };
    const d = owner(v);
    const key = `${k} in ${kindOf(d)} in ${kindOf(owner(d))}`;
    const row = holders.get(key) ?? { bytes: 0, count: 0 };
    row.bytes += retained[v] as number;
    row.count += 1;
    holders.set(key, row);
  }
  console.log(`\nStrings by holder (top ${top}): retained, count`);
  for (const [k, r] of [...holders.entries()].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top))
    console.log(`${mb(r.bytes).padStart(10)} ${String(r.count).padStart(9)}  ${k}`);
}
