/**
 * `sites.shard` from the environment or the command line, so that replicas of one StatefulSet
 * can each take the shard of their pod index: `i/n`, or the index alone beside SITEHOST_SHARD_COUNT.
 */
import { ConfigError } from "./errors.js";

export interface Shard {
  index: number;
  count: number;
}

const WHOLE = /^\d{1,9}$/;

/** `i/n` (or `i` when `count` is given apart); throws a ConfigError naming `source`. */
export function parseShard(text: string, source: string, count?: { value: string; source: string }): Shard {
  const expected = "expected i/n with whole numbers 0 <= i < n, such as 0/3";
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  let index: string;
  let total: string;
  if (m) {
    index = m[1] as string;
    total = m[2] as string;
    if (count && count.value.trim() !== total)
      throw new ConfigError([
        `${source}: ${JSON.stringify(text)} says ${total} shards but ${count.source} says ${JSON.stringify(count.value)}; set one count`,
      ]);
  } else if (count) {
    index = text.trim();
    total = count.value.trim();
    if (!WHOLE.test(total))
      throw new ConfigError([
        `${count.source}: ${JSON.stringify(count.value)} is not a whole number of at least 1`,
      ]);
  } else {
    throw new ConfigError([
      WHOLE.test(text.trim())
        ? `${source}: ${JSON.stringify(text)} is an index alone; give i/n or set SITEHOST_SHARD_COUNT`
        : `${source}: ${JSON.stringify(text)} is not a shard; ${expected}`,
    ]);
  }
  if (!WHOLE.test(index) || !WHOLE.test(total))
    throw new ConfigError([`${source}: ${JSON.stringify(text)} is not a shard; ${expected}`]);
  const shard = { index: Number(index), count: Number(total) };
  if (shard.count < 1) throw new ConfigError([`${source}: the shard count must be at least 1`]);
  if (shard.index >= shard.count)
    throw new ConfigError([
      `${source}: index ${shard.index} is not below the count ${shard.count} (indexes run from 0 to ${shard.count - 1})`,
    ]);
  return shard;
}

/** The shard chosen by the environment, or undefined when neither variable is set. */
export function shardFromEnv(env: NodeJS.ProcessEnv): Shard | undefined {
  const shard = env.SITEHOST_SHARD;
  const count = env.SITEHOST_SHARD_COUNT;
  const set = (v: string | undefined): v is string => v !== undefined && v !== "";
  if (!set(shard)) {
    if (set(count)) throw new ConfigError(["SITEHOST_SHARD_COUNT: set SITEHOST_SHARD (the index) with it"]);
    return undefined;
  }
  return parseShard(
    shard,
    "SITEHOST_SHARD",
    set(count) ? { value: count, source: "SITEHOST_SHARD_COUNT" } : undefined,
  );
}
