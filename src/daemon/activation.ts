/**
 * Standing by or active. One writer per checkpoint directory: while another exporter holds the lock
 * (src/ha/lock.ts) this one stands by and runs nothing but its HTTP server; holding it (or with logs
 * off, where there is no lock) it is active. The first attempt at the lock fails the start when the
 * directory cannot be written; standing by does not.
 */
import type { Logger } from "pino";
import type { CheckpointLock } from "../ha/lock.js";
import type { Readiness } from "../scheduling/readiness.js";
import type { Component } from "../util/components.js";
import type { ActiveExporter } from "./active.js";

export interface ActivationOptions {
  lock: CheckpointLock | undefined;
  activate(): Promise<ActiveExporter>;
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
    if (!lock || (await lock.tryAcquire())) {
      this.active = await this.opts.activate();
      return;
    }
    this.activating = lock.acquire(this.standby.signal).then(async (acquired) => {
      if (acquired) this.active = await this.opts.activate();
    });
    this.activating.catch((err: unknown) => {
      this.opts.logger.error({ err }, "could not start after taking over the checkpoint lock");
      this.opts.onFailed();
    });
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

  async stop(): Promise<void> {
    this.standby.abort();
    await this.activating.catch(() => undefined);
    await this.active?.stop();
  }
}
