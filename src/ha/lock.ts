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
import { readFileSync, readlinkSync } from "node:fs";
import { mkdir, open, readdir, readFile, rename, unlink } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import type { Logger } from "pino";
import { Gauge, type Registry } from "prom-client";
import { getOrCreate } from "../metrics/registry.js";

/** Who holds (or held) the lock: the content of a generation file. */
export interface LockHolder {
  version: 1;
  /** Random per process: tells two processes apart even with the same host and pid. */
  owner: string;
  host: string;
  pid: number;
  /** When the holding process started. */
  startedAt: string;
  /** Refreshed every timeout / 4 while held. */
  heartbeatAt: string;
  generation: number;
  /** Set by a graceful stop: the next exporter takes over at once. */
  released?: boolean;
  /** Kernel boot and PID namespace: only there can a contender tell that the holder's pid is dead. */
  bootId?: string;
  pidNamespace?: string;
}

export type AcquiredHow = "free" | "released" | "dead" | "stale";

export interface CheckpointLockOptions {
  /** The checkpoint directory; the lock files go into its `lock/` subdirectory. */
  dir: string;
  /** A holder whose file did not change for this long is stale. */
  timeoutMs: number;
  logger: Logger;
  registry?: Registry;
  /** Tests stand in for other processes and hosts. */
  identity?: Partial<Pick<LockHolder, "host" | "pid" | "bootId" | "pidNamespace">>;
  /** Called once when the lock is lost while held (taken over, or heartbeats failing). */
  onLost?: (reason: string) => void;
}

const NAME = /^(\d+)\.json$/;
const TMP_MARK = ".tmp-";

function readOr(read: () => string): string | undefined {
  try {
    return read().trim();
  } catch {
    return undefined;
  }
}

/** The identity fields of this process. */
function selfIdentity(): Pick<LockHolder, "host" | "pid" | "bootId" | "pidNamespace"> {
  return {
    host: hostname(),
    pid: process.pid,
    bootId: readOr(() => readFileSync("/proc/sys/kernel/random/boot_id", "utf8")),
    pidNamespace: readOr(() => readlinkSync("/proc/self/ns/pid")),
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, it is someone else's.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function parseHolder(raw: string): LockHolder | undefined {
  try {
    const v = JSON.parse(raw) as Partial<LockHolder>;
    return typeof v.owner === "string" && typeof v.host === "string" && typeof v.pid === "number"
      ? (v as LockHolder)
      : undefined;
  } catch {
    return undefined;
  }
}

function lockMetrics(registry: Registry) {
  const registers = [registry];
  return {
    held: getOrCreate(
      registry,
      "sitehost_exporter_checkpoint_lock_held",
      () =>
        new Gauge({
          name: "sitehost_exporter_checkpoint_lock_held",
          help: "1 when this exporter holds the lock on its checkpoint directory (it collects and ships), 0 while it stands by.",
          registers,
        }),
    ),
    holder: getOrCreate(
      registry,
      "sitehost_exporter_checkpoint_lock_holder_info",
      () =>
        new Gauge({
          name: "sitehost_exporter_checkpoint_lock_holder_info",
          help: "The exporter holding the lock on this exporter's checkpoint directory (this one or another); always 1.",
          labelNames: ["owner", "host", "pid"],
          registers,
        }),
    ),
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
  private tmpCounter = 0;

  constructor(private readonly opts: CheckpointLockOptions) {
    this.lockDir = join(opts.dir, "lock");
    const now = new Date().toISOString();
    this.me = {
      version: 1,
      owner: randomUUID(),
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
        this.log.warn({ err: (err as Error).message, dir: this.opts.dir }, "checkpoint lock attempt failed");
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
      await delay(poll, undefined, { signal }).catch(() => undefined); // aborted: the loop ends
    }
    return false;
  }

  /** One attempt: how it was acquired, or undefined while another exporter holds it. */
  async tryAcquire(): Promise<AcquiredHow | undefined> {
    await mkdir(this.lockDir, { recursive: true });
    const top = await this.highest();
    if (top === 0) return this.claim(1, "free");
    const raw = await this.readGeneration(top);
    if (raw === undefined) return undefined; // gone between listing and reading: look again
    const holder = parseHolder(raw);
    this.current = holder;
    this.updateHolderMetric(holder);
    let how: AcquiredHow | undefined;
    if (holder?.released) how = "released";
    else if (holder && this.isDeadHere(holder)) how = "dead";
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
    const again = await this.readGeneration(top);
    if (again !== raw || (await this.highest()) !== top) return undefined;
    return this.claim(top + 1, how, holder);
  }

  /** Create generation `generation`; exactly one contender can. */
  private async claim(
    generation: number,
    how: AcquiredHow,
    previous?: LockHolder,
  ): Promise<AcquiredHow | undefined> {
    const content: LockHolder = { ...this.me, generation, heartbeatAt: new Date().toISOString() };
    let file;
    try {
      file = await open(this.fileOf(generation), "wx");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") return undefined; // another contender won
      throw err;
    }
    try {
      await file.writeFile(JSON.stringify(content, null, 2) + "\n");
      await file.sync();
    } finally {
      await file.close();
    }
    // Confirm: nobody claimed a later generation meanwhile.
    if ((await this.highest()) !== generation) return undefined;
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
    await this.removeOlderThan(generation);
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), this.heartbeatMs);
    this.heartbeatTimer.unref();
    return how;
  }

  /** Refresh the heartbeat, then check that no later generation took over. */
  private async heartbeat(): Promise<void> {
    const generation = this.heldGeneration;
    if (generation === undefined || this.lost) return;
    try {
      await this.write(generation, { heartbeatAt: new Date().toISOString() });
      if ((await this.highest()) > generation) {
        return this.loseLock("another exporter took over the checkpoint lock");
      }
      this.lastHeartbeat = performance.now();
    } catch (err) {
      this.log.warn({ err: (err as Error).message, dir: this.opts.dir }, "checkpoint lock heartbeat failed");
      if (performance.now() - this.lastHeartbeat > this.opts.timeoutMs) {
        this.loseLock(
          `no heartbeat could be written for longer than logs.lockTimeout (${(err as Error).message})`,
        );
      }
    }
  }

  private loseLock(reason: string): void {
    if (this.lost) return;
    this.lost = true;
    clearInterval(this.heartbeatTimer);
    this.metrics?.held.set(0);
    this.log.error({ dir: this.opts.dir, reason }, "lost the checkpoint lock");
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
      if ((await this.highest()) === generation) {
        await this.write(generation, { released: true, heartbeatAt: new Date().toISOString() });
        this.log.info({ dir: this.opts.dir, generation }, "released the checkpoint lock");
      }
    } catch (err) {
      this.log.warn(
        { err: (err as Error).message, dir: this.opts.dir },
        "could not release the checkpoint lock; a standby takes over once its heartbeat is stale",
      );
    }
  }

  /** The holder process is on this kernel and in this PID namespace, and no longer runs. */
  private isDeadHere(h: LockHolder): boolean {
    const me = this.me;
    if (!me.bootId || !me.pidNamespace || h.bootId !== me.bootId || h.pidNamespace !== me.pidNamespace) {
      return false;
    }
    // A process with this process's own pid in this namespace is this process: the holder is gone.
    return h.pid === process.pid || !isAlive(h.pid);
  }

  private async write(generation: number, change: Partial<LockHolder>): Promise<void> {
    const file = this.fileOf(generation);
    const tmp = `${file}${TMP_MARK}${this.me.owner}-${++this.tmpCounter}`;
    const content: LockHolder = { ...this.me, ...change, generation };
    const handle = await open(tmp, "w");
    try {
      await handle.writeFile(JSON.stringify(content, null, 2) + "\n");
    } finally {
      await handle.close();
    }
    await rename(tmp, file);
  }

  private fileOf(generation: number): string {
    return join(this.lockDir, `${generation}.json`);
  }

  private async highest(): Promise<number> {
    let top = 0;
    for (const name of await readdir(this.lockDir)) {
      const m = NAME.exec(name);
      if (m) top = Math.max(top, Number(m[1]));
    }
    return top;
  }

  private async readGeneration(generation: number): Promise<string | undefined> {
    try {
      return await readFile(this.fileOf(generation), "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw err;
    }
  }

  /** Earlier generations and temporary files left by killed processes. */
  private async removeOlderThan(generation: number): Promise<void> {
    for (const name of await readdir(this.lockDir)) {
      const m = NAME.exec(name);
      const old = m ? Number(m[1]) < generation : name.includes(TMP_MARK) && !name.includes(this.me.owner);
      if (old) await unlink(join(this.lockDir, name)).catch(() => undefined);
    }
  }

  private updateHolderMetric(h: LockHolder | undefined): void {
    if (!this.metrics) return;
    this.metrics.holder.reset();
    if (h) this.metrics.holder.set({ owner: h.owner, host: h.host, pid: String(h.pid) }, 1);
  }
}
