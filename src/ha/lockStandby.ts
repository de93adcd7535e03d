/**
 * The lock as a contender sees it: the lock's metrics, when what it sees may be taken (released, dead,
 * unreadable, or unchanged for the lock timeout on its own monotonic clock, so clock skew between
 * hosts does not matter), files named like generations that are not usable numbers, and what it says
 * while it waits.
 */
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { gauge } from "../metrics/selfMetric.js";
import type { ThrottledWarnings } from "../util/throttledLog.js";
import type { GenerationFiles } from "./lockFiles.js";
import { isDeadHere, type LockHolder } from "./lockHolder.js";
import type { CheckpointWriteError } from "./volume.js";

export type AcquiredHow = "free" | "released" | "dead" | "stale" | "unreadable" | "own";

export function lockMetrics(registry: Registry) {
  return {
    held: gauge(registry, {
      name: "sitehost_exporter_checkpoint_lock_held",
      help: "1 when this exporter holds the lock on its checkpoint directory (it collects and ships), 0 while it stands by.",
    }),
    holder: gauge(registry, {
      name: "sitehost_exporter_checkpoint_lock_holder_info",
      help: "The exporter holding the lock on this exporter's checkpoint directory (this one or another); always 1.",
      labelNames: ["owner", "host", "pid"],
    }),
  };
}

/** Whether what a contender sees has stayed the same for a while, on its own monotonic clock. */
export class Unchanged {
  private seen: { key: string; since: number } | undefined;
  for(key: string, ms: number): boolean {
    const now = performance.now();
    if (this.seen?.key !== key) {
      this.seen = { key, since: now };
      return false;
    }
    return now - this.seen.since >= ms;
  }
}

/** Says once per change why this exporter stands by: who holds the lock, or why it cannot be written. */
export class StandbyNotice {
  private said: string | undefined;

  constructor(
    private readonly log: Logger,
    private readonly dir: string,
    private readonly timeoutMs: number,
  ) {}

  say(problem: CheckpointWriteError | undefined, h: LockHolder | undefined): void {
    const what = problem ? `write:${problem.code}` : h ? `${h.owner}@${h.generation}` : undefined;
    if (what === undefined || what === this.said) return;
    this.said = what;
    if (problem) {
      this.log.warn(
        { dir: this.dir, code: problem.code },
        "the checkpoint lock cannot be written; standing by (no collectors, no log tailing) until logs.checkpointDir takes writes again",
      );
      return;
    }
    this.log.warn(
      {
        dir: this.dir,
        holder: h && { owner: h.owner, host: h.host, pid: h.pid, startedAt: h.startedAt },
        heartbeatAt: h?.heartbeatAt,
        lockTimeoutMs: this.timeoutMs,
      },
      "the checkpoint directory is locked by another exporter; standing by (no collectors, no log tailing) until it stops or its heartbeat is older than logs.lockTimeout",
    );
  }
}

/** What a contender judges of the lock directory it looks at. */
export class Contender {
  private readonly holderSeen = new Unchanged();
  private readonly absurdSeen = new Unchanged();

  constructor(
    private readonly log: Logger,
    private readonly warnings: ThrottledWarnings,
    private readonly dir: string,
    private readonly timeoutMs: number,
    private readonly me: LockHolder,
  ) {}

  /** How generation `top` (text `raw`, parsed `holder`) may be taken; undefined while its holder counts as alive. */
  judge(top: number, raw: string, holder: LockHolder | undefined, file: string): AcquiredHow | undefined {
    if (!holder) {
      // Creation is whole, so no exporter leaves an empty or torn file behind while it runs.
      this.warnings.warn(
        `unreadable ${top}`,
        { dir: this.dir, file },
        "the checkpoint lock file is empty or unreadable (left by an exporter that failed while creating it); it is taken as released",
      );
      return "unreadable";
    }
    if (holder.owner === this.me.owner) return "own";
    if (holder.released) return "released";
    if (isDeadHere(holder, this.me)) return "dead";
    return this.holderSeen.for(`${top}\n${raw}`, this.timeoutMs) ? "stale" : undefined;
  }

  /** Files named like generations that are not usable numbers: removed once unchanged for lockTimeout. */
  async clearAbsurd(files: GenerationFiles, names: string[]): Promise<boolean> {
    const fields = { dir: this.dir, files: names, lockTimeoutMs: this.timeoutMs };
    if (!this.absurdSeen.for(names.join("\n"), this.timeoutMs)) {
      this.warnings.warn(
        `absurd ${names.join(",")}`,
        fields,
        "the checkpoint lock directory holds files whose generation is not a usable number (2^53 or more, or leading zeros); they are removed as stale once unchanged for logs.lockTimeout",
      );
      return false;
    }
    for (const name of names) await files.removeName(name);
    this.log.warn(fields, "removed stale checkpoint lock files whose generation is not a usable number");
    return true;
  }
}
