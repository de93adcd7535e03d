/**
 * Standing by or active. One writer per checkpoint directory (src/ha/lock.ts). With logs on, while
 * another exporter holds the lock this one stands by and runs nothing but its HTTP server; holding it,
 * it is active. A directory that cannot take writes now (full, read-only) does not fail the start:
 * the exporter stands by, saying why, until it can take the lock. A lost lock stops the active
 * exporter and stands by again. With logs off the directory holds only the traffic counters: the
 * exporter tries the lock once and is active either way, keeping the counters there only when it
 * holds it (a lost lock restarts it without them).
 */
import type { Logger } from "pino";
import type { CheckpointLock } from "../ha/lock.js";
import { CheckpointWriteError } from "../ha/volume.js";
import type { Readiness } from "../scheduling/readiness.js";
import type { Component } from "../util/components.js";
import type { ActiveExporter } from "./active.js";

export interface ActivationOptions {
  lock: CheckpointLock | undefined;
  /** Wait for the lock before anything runs (logs on), or run either way (logs off). */
  standBy: boolean;
  /** `holdsLock`: whether this exporter writes the checkpoint directory. */
  activate(holdsLock: boolean): Promise<ActiveExporter>;
  /** After the active exporter stopped because the lock was lost. */
  stoodDown?(): void;
  /** Called when taking over the lock could not start the exporter. */
  onFailed(): void;
  logger: Logger;
}

export class Activation implements Component {
  readonly name = "activation";
  private active: ActiveExporter | undefined;
  private readonly standby = new AbortController();
  private activating: Promise<void> = Promise.resolve();

  constructor(private readonly opts: ActivationOptions) {}

  get standingBy(): boolean {
    return this.active === undefined;
  }

  async start(): Promise<void> {
    const { lock } = this.opts;
    if (!this.opts.standBy) {
      this.active = await this.opts.activate(lock !== undefined && (await this.tryOnce(lock)));
      return;
    }
    const held = lock ? await lock.tryAcquire().catch(standByIfNotWritable) : true;
    if (held) {
      this.active = await this.opts.activate(lock !== undefined);
      return;
    }
    this.activating = this.watched(this.standBy());
  }

  /** The lock was lost: stop what it allowed, then stand by for it again (or, with logs off, run without it). */
  lost(): void {
    const previous = this.activating;
    this.activating = this.watched(
      (async () => {
        await previous.catch(() => undefined);
        const was = this.active;
        this.active = undefined;
        await was?.stop();
        this.opts.stoodDown?.();
        if (this.opts.standBy) await this.standBy();
        else if (!this.standby.signal.aborted) this.active = await this.opts.activate(false);
      })(),
    );
  }

  /** Wait for the lock (until stopped), then start the active exporter. */
  private async standBy(): Promise<void> {
    const { lock } = this.opts;
    if (!lock || this.standby.signal.aborted) return;
    if (await lock.acquire(this.standby.signal)) this.active = await this.opts.activate(true);
  }

  private watched(work: Promise<void>): Promise<void> {
    work.catch((err: unknown) => {
      this.opts.logger.error({ err }, "could not start after taking over the checkpoint lock");
      this.opts.onFailed();
    });
    return work;
  }

  /** One attempt at the lock, when not holding it is no reason to stand by. */
  private async tryOnce(lock: CheckpointLock): Promise<boolean> {
    try {
      if (await lock.tryAcquire()) return true;
      this.opts.logger.warn(
        { holder: lock.holder },
        "another exporter holds the checkpoint lock: traffic counters are not kept across restarts of this one",
      );
    } catch (err) {
      this.opts.logger.warn(
        { err },
        "the checkpoint directory cannot be written: traffic counters are not kept across restarts",
      );
    }
    return false;
  }

  readiness(): Readiness {
    return (
      this.active?.readiness() ?? { ready: false, reason: this.opts.lock?.standbyReason() ?? "starting" }
    );
  }

  /** What the status page says of the active parts; undefined while standing by. */
  status(): ReturnType<ActiveExporter["status"]> | undefined {
    return this.active?.status();
  }

  /** What /sd/probes lists; nothing while standing by (the active exporter lists the sites). */
  probeTargets(): ReturnType<ActiveExporter["probeTargets"]> {
    return this.active?.probeTargets() ?? [];
  }

  async stop(): Promise<void> {
    this.standby.abort();
    await this.activating.catch(() => undefined);
    await this.active?.stop();
  }
}

/** A first attempt the volume refused: stand by (and keep trying) instead of failing the start. */
function standByIfNotWritable(err: unknown): undefined {
  if (!(err instanceof CheckpointWriteError)) throw err;
  return undefined;
}
