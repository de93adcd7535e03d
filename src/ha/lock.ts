/**
 * One writer per checkpoint directory. Two exporters on one directory (a scaled Deployment, a
 * rolling update, two pods on one shared volume) would both ship every log record and both
 * collect every site; the lock makes the second one a standby.
 *
 * Protocol (local and network filesystems, no flock): the lock lives in `<dir>/lock/` as files
 * named by a generation number, `<generation>.json`; the highest generation is the lock (files in
 * lockFiles.ts).
 * - A generation is claimed by creating its file whole with a hard link: of two contenders for the
 *   same generation exactly one succeeds, the other gets EEXIST. The winner re-reads the directory to
 *   confirm no higher generation appeared.
 * - The holder keeps its file open and rewrites it in place every `timeoutMs / 4` with a new
 *   `heartbeatAt`. Before each heartbeat, and before each checkpoint write (`verify`, which the
 *   checkpoint journal calls), it checks that its name still is its file and that no higher
 *   generation exists; if not (taken over, the directory deleted or recreated), the lock is lost at
 *   once: `onLost` is called, nothing more is written, and the process stands by to acquire it again.
 * - A contender claims the next generation when the holder released it (graceful stop), when the
 *   holder is a dead process on the same kernel and in the same PID namespace, when the holder's
 *   file is empty or unreadable (no exporter leaves one: creation is whole), or when the holder's
 *   file has not changed for `timeoutMs` as seen on the contender's own monotonic clock (so clock
 *   skew between hosts does not matter). Files named like generations that are not usable numbers
 *   (2^53 and beyond, leading zeros) are removed once unchanged for `timeoutMs`, with a warning.
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { ThrottledWarnings } from "../util/throttledLog.js";
import { pause } from "../util/time.js";
import { GenerationFiles, MAX_GENERATION, type OwnGeneration } from "./lockFiles.js";
import { parseHolder, selfIdentity, type Identity, type LockHolder } from "./lockHolder.js";
import { Contender, lockMetrics, StandbyNotice, type AcquiredHow } from "./lockStandby.js";
import {
  CheckpointWriteError,
  errnoCode,
  isVolumeFailure,
  writeError,
  type WriteFailures,
} from "./volume.js";

export type { AcquiredHow } from "./lockStandby.js";

export interface CheckpointLockOptions {
  /** The checkpoint directory; the lock files go into its `lock/` subdirectory. */
  dir: string;
  /** A holder whose file did not change for this long is stale. */
  timeoutMs: number;
  logger: Logger;
  registry?: Registry;
  /** Tests stand in for other processes and hosts. */
  identity?: Partial<Identity>;
  /** Called once each time the lock is lost while held (taken over, its file gone, heartbeats failing). */
  onLost?: (reason: string) => void;
  /** Where writes of the lock files that the volume refused are reported. */
  failures?: WriteFailures;
}

const iso = () => new Date().toISOString();

export class CheckpointLock {
  readonly lockDir: string;
  private readonly me: LockHolder;
  private readonly heartbeatMs: number;
  private readonly log: Logger;
  private readonly warnings: ThrottledWarnings;
  private readonly metrics: ReturnType<typeof lockMetrics> | undefined;
  private readonly contender: Contender;
  private current: LockHolder | undefined;
  private own: OwnGeneration | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private lastHeartbeat = 0;
  private lostReason: string | undefined;
  /** Why the last attempt could not write the lock (a full or read-only volume). */
  private writeProblem: CheckpointWriteError | undefined;
  private readonly files: GenerationFiles;

  constructor(private readonly opts: CheckpointLockOptions) {
    this.lockDir = join(opts.dir, "lock");
    const owner = randomUUID();
    this.files = new GenerationFiles(this.lockDir, owner);
    this.me = {
      version: 1,
      owner,
      ...selfIdentity(),
      ...opts.identity,
      startedAt: new Date(performance.timeOrigin).toISOString(),
      heartbeatAt: iso(),
      generation: 0,
    };
    this.heartbeatMs = Math.max(50, Math.floor(opts.timeoutMs / 4));
    this.log = opts.logger.child({ component: "lock" });
    this.warnings = new ThrottledWarnings(this.log, 60_000, { now: () => Date.now() });
    this.contender = new Contender(this.log, this.warnings, opts.dir, opts.timeoutMs, this.me);
    this.metrics = opts.registry ? lockMetrics(opts.registry) : undefined;
    this.metrics?.held.set(0);
  }

  get owner(): string {
    return this.me.owner;
  }

  get held(): boolean {
    return this.own !== undefined && this.lostReason === undefined;
  }

  /** The other exporter holding the lock, as last seen (undefined when none or when held here). */
  get holder(): LockHolder | undefined {
    return this.held ? undefined : this.current;
  }

  /** One line for /-/ready and logs while standing by. */
  standbyReason(): string {
    if (this.held) return "starting: the checkpoint lock is held, collectors and log tailers are starting";
    if (this.writeProblem) return `standby: cannot take the checkpoint lock: ${this.writeProblem.message}`;
    const h = this.current;
    if (!h) return `standby: waiting for the checkpoint lock on ${this.opts.dir}`;
    return `standby: the checkpoint lock on ${this.opts.dir} is held by exporter ${h.owner} (host ${h.host}, pid ${h.pid}, last heartbeat ${h.heartbeatAt})`;
  }

  /**
   * Stand by until this process holds the lock; false when `signal` aborted first. Errors of an
   * attempt (a volume gone or full for a while) are logged and the next attempt follows.
   */
  async acquire(signal: AbortSignal): Promise<boolean> {
    const poll = Math.min(1000, this.heartbeatMs);
    const standby = new StandbyNotice(this.log, this.opts.dir, this.opts.timeoutMs);
    while (!signal.aborted) {
      try {
        if (await this.tryAcquire()) return true;
      } catch (err) {
        // A refused write was reported (and logged) by the volume.
        if (!(err instanceof CheckpointWriteError)) {
          this.warnings.warn("attempt", { err, dir: this.opts.dir }, "checkpoint lock attempt failed");
        }
      }
      standby.say(this.writeProblem, this.current);
      await pause(poll, signal); // aborted: the loop ends
    }
    return false;
  }

  /**
   * One attempt: how it was acquired, or undefined while another exporter holds it. A write the
   * volume refuses throws CheckpointWriteError (reported; `standbyReason` names it).
   */
  async tryAcquire(): Promise<AcquiredHow | undefined> {
    try {
      const how = await this.attempt();
      this.writeProblem = undefined;
      return how;
    } catch (err) {
      if (!(err instanceof CheckpointWriteError) && !isVolumeFailure(err)) throw err;
      const e = writeError("lock", this.lockDir, err);
      this.writeProblem = e;
      this.opts.failures?.report(e);
      throw e;
    }
  }

  private async attempt(): Promise<AcquiredHow | undefined> {
    await this.files.ensureDir();
    const { top, absurd } = await this.files.list();
    if (absurd.length > 0 && !(await this.contender.clearAbsurd(this.files, absurd))) return undefined;
    if (top === 0) return this.claim(1, "free");
    const raw = await this.files.read(top);
    if (raw === undefined) return undefined; // gone between listing and reading: look again
    const holder = parseHolder(raw);
    this.current = holder;
    this.updateHolderMetric(holder);
    const how = this.contender.judge(top, raw, holder, this.files.fileOf(top));
    if (how === undefined) return undefined;
    // Re-read: a holder that came back to life (or a release just written) must not be overtaken
    // on an old reading. A released lock may still be rewritten only by its releasing holder.
    const again = await this.files.read(top);
    if (again !== raw || (await this.files.list()).top !== top) return undefined;
    if (top >= MAX_GENERATION) {
      // No generation after this one: the numbering starts again at 1, once the holder's file is
      // gone (a holder still alive then finds its file gone, as after any takeover).
      await this.files.removeName(`${top}.json`);
      return this.claim(1, how, holder);
    }
    return this.claim(top + 1, how, holder);
  }

  /** Create generation `generation`; exactly one contender can. */
  private async claim(
    generation: number,
    how: AcquiredHow,
    previous?: LockHolder,
  ): Promise<AcquiredHow | undefined> {
    const content: LockHolder = { ...this.me, generation, heartbeatAt: iso() };
    const own = await this.files.create(content);
    if (!own) return undefined; // another contender won
    // Confirm: nobody claimed a later generation meanwhile.
    if ((await this.files.list()).top !== generation) {
      await own.handle.close();
      return undefined;
    }
    this.own = own;
    this.lostReason = undefined;
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

  /**
   * Why this process does not hold the lock right now, or undefined while it does: its lock file
   * must still be the one it created and no later generation may exist (checked on disk,
   * synchronously: the checkpoint journal calls it before every write). A check that fails loses
   * the lock at once.
   */
  verify(): string | undefined {
    if (this.lostReason !== undefined) return this.lostReason;
    const own = this.own;
    if (!own) return "this exporter does not hold the checkpoint lock";
    let problem: string | undefined;
    try {
      problem = this.files.checkOwn(own);
    } catch (err) {
      problem = `its lock file cannot be checked (${errnoCode(err)})`;
    }
    if (problem !== undefined) this.loseLock(problem);
    return problem;
  }

  /** Check that the lock is still this process's, then refresh the heartbeat in its own file. */
  private async heartbeat(): Promise<void> {
    const own = this.own;
    if (!own || this.verify() !== undefined) return;
    try {
      await this.files.rewrite(own, { ...this.me, generation: own.generation, heartbeatAt: iso() });
      this.lastHeartbeat = performance.now();
    } catch (err) {
      this.opts.failures?.report(writeError("lock", this.files.fileOf(own.generation), err));
      this.warnings.warn(
        "heartbeat",
        { dir: this.opts.dir, code: errnoCode(err) },
        "checkpoint lock heartbeat failed",
      );
      if (performance.now() - this.lastHeartbeat > this.opts.timeoutMs) {
        this.loseLock("no heartbeat could be written for longer than logs.lockTimeout", err);
      }
    }
  }

  private loseLock(reason: string, err?: unknown): void {
    if (this.lostReason !== undefined || !this.own) return;
    this.lostReason = reason;
    clearInterval(this.heartbeatTimer);
    const own = this.own;
    this.own = undefined;
    void own.handle.close().catch(() => undefined);
    this.metrics?.held.set(0);
    this.log.error({ dir: this.opts.dir, reason, err }, "lost the checkpoint lock");
    this.opts.onLost?.(reason);
  }

  /** Graceful stop: mark the lock released so a standby takes over at once. */
  async release(): Promise<void> {
    clearInterval(this.heartbeatTimer);
    const own = this.own;
    this.own = undefined;
    if (!own) return;
    this.metrics?.held.set(0);
    try {
      if (this.lostReason === undefined && this.files.checkOwn(own) === undefined) {
        await this.files.rewrite(own, {
          ...this.me,
          generation: own.generation,
          released: true,
          heartbeatAt: iso(),
        });
        this.log.info({ dir: this.opts.dir, generation: own.generation }, "released the checkpoint lock");
      }
    } catch (err) {
      this.log.warn(
        { err, dir: this.opts.dir },
        "could not release the checkpoint lock; a standby takes over once its heartbeat is stale",
      );
    } finally {
      await own.handle.close().catch(() => undefined);
    }
  }

  private updateHolderMetric(h: LockHolder | undefined): void {
    if (!this.metrics) return;
    this.metrics.holder.reset();
    if (h) this.metrics.holder.set({ owner: h.owner, host: h.host, pid: String(h.pid) }, 1);
  }
}
