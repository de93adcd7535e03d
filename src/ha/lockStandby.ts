/**
 * The lock as a standby sees it: the lock's metrics, how long what it sees has stayed the same (on
 * its own monotonic clock, so clock skew between hosts does not matter), and what it says while it
 * waits.
 */
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { gauge } from "../metrics/selfMetric.js";
import type { LockHolder } from "./lockHolder.js";
import type { CheckpointWriteError } from "./volume.js";

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
