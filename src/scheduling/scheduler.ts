/**
 * One node-cron task per enabled collector. Every collector runs once at start-up: discovery first
 * (retried with backoff until it works), then the others. Overlapping ticks are skipped by the runner.
 */
import cron, { type ScheduledTask } from "node-cron";
import type { Logger } from "pino";
import { COLLECTOR_NAMES, type Config } from "../config/schema.js";
import { backoffMs, pause } from "../util/time.js";
import type { CollectorRunner } from "./runner.js";

/** Discovery retries at start-up: from about 2 s, doubling, up to a minute. */
const DISCOVERY_RETRY = { baseMs: 2_000, capMs: 60_000 };

export interface SchedulerOptions {
  /** The backoff's jitter (tests pin it). */
  random?: () => number;
}

export class Scheduler {
  private readonly tasks: ScheduledTask[] = [];
  private readonly stopping = new AbortController();

  constructor(
    private readonly runner: CollectorRunner,
    /** `collectors`: each one's schedule. */
    private readonly settings: Config["collectors"],
    private readonly logger: Logger,
    private readonly opts: SchedulerOptions = {},
  ) {}

  start(): void {
    const discovery = this.runner.discoveryName;
    for (const name of COLLECTOR_NAMES) {
      if (!this.runner.isEnabled(name)) continue;
      const task = cron.schedule(
        this.settings[name].schedule,
        async () => {
          // The other collectors wait for a first discovery.
          if (name !== discovery && !this.runner.discovered) return;
          await this.runner.run(name);
        },
        { name: `collector-${name}` },
      );
      this.tasks.push(task);
    }
    void this.startup();
  }

  private async startup(): Promise<void> {
    const discovery = this.runner.discoveryName;
    const signal = this.stopping.signal;
    for (let attempt = 0; !signal.aborted; attempt++) {
      const outcome = await this.runner.run(discovery);
      if (this.runner.discovered) break;
      const waitMs = backoffMs(attempt, DISCOVERY_RETRY, this.opts.random);
      if (outcome.result !== "skipped") {
        this.logger.warn(
          { retryInSeconds: Math.round(waitMs / 100) / 10, err: outcome.error },
          "site discovery failed at start-up; retrying",
        );
      }
      await pause(waitMs, signal);
    }
    if (signal.aborted) return;
    await Promise.all(
      COLLECTOR_NAMES.filter((n) => n !== discovery && this.runner.isEnabled(n)).map((n) =>
        this.runner.run(n),
      ),
    );
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await Promise.all(this.tasks.map(async (t) => t.destroy()));
    await this.runner.stop();
  }
}
