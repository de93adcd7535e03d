/**
 * The shard layout a checkpoint directory was written under (`shard.json`), and what a new layout
 * does to it. When the shard count or this directory's shard index changes, some sites move to
 * another shard: their new owner has no checkpoint and starts from logs.startFrom, and the
 * checkpoints left here must never be resumed (should the site move back, they would replay or
 * skip what the other shard shipped meanwhile). They are moved to `archive/`, kept for the
 * platform's 7-day log retention (after which they could not be resumed anyway), then deleted.
 */
import { mkdir, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { shardOf } from "../discovery/shard.js";
import { gauge } from "../metrics/selfMetric.js";
import { writeFileAtomic } from "../util/atomicFile.js";
import { writeError } from "./volume.js";

export interface Shard {
  index: number;
  count: number;
}

/** How sites are assigned to shards; recorded so a future change of the hash is detected too. */
export const SHARD_HASH = "jump-fnv1a";

export interface ShardLayout extends Shard {
  version: 1;
  hash: string;
  updatedAt: string;
}

export interface ShardLayoutChange {
  changed: boolean;
  /** The layout of the previous run; undefined on a first run or from a release that kept none. */
  previous: ShardLayout | undefined;
  /** Site ids whose checkpoints were archived (they belong to other shards now). */
  archivedSites: number[];
}

export const LAYOUT_FILE = "shard.json";
export const ARCHIVE_DIR = "archive";
/** The platform keeps logs for 7 days: an older checkpoint could not be resumed without a gap. */
export const ARCHIVE_RETENTION_MS = 7 * 24 * 3600 * 1000;
/** A site's checkpoint: its snapshot and, beside it, its journal (they are archived together). */
const CHECKPOINT_FILE = /^site-(\d+)-[a-z]+\.(?:json|journal)$/;

/** The recorded layout; undefined when none (or unreadable: it is rewritten at the next start). */
export async function readShardLayout(dir: string): Promise<ShardLayout | undefined> {
  try {
    const v = JSON.parse(await readFile(join(dir, LAYOUT_FILE), "utf8")) as Partial<ShardLayout>;
    return typeof v.index === "number" && typeof v.count === "number" && typeof v.hash === "string"
      ? (v as ShardLayout)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Site ids of the checkpoint files in `dir` (snapshots and journals, per stream, so ids repeat). */
async function checkpointFiles(dir: string): Promise<Array<{ name: string; siteId: number }>> {
  const out: Array<{ name: string; siteId: number }> = [];
  for (const name of await readdir(dir).catch(() => [])) {
    const m = CHECKPOINT_FILE.exec(name);
    if (m) out.push({ name, siteId: Number(m[1]) });
  }
  return out;
}

/**
 * Without a record, existing checkpoints count as written under another layout (an older release
 * assigned shards differently); an empty directory is a first run, not a change.
 */
function differs(previous: ShardLayout | undefined, shard: Shard, checkpoints: number): boolean {
  if (!previous) return checkpoints > 0;
  return previous.index !== shard.index || previous.count !== shard.count || previous.hash !== SHARD_HASH;
}

/** Whether this run's shard differs from the one the directory's checkpoints were written under. */
export async function shardLayoutChanged(dir: string, shard: Shard): Promise<boolean> {
  return differs(await readShardLayout(dir), shard, (await checkpointFiles(dir)).length);
}

/**
 * At start, with the checkpoint lock held: archive the checkpoints of sites this shard no longer
 * owns, drop expired archives, and record the layout. Idempotent: a crash half-way is finished by
 * the next start, because the layout is recorded last. A write the volume refuses throws
 * CheckpointWriteError; what was done stays done and the rest is done at the next start.
 */
export async function reconcileShardLayout(
  dir: string,
  shard: Shard,
  logger: Logger,
  now = Date.now(),
): Promise<ShardLayoutChange> {
  try {
    return await reconcile(dir, shard, logger, now);
  } catch (err) {
    throw writeError("shard_layout", join(dir, LAYOUT_FILE), err);
  }
}

async function reconcile(dir: string, shard: Shard, logger: Logger, now: number): Promise<ShardLayoutChange> {
  await mkdir(dir, { recursive: true });
  const previous = await readShardLayout(dir);
  const files = await checkpointFiles(dir);
  const changed = differs(previous, shard, files.length);
  const leaving = files.filter((f) => shardOf(f.siteId, shard.count) !== shard.index);
  const archivedSites = [...new Set(leaving.map((f) => f.siteId))];
  if (leaving.length > 0) {
    const stamp = new Date(now).toISOString().replace(/[:.]/g, "-");
    const to = join(dir, ARCHIVE_DIR, `${stamp}-left-shard-${shard.index}-of-${shard.count}`);
    await mkdir(to, { recursive: true });
    for (const f of leaving) await rename(join(dir, f.name), join(to, f.name));
  }
  await pruneArchives(join(dir, ARCHIVE_DIR), now);
  if (changed || !previous) await writeLayout(dir, shard, now);
  if (changed || archivedSites.length > 0) {
    logger.warn(
      {
        dir,
        previous: previous ? `${previous.index}/${previous.count}` : "unknown",
        current: `${shard.index}/${shard.count}`,
        archivedSites: archivedSites.length,
      },
      "the shard layout changed since the last run: checkpoints of sites that now belong to other shards were archived (never resumed); sites new to this shard start from logs.startFrom",
    );
  }
  return { changed, previous, archivedSites };
}

async function pruneArchives(archive: string, now: number): Promise<void> {
  for (const name of await readdir(archive).catch(() => [])) {
    const path = join(archive, name);
    const { mtimeMs } = await stat(path);
    if (now - mtimeMs > ARCHIVE_RETENTION_MS) await rm(path, { recursive: true, force: true });
  }
}

async function writeLayout(dir: string, shard: Shard, now: number): Promise<void> {
  const layout: ShardLayout = {
    version: 1,
    index: shard.index,
    count: shard.count,
    hash: SHARD_HASH,
    updatedAt: new Date(now).toISOString(),
  };
  await writeFileAtomic(join(dir, LAYOUT_FILE), JSON.stringify(layout, null, 2) + "\n");
}

function shardInfo(registry: Registry) {
  return gauge(registry, {
    name: "sitehost_exporter_shard_info",
    help: "The shard this exporter serves (sites.shard as index/count); exported only while it collects and ships (not as a standby); always 1.",
    labelNames: ["shard"],
  });
}

/** `sitehost_exporter_shard_info{shard="i/n"} 1`, published by the exporter that serves the shard. */
export function publishShardInfo(registry: Registry, shard: Shard): void {
  shardInfo(registry).set({ shard: `${shard.index}/${shard.count}` }, 1);
}

/** The exporter stands by again: it no longer serves its shard. */
export function withdrawShardInfo(registry: Registry): void {
  shardInfo(registry).reset();
}
