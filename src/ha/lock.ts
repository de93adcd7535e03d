/**
 * One writer per checkpoint directory. Two exporters on one directory (a scaled Deployment, a
 * rolling update, two pods on one shared volume) would both ship every log record and both
 * collect every site; the lock makes the second one a standby.
 *
 * Protocol (local and network filesystems, no flock): the lock lives in `<dir>/lock/` as files
 * named by a generation number, `<generation>.json`; the highest generation is the lock.
 * - A generation is claimed by creating its file with O_EXCL: of two contenders for the same
 *   generation exactly one succeeds, the other gets EEXIST. The winner re-reads the directory to
 *   confirm no higher generation appeared.
 * - The holder rewrites its file (temporary file + rename) every `timeoutMs / 4` with a new
 *   `heartbeatAt`, and at each heartbeat checks that no higher generation exists; if one does,
 *   the lock was taken over and `onLost` is called.
 * - A contender claims the next generation when the holder released it (graceful stop), when the
 *   holder is a dead process on the same kernel and in the same PID namespace, or when the
 *   holder's file has not changed for `timeoutMs` as seen on the contender's own monotonic clock
 *   (so clock skew between hosts does not matter).
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { gauge } from "../metrics/selfMetric.js";
import { pause } from "../util/time.js";
import { GenerationFiles } from "./lockFiles.js";
import { isDeadHere, parseHolder, selfIdentity, type Identity, type LockHolder } from "./lockHolder.js";

export type AcquiredHow = "free" | "released" | "dead" | "stale";

export interface CheckpointLockOptions {
  /** The checkpoint directory; the lock files go into its `lock/` subdirectory. */
  dir: string;
  /** A holder whose file did not change for this long is stale. */
  timeoutMs: number;
  logger: Logger;
  registry?: Registry;
  /** Tests stand in for other processes and hosts. */
  identity?: Partial<Identity>;
  /** Called once when the lock is lost while held (taken over, or heartbeats failing). */
  onLost?: (reason: string) => void;
}

function lockMetrics(registry: Registry) {
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

/** What a contender saw of the current generation, and since when (monotonic ms). */
interface Observation {
  generation: number;
  raw: string;
  since: number;
}

export class CheckpointLock {
  readonly lockDir: string;
  private readonly me: LockHolder;
  private readonly heartbeatMs: number;
  private readonly log: Logger;
  private readonly metrics: ReturnType<typeof lockMetrics> | undefined;
  private observed: Observation | undefined;
  private current: LockHolder | undefined;
  private heldGeneration: number | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private lastHeartbeat = 0;
  private lost = false;
  private readonly files: GenerationFiles;

  constructor(private readonly opts: CheckpointLockOptions) {
    this.lockDir = join(opts.dir, "lock");
    const now = new Date().toISOString();
    const owner = randomUUID();
    this.files = new GenerationFiles(this.lockDir, owner);
    this.me = {
      version: 1,
      owner,
      ...selfIdentity(),
      ...opts.identity,
      startedAt: new Date(performance.timeOrigin).toISOString(),
      heartbeatAt: now,
      generation: 0,
    };
    this.heartbeatMs = Math.max(50, Math.floor(opts.timeoutMs / 4));
    this.log = opts.logger.child({ component: "lock" });
    this.metrics = opts.registry ? lockMetrics(opts.registry) : undefined;
    this.metrics?.held.set(0);
  }

  get owner(): string {
    return this.me.owner;
  }

  get held(): boolean {
    return this.heldGeneration !== undefined && !this.lost;
  }

  /** The other exporter holding the lock, as last seen (undefined when none or when held here). */
  get holder(): LockHolder | undefined {
    return this.held ? undefined : this.current;
  }

  /** One line for /-/ready and logs while standing by. */
  standbyReason(): string {
    if (this.held) return "starting: the checkpoint lock is held, collectors and log tailers are starting";
    const h = this.current;
    if (!h) return `standby: waiting for the checkpoint lock on ${this.opts.dir}`;
    return `standby: the checkpoint lock on ${this.opts.dir} is held by exporter ${h.owner} (host ${h.host}, pid ${h.pid}, last heartbeat ${h.heartbeatAt})`;
  }

  /**
   * Stand by until this process holds the lock; false when `signal` aborted first. Errors of an
   * attempt (a volume gone for a moment) are logged and the next attempt follows; call
   * `tryAcquire` first to fail fast on a directory that cannot be written at all.
   */
  async acquire(signal: AbortSignal): Promise<boolean> {
    const poll = Math.min(1000, this.heartbeatMs);
    let announced: string | undefined;
    while (!signal.aborted) {
      try {
        if (await this.tryAcquire()) return true;
      } catch (err) {
        this.log.warn({ err, dir: this.opts.dir }, "checkpoint lock attempt failed");
      }
      const h = this.current;
      const who = h ? `${h.owner}@${h.generation}` : "unknown";
      if (announced !== who) {
        announced = who;
        this.log.warn(
          {
            dir: this.opts.dir,
            holder: h && { owner: h.owner, host: h.host, pid: h.pid, startedAt: h.startedAt },
            heartbeatAt: h?.heartbeatAt,
            lockTimeoutMs: this.opts.timeoutMs,
          },
          "the checkpoint directory is locked by another exporter; standing by (no collectors, no log tailing) until it stops or its heartbeat is older than logs.lockTimeout",
        );
      }
      await pause(poll, signal); // aborted: the loop ends
    }
    return false;
  }

  /** One attempt: how it was acquired, or undefined while another exporter holds it. */
  async tryAcquire(): Promise<AcquiredHow | undefined> {
    await this.files.ensureDir();
    const top = await this.files.highest();
    if (top === 0) return this.claim(1, "free");
    const raw = await this.files.read(top);
    if (raw === undefined) return undefined; // gone between listing and reading: look again
    const holder = parseHolder(raw);
    this.current = holder;
    this.updateHolderMetric(holder);
    let how: AcquiredHow | undefined;
    if (holder?.released) how = "released";
    else if (holder && isDeadHere(holder, this.me)) how = "dead";
    else {
      const now = performance.now();
      const seen = this.observed;
      if (!seen || seen.generation !== top || seen.raw !== raw) {
        this.observed = { generation: top, raw, since: now };
        return undefined;
      }
      if (now - seen.since < this.opts.timeoutMs) return undefined;
      how = "stale";
    }
    // Re-read: a holder that came back to life (or a release just written) must not be overtaken
    // on an old reading. A released lock may still be rewritten only by its releasing holder.
    const again = await this.files.read(top);
    if (again !== raw || (await this.files.highest()) !== top) return undefined;
    return this.claim(top + 1, how, holder);
  }

  /** Create generation `generation`; exactly one contender can. */
  private async claim(
    generation: number,
    how: AcquiredHow,
    previous?: LockHolder,
  ): Promise<AcquiredHow | undefined> {
    const content: LockHolder = { ...this.me, generation, heartbeatAt: new Date().toISOString() };
    if (!(await this.files.create(content))) return undefined; // another contender won
    // Confirm: nobody claimed a later generation meanwhile.
    if ((await this.files.highest()) !== generation) return undefined;
    this.heldGeneration = generation;
    this.current = content;
    this.lastHeartbeat = performance.now();
    this.metrics?.held.set(1);
    this.updateHolderMetric(content);
    this.log.info(
      {
        dir: this.opts.dir,
        owner: this.me.owner,
        generation,
        how,
        previous: previous && { owner: previous.owner, host: previous.host, pid: previous.pid },
      },
      how === "stale"
        ? "took over the checkpoint lock: its holder's heartbeat was older than logs.lockTimeout"
        : "acquired the checkpoint lock",
    );
    await this.files.removeOlderThan(generation);
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), this.heartbeatMs);
    this.heartbeatTimer.unref();
    return how;
  }

  /** Refresh the heartbeat, then check that no later generation took over. */
  private async heartbeat(): Promise<void> {
    const generation = this.heldGeneration;
    if (generation === undefined || this.lost) return;
    try {
      await this.files.write({ ...this.me, generation, heartbeatAt: new Date().toISOString() });
      if ((await this.files.highest()) > generation) {
        return this.loseLock("another exporter took over the checkpoint lock");
      }
      this.lastHeartbeat = performance.now();
    } catch (err) {
      this.log.warn({ err, dir: this.opts.dir }, "checkpoint lock heartbeat failed");
      if (performance.now() - this.lastHeartbeat > this.opts.timeoutMs) {
        this.loseLock("no heartbeat could be written for longer than logs.lockTimeout", err);
      }
    }
  }

  private loseLock(reason: string, err?: unknown): void {
    if (this.lost) return;
    this.lost = true;
    clearInterval(this.heartbeatTimer);
    this.metrics?.held.set(0);
    this.log.error({ dir: this.opts.dir, reason, err }, "lost the checkpoint lock");
    this.opts.onLost?.(reason);
  }

  /** Graceful stop: mark the lock released so a standby takes over at once. */
  async release(): Promise<void> {
    clearInterval(this.heartbeatTimer);
    const generation = this.heldGeneration;
    this.heldGeneration = undefined;
    if (generation === undefined || this.lost) return;
    this.metrics?.held.set(0);
    try {
      if ((await this.files.highest()) === generation) {
        await this.files.write({
          ...this.me,
          generation,
          released: true,
          heartbeatAt: new Date().toISOString(),
        });
        this.log.info({ dir: this.opts.dir, generation }, "released the checkpoint lock");
      }
    } catch (err) {
      this.log.warn(
        { err, dir: this.opts.dir },
        "could not release the checkpoint lock; a standby takes over once its heartbeat is stale",
      );
    }
  }

  private updateHolderMetric(h: LockHolder | undefined): void {
    if (!this.metrics) return;
    this.metrics.holder.reset();
    if (h) this.metrics.holder.set({ owner: h.owner, host: h.host, pid: String(h.pid) }, 1);
  }
}
