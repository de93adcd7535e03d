/**
 * One node-cron task per enabled collector. Every collector runs once at
 * start-up: discovery first (retried with backoff until it works), then the
 * others. Overlapping ticks are skipped by the runner.
 */
import cron, { type ScheduledTask } from "node-cron";
import type { Logger } from "pino";
import { COLLECTOR_NAMES, type Config } from "../config/schema.js";
import type { CollectorRunner } from "./runner.js";

export class Scheduler {
  private readonly tasks: ScheduledTask[] = [];
  private stopped = false;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly runner: CollectorRunner,
    private readonly config: Config,
    private readonly logger: Logger,
  ) {}

  start(): void {
    const discovery = this.runner.discoveryName;
    for (const name of COLLECTOR_NAMES) {
      if (!this.runner.isEnabled(name)) continue;
      const task = cron.schedule(
        this.config.collectors[name].schedule,
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
    let delay = 2000;
    while (!this.stopped) {
      const result = await this.runner.run(discovery);
      if (this.runner.discovered) break;
      if (result !== "skipped") {
        this.logger.warn({ retryInSeconds: delay / 1000 }, "site discovery failed at start-up; retrying");
      }
      await new Promise<void>((resolve) => {
        this.retryTimer = setTimeout(resolve, delay);
      });
      delay = Math.min(delay * 2, 60_000);
    }
    if (this.stopped) return;
    await Promise.all(
      COLLECTOR_NAMES.filter((n) => n !== discovery && this.runner.isEnabled(n)).map((n) =>
        this.runner.run(n),
      ),
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await Promise.all(this.tasks.map(async (t) => t.destroy()));
    await this.runner.stop();
  }
}
