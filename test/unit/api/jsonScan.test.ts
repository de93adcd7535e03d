/**
 * The log page scan accepts exactly the bytes JSON.parse accepts as text, and the places it gives hold
 * the values JSON.parse finds there: checked over random documents and random damage to them.
 */
import { describe, expect, it } from "vitest";
import { JsonSyntaxError, scanLogPage } from "../../../src/api/jsonScan.js";

/** A small deterministic generator (xorshift), so a failure can be replayed from its seed. */
function rng(seed: number): () => number {
  let x = seed || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

const STRINGS = [
  "",
  "a",
  "GET /x?y=1",
  'quote " inside',
  "back\\slash",
  "tab\there",
  "é ✓ 😀",
  "\u0000\u001f",
  "\ud800",
];
const KEYS = [
  "timestamp",
  "message",
  "status",
  "logs",
  "scroll_id",
  "total_results",
  "time\u0073tamp",
  "__proto__",
];

function value(r: () => number, depth: number): unknown {
  const k = Math.floor(r() * (depth > 3 ? 5 : 7));
  switch (k) {
    case 0:
      return null;
    case 1:
      return r() < 0.5;
    case 2:
      return [0, -1, 1.5, 1e21, -2.5e-7, 1_795_000_000, 1_795_000_000_123][Math.floor(r() * 7)];
    case 3:
    case 4:
      return STRINGS[Math.floor(r() * STRINGS.length)];
    case 5:
      return Array.from({ length: Math.floor(r() * 4) }, () => value(r, depth + 1));
    default: {
      const o: Record<string, unknown> = {};
      for (let i = Math.floor(r() * 5); i > 0; i--)
        o[KEYS[Math.floor(r() * KEYS.length)] as string] = value(r, depth + 1);
      return o;
    }
  }
}

function page(r: () => number): unknown {
  if (r() < 0.1) return value(r, 0);
  const logs = Array.from({ length: Math.floor(r() * 6) }, () =>
    r() < 0.8 ? { timestamp: value(r, 3), message: value(r, 3), status: 200 } : value(r, 2),
  );
  return { total_results: value(r, 3), logs: r() < 0.1 ? value(r, 1) : logs, scroll_id: value(r, 3) };
}

/** JSON text with random whitespace, and sometimes escapes where JSON allows them. */
function write(v: unknown, r: () => number): string {
  const ws = () => [" ", "", "\n", "\t", "\r\n  "][Math.floor(r() * 5)] as string;
  if (Array.isArray(v)) return `[${ws()}${v.map((x) => write(x, r)).join(`${ws()},${ws()}`)}${ws()}]`;
  if (v !== null && typeof v === "object") {
    const members = Object.entries(v).map(([k, x]) => {
      const key =
        r() < 0.2
          ? `"${[...k].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("")}"`
          : JSON.stringify(k);
      return `${key}${ws()}:${ws()}${write(x, r)}`;
    });
    return `{${ws()}${members.join(`${ws()},${ws()}`)}${ws()}}`;
  }
  return JSON.stringify(v);
}

const DAMAGE = [
  '"',
  "\\",
  ",",
  "]",
  "}",
  "{",
  "[",
  ":",
  "-",
  "0",
  "1e",
  ".",
  "tru",
  "\u0001",
  "\\u12",
  "\\x",
  " ",
  "01",
  "+1",
];

function damaged(text: string, r: () => number): string {
  const at = Math.floor(r() * (text.length + 1));
  const mode = r();
  if (mode < 0.3) return text.slice(0, at);
  if (mode < 0.6) return text.slice(0, at) + text.slice(at + 1);
  return text.slice(0, at) + (DAMAGE[Math.floor(r() * DAMAGE.length)] as string) + text.slice(at);
}

function parses(text: string | Buffer): boolean {
  try {
    JSON.parse(text.toString());
    return true;
  } catch {
    return false;
  }
}

function scans(text: string | Buffer): boolean {
  try {
    scanLogPage(typeof text === "string" ? Buffer.from(text) : text);
    return true;
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    return false;
  }
}

describe("the log page scan", () => {
  it("accepts what JSON.parse accepts and nothing else, over random pages and damage to them", () => {
    const r = rng(22);
    let rejected = 0;
    for (let i = 0; i < 4000; i++) {
      const text = write(page(r), r);
      expect(scans(text), text).toBe(true);
      const bad = damaged(text, r);
      const ok = parses(bad);
      if (!ok) rejected += 1;
      expect(scans(bad), bad).toBe(ok);
    }
    // The damage mostly breaks the text: the check is not a trivial "accept".
    expect(rejected).toBeGreaterThan(2000);
  });

  it.each([
    "",
    " ",
    "{",
    '{"logs":[}',
    '{"logs":[1,]}',
    '{"a":1,}',
    '{"a" 1}',
    "[1 2]",
    '"\\u00g0"',
    '"a\nb"',
    "-",
    "1.",
    ".5",
    "1e+",
    "NaN",
    "\ufeff{}",
    '{"logs":[]} x',
  ])("rejects %j as JSON.parse does", (text) => {
    expect(parses(text)).toBe(false);
    expect(scans(text)).toBe(false);
  });

  it("follows nesting of any depth without running out of stack", () => {
    const deep = `${"[".repeat(200_000)}${"]".repeat(200_000)}`;
    expect(scanLogPage(Buffer.from(`{"logs":[{"timestamp":1,"x":${deep}}]}`))?.records).toHaveLength(4);
    expect(scans(`${"[".repeat(200_000)}`)).toBe(false);
  });

  it("gives each record's place and its timestamp's, the last of a repeated key, as JSON.parse reads them", () => {
    const r = rng(7);
    for (let i = 0; i < 2000; i++) {
      const bytes = Buffer.from(write(page(r), r));
      // Places are byte offsets.
      const at = (start: number | undefined, end: number | undefined): unknown =>
        JSON.parse(bytes.toString("utf8", start, end));
      const parsed = JSON.parse(bytes.toString()) as Record<string, unknown>;
      const spans = scanLogPage(bytes);
      if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
        expect(spans).toBeUndefined();
        continue;
      }
      const members = spans?.members ?? new Map();
      expect([...members.keys()].sort()).toEqual(Object.keys(parsed).sort());
      for (const [key, [s, e]] of members) expect(at(s, e)).toEqual(parsed[key]);
      const logs = parsed.logs;
      if (!Array.isArray(logs)) {
        expect(spans?.records).toBeUndefined();
        continue;
      }
      const places = spans?.records as Int32Array;
      expect(places).toHaveLength(4 * logs.length);
      logs.forEach((record: unknown, n) => {
        expect(at(places[4 * n], places[4 * n + 1])).toEqual(record);
        const ts = places[4 * n + 2] as number;
        const has =
          record !== null && typeof record === "object" && !Array.isArray(record) && "timestamp" in record;
        expect(ts >= 0).toBe(has);
        if (has) expect(at(ts, places[4 * n + 3])).toEqual((record as { timestamp: unknown }).timestamp);
      });
    }
  });

  it("keeps the last of a repeated key, as JSON.parse does", () => {
    const text =
      '{"logs":[{"timestamp":1,"timestamp":2}],"logs":[{"timestamp":3},{"timestamp":4,"timestamp":5}]}';
    const places = scanLogPage(Buffer.from(text))?.records as Int32Array;
    expect(places).toHaveLength(8);
    expect(text.slice(places[6], places[7])).toBe("5");
  });

  it("takes bytes that are no UTF-8 inside a string, as JSON.parse takes their replacement, and nowhere else", () => {
    const bytes = (...parts: Array<string | number[]>) =>
      Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p))));
    for (const bad of [[0xff], [0xc3], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0x80, 0x80]]) {
      const inString = bytes('{"logs":[{"timestamp":1,"message":"a', bad, 'b"}]}');
      expect(parses(inString)).toBe(true);
      expect(scans(inString)).toBe(true);
      const outside = bytes('{"logs":[{"timestamp":1', bad, "}]}");
      expect(parses(outside)).toBe(false);
      expect(scans(outside)).toBe(false);
    }
    expect(scans(bytes([0xef, 0xbb, 0xbf], '{"logs":[]}'))).toBe(
      parses(bytes([0xef, 0xbb, 0xbf], '{"logs":[]}')),
    );
  });
});
