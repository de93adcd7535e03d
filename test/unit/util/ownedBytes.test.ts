import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { gzipText } from "../../../src/metrics/gzipMembers.js";
import { ownedBytes } from "../../../src/util/ownedBytes.js";

describe("ownedBytes", () => {
  it("copies a slice of a shared slab into memory that holds nothing else", () => {
    const pooled = Buffer.from("a few hundred bytes at most");
    expect(pooled.buffer.byteLength).toBeGreaterThan(pooled.length); // Node.js pools it
    const own = ownedBytes(pooled);
    expect(own.equals(pooled)).toBe(true);
    expect(own.buffer.byteLength).toBe(own.length);
  });

  it("is a copy, so the writer it came from can be reused", () => {
    const writer = Buffer.alloc(8, 1);
    const own = ownedBytes(writer);
    writer.fill(2);
    expect([...own]).toEqual(Array(8).fill(1));
  });
});

describe("gzipText", () => {
  it("returns compressed bytes that keep no shared slab alive", () => {
    const zipped = gzipText('sitehost_site_up{site_id="1"} 1\n');
    expect(zipped.buffer.byteLength).toBe(zipped.length);
    expect(gunzipSync(zipped).toString()).toBe('sitehost_site_up{site_id="1"} 1\n');
  });
});
