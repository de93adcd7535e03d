import { describe, expect, it } from "vitest";
import type { Site } from "../../../src/api/schemas.js";
import { ConfigSchema } from "../../../src/config/schema.js";
import { filterSites, shardOf } from "../../../src/discovery/filter.js";
import { makeSite } from "../collectors/fixtures.js";

const sites: Site[] = [
  makeSite(1, { name: "shop-prod", tags: [{ id: 1, name: "team-a" }] }),
  makeSite(2, { name: "shop-staging", staging: true, tags: [{ id: 1, name: "team-a" }] }),
  makeSite(3, { name: "blog", tags: [{ id: 2, name: "team-b" }] }),
  makeSite(4, { name: "Sandbox-1", sandbox: true }),
  makeSite(5, { name: "kit-x", kit: true }),
];
const pick = (sitesConfig: Record<string, unknown>) =>
  filterSites(sites, ConfigSchema.parse({ sites: sitesConfig }).sites).map((s) => s.id);

describe("filterSites", () => {
  it("no filters keep every site", () => {
    expect(pick({})).toEqual([1, 2, 3, 4, 5]);
  });
  it("include by id, name, tag and name pattern (any of them matches)", () => {
    expect(pick({ include: { ids: [3] } })).toEqual([3]);
    expect(pick({ include: { names: ["kit-x"] } })).toEqual([5]);
    expect(pick({ include: { tags: ["team-a"] } })).toEqual([1, 2]);
    expect(pick({ include: { namePatterns: ["shop-*"] } })).toEqual([1, 2]);
    // patterns are case-insensitive globs; ? is one character
    expect(pick({ include: { namePatterns: ["sandbox-?"] } })).toEqual([4]);
    expect(pick({ include: { ids: [3], tags: ["team-a"] } })).toEqual([1, 2, 3]);
  });
  it("exclude by id, name, tag, pattern; exclude wins over include", () => {
    expect(pick({ exclude: { ids: [1] } })).toEqual([2, 3, 4, 5]);
    expect(pick({ exclude: { names: ["blog"] } })).toEqual([1, 2, 4, 5]);
    expect(pick({ exclude: { tags: ["team-a"] } })).toEqual([3, 4, 5]);
    expect(pick({ exclude: { namePatterns: ["*-staging"] } })).toEqual([1, 3, 4, 5]);
    expect(pick({ include: { tags: ["team-a"] }, exclude: { names: ["shop-staging"] } })).toEqual([1]);
  });
  it("kinds select live, staging, sandbox, kit", () => {
    expect(pick({ kinds: ["live"] })).toEqual([1, 3]);
    expect(pick({ kinds: ["staging", "kit"] })).toEqual([2, 5]);
    expect(pick({ kinds: ["sandbox"] })).toEqual([4]);
  });
});

describe("sharding", () => {
  it("with count 3, each of 1,000 ids lands in exactly one shard, each shard holding 25%–42%", () => {
    const many = Array.from({ length: 1000 }, (_, i) => makeSite(1000 + i));
    const shards = [0, 1, 2].map((index) =>
      filterSites(many, ConfigSchema.parse({ sites: { shard: { index, count: 3 } } }).sites).map((s) => s.id),
    );
    const all = shards.flat();
    expect(all).toHaveLength(1000); // no site twice …
    expect(new Set(all).size).toBe(1000); // … and none missing
    for (const shard of shards) {
      // 25% of 1000 = 250, 42% = 420
      expect(shard.length).toBeGreaterThanOrEqual(250);
      expect(shard.length).toBeLessThanOrEqual(420);
    }
  });
  it("a site's shard is stable, and count 1 keeps everything", () => {
    expect(shardOf(123456, 3)).toBe(shardOf(123456, 3));
    expect(pick({ shard: { index: 0, count: 1 } })).toEqual([1, 2, 3, 4, 5]);
  });
});
