/** Text given in pieces comes back whole from the members, each member bounded in text. */
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { GzipMembers } from "../../../src/metrics/gzipMembers.js";

describe("GzipMembers", () => {
  it("starts a member once about memberChars of text are pending, and the members read back as the text", () => {
    const members = new GzipMembers(1000);
    const pieces = Array.from({ length: 50 }, (_, i) => `line ${i} ${"x".repeat(i * 7)}\n`);
    for (const piece of pieces) members.add(piece);
    const out = members.finish();
    expect(out.length).toBeGreaterThan(5);
    for (const member of out) expect(gunzipSync(member).length).toBeLessThan(1000 + 50 * 7 + 20);
    expect(gunzipSync(Buffer.concat(out)).toString("utf8")).toBe(pieces.join(""));
  });

  it("gives one empty member for no text, so a body is always valid gzip", () => {
    const out = new GzipMembers().finish();
    expect(out).toHaveLength(1);
    expect(gunzipSync(out[0] as Buffer).toString("utf8")).toBe("");
  });
});
