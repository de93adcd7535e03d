/**
 * The shard layout of a checkpoint directory: a new shard count archives exactly the checkpoints of
 * the sites that left this shard, keeps the others, and never brings an archived one back.
 */
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { shardOf } from "../../../src/discovery/shard.js";
import {
  ARCHIVE_DIR,
  publishShardInfo,
  readShardLayout,
  reconcileShardLayout,
  shardLayoutChanged,
} from "../../../src/ha/shardLayout.js";

const silent = pino({ level: "silent" });
const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function checkpointDir(siteIds: number[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "sitehost-shard-"));
  dirs.push(dir);
  for (const id of siteIds) {
    for (const stream of ["php", "server"]) {
      await writeFile(join(dir, `site-${id}-${stream}.json`), JSON.stringify({ siteId: id, stream }));
    }
  }
  return dir;
}

async function sitesIn(dir: string): Promise<number[]> {
  const ids = (await readdir(dir)).flatMap((n) => /^site-(\d+)-server\.json$/.exec(n)?.[1] ?? []);
  return ids.map(Number).sort((a, b) => a - b);
}

const ids = Array.from({ length: 600 }, (_, i) => 5000 + i);

describe("shard layout", () => {
  it("a first run records the layout and is no change", async () => {
    const dir = await checkpointDir([]);
    expect(await shardLayoutChanged(dir, { index: 0, count: 1 })).toBe(false);
    const r = await reconcileShardLayout(dir, { index: 0, count: 1 }, silent);
    expect(r).toEqual({ changed: false, previous: undefined, archivedSites: [] });
    expect(await readShardLayout(dir)).toMatchObject({ index: 0, count: 1, hash: "jump-fnv1a" });
  });

  it("from 3 to 4 shards, shard 1 archives exactly the sites that moved and keeps the rest", async () => {
    const mine = ids.filter((id) => shardOf(id, 3) === 1);
    const dir = await checkpointDir(mine);
    await reconcileShardLayout(dir, { index: 1, count: 3 }, silent);
    expect(await sitesIn(dir)).toEqual(mine);

    expect(await shardLayoutChanged(dir, { index: 1, count: 4 })).toBe(true);
    const r = await reconcileShardLayout(dir, { index: 1, count: 4 }, silent);
    const stay = mine.filter((id) => shardOf(id, 4) === 1);
    const moved = mine.filter((id) => shardOf(id, 4) !== 1);
    expect(r.changed).toBe(true);
    expect(r.previous).toMatchObject({ index: 1, count: 3 });
    expect([...r.archivedSites].sort((a, b) => a - b)).toEqual(moved);
    expect(await sitesIn(dir)).toEqual(stay);
    // About a quarter moved (all to the new shard 3); most keep their checkpoints.
    expect(moved.length).toBeGreaterThan(mine.length * 0.15);
    expect(moved.length).toBeLessThan(mine.length * 0.35);
    const [archive] = await readdir(join(dir, ARCHIVE_DIR));
    expect(archive).toMatch(/left-shard-1-of-4$/);
    expect((await readdir(join(dir, ARCHIVE_DIR, archive as string))).length).toBe(moved.length * 2);

    // The next start with the same layout changes nothing.
    expect(await reconcileShardLayout(dir, { index: 1, count: 4 }, silent)).toMatchObject({
      changed: false,
      archivedSites: [],
    });
  });

  it("a site that moves away and back starts afresh: its old checkpoint is not resumed", async () => {
    const site = ids.find((id) => shardOf(id, 2) === 0 && shardOf(id, 3) === 2) as number;
    const dir = await checkpointDir([site]);
    await reconcileShardLayout(dir, { index: 0, count: 2 }, silent);
    await reconcileShardLayout(dir, { index: 0, count: 3 }, silent);
    expect(await sitesIn(dir)).toEqual([]);
    const back = await reconcileShardLayout(dir, { index: 0, count: 2 }, silent);
    expect(back.changed).toBe(true);
    expect(await sitesIn(dir)).toEqual([]);
  });

  it("a site that moves away takes its journals into the archive with its snapshots", async () => {
    const site = ids.find((id) => shardOf(id, 2) === 1) as number;
    const dir = await checkpointDir([site]);
    for (const stream of ["php", "server"]) {
      await writeFile(join(dir, `site-${site}-${stream}.journal`), '{"s":1,"h":1,"a":[],"c":{}}\n{"k":1}\n');
    }
    await reconcileShardLayout(dir, { index: 0, count: 2 }, silent);
    expect((await readdir(dir)).filter((n) => n.startsWith("site-"))).toEqual([]);
    const [archive] = await readdir(join(dir, ARCHIVE_DIR));
    expect((await readdir(join(dir, ARCHIVE_DIR, archive as string))).sort()).toEqual([
      `site-${site}-php.journal`,
      `site-${site}-php.json`,
      `site-${site}-server.journal`,
      `site-${site}-server.json`,
    ]);
  });

  it("checkpoints without a recorded layout (an older release) count as a change", async () => {
    const dir = await checkpointDir([ids[0] as number]);
    expect(await shardLayoutChanged(dir, { index: 0, count: 1 })).toBe(true);
    expect((await reconcileShardLayout(dir, { index: 0, count: 1 }, silent)).changed).toBe(true);
    expect(await sitesIn(dir)).toEqual([ids[0]]); // one shard owns every site
    expect(await shardLayoutChanged(dir, { index: 0, count: 1 })).toBe(false);
  });

  it("archives older than the platform's 7-day retention are deleted", async () => {
    const site = ids.find((id) => shardOf(id, 2) === 1) as number;
    const dir = await checkpointDir([site]);
    await reconcileShardLayout(dir, { index: 0, count: 2 }, silent);
    expect(await readdir(join(dir, ARCHIVE_DIR))).toHaveLength(1);
    await reconcileShardLayout(dir, { index: 0, count: 2 }, silent, Date.now() + 6 * 86_400_000);
    expect(await readdir(join(dir, ARCHIVE_DIR))).toHaveLength(1);
    await reconcileShardLayout(dir, { index: 0, count: 2 }, silent, Date.now() + 8 * 86_400_000);
    expect(await readdir(join(dir, ARCHIVE_DIR))).toHaveLength(0);
  });

  it("shard info names the shard as index/count", async () => {
    const registry = new Registry();
    publishShardInfo(registry, { index: 1, count: 4 });
    expect(await registry.metrics()).toContain('sitehost_exporter_shard_info{shard="1/4"} 1');
  });
});
