import { describe, expect, it } from "vitest";
import type { Site } from "../../../src/api/schemas.js";
import { ConfigSchema } from "../../../src/config/schema.js";
import { filterSites, shardOf } from "../../../src/discovery/filter.js";
import { fnv1a32, jumpHash } from "../../../src/discovery/shard.js";
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
  it.each([1, 2, 3, 7])(
    "going from %i to n + 1 shards moves only the sites of the new shard, about 1 in n + 1",
    (n) => {
      const ids = Array.from({ length: 10_000 }, (_, i) => 1000 + i);
      const moved = ids.filter((id) => shardOf(id, n) !== shardOf(id, n + 1));
      // Every moved site goes to the new shard; nothing moves between the old ones.
      expect(moved.filter((id) => shardOf(id, n + 1) !== n)).toEqual([]);
      // The minimum is 10,000 / (n + 1); a modulo would move about n / (n + 1) of them.
      const minimum = 10_000 / (n + 1);
      expect(moved.length).toBeGreaterThan(minimum * 0.9);
      expect(moved.length).toBeLessThan(minimum * 1.1);
    },
  );
  it("the assignment is fixed: FNV-1a and jump consistent hash, as published", () => {
    // Reference values of both algorithms; a change here would reassign sites in every sharded
    // deployment (their logs restart), so it must not happen by accident.
    expect(fnv1a32("a")).toBe(0xe40c292c);
    expect(fnv1a32("foobar")).toBe(0xbf9cf968);
    expect([jumpHash(0n, 60), jumpHash(1n, 60), jumpHash(2n, 60), jumpHash(256n, 1024)]).toEqual([
      0, 55, 46, 520,
    ]);
    expect(shardOf(1234, 5)).toBe(jumpHash(BigInt(fnv1a32("1234")), 5));
  });
  it("a site's shard is stable, and count 1 keeps everything", () => {
    expect(shardOf(123456, 3)).toBe(shardOf(123456, 3));
    expect(pick({ shard: { index: 0, count: 1 } })).toEqual([1, 2, 3, 4, 5]);
  });
});
