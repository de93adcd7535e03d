/** Text written in pieces comes back whole from the members, each member bounded in size. */
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { ChunkWriter, GzipMembers, writtenText } from "../../../src/metrics/gzipMembers.js";
import { formatValue } from "../../../src/metrics/render.js";

describe("GzipMembers", () => {
  it("starts a member at the end of the line that fills a chunk, and the members read back as the text", () => {
    const members = new GzipMembers(1000);
    const pieces = Array.from({ length: 50 }, (_, i) => `line ${i} ${"x".repeat(i * 7)} é😀`);
    for (const piece of pieces) {
      members.writer.text(piece);
      members.writer.line();
    }
    const out = members.finish();
    expect(out.length).toBeGreaterThan(5);
    for (const member of out) expect(gunzipSync(member).length).toBeLessThan(1000 + 50 * 7 + 30);
    expect(gunzipSync(Buffer.concat(out)).toString("utf8")).toBe(pieces.map((p) => `${p}\n`).join(""));
  });

  it("gives one empty member for no text, so a body is always valid gzip", () => {
    const out = new GzipMembers().finish();
    expect(out).toHaveLength(1);
    expect(gunzipSync(out[0] as Buffer).toString("utf8")).toBe("");
  });

  it("takes a piece larger than its buffer whole", () => {
    const big = "y".repeat(300_000);
    expect(writtenText((out) => out.text(big))).toBe(big);
  });

  it("writes numbers as the exposition does", () => {
    const values = [
      0,
      -0,
      1,
      9,
      10,
      99,
      100,
      12345,
      2 ** 53 - 1,
      2 ** 53,
      1e21,
      0.5,
      -3,
      1.5e-7,
      NaN,
      Infinity,
      -Infinity,
    ];
    expect(writtenText((out) => values.forEach((v) => (out.number(v, formatValue), out.line())))).toBe(
      values.map((v) => `${formatValue(v)}\n`).join(""),
    );
  });

  it("one writer at a time, and a finished one lets the next write", () => {
    const first = new ChunkWriter(() => undefined);
    expect(() => new ChunkWriter(() => undefined)).toThrow(/already writing/);
    first.finish();
    expect(writtenText((out) => out.text("ok"))).toBe("ok");
  });
});
