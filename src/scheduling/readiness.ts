/**
 * When the exporter is ready (`/-/ready`): once discovery worked and every enabled collector finished
 * a first run, or, when the request budget stretches those first runs, `web.readyTimeout` after
 * discovery: a large account at a tight budget would otherwise stay unready for minutes (holding back
 * a rollout) while the hourly collectors' first runs crawl. The reason then names the first runs still
 * going.
 */
import type { Logger } from "pino";
import { durationMs } from "../config/duration.js";
import type { CollectorName } from "../config/schema.js";
import type { CheckpointVolumeStatus } from "../ha/volume.js";

export interface Readiness {
  ready: boolean;
  reason?: string;
}

export interface ReadinessInputs {
  /** When the first discovery succeeded (ms, the clock below), if it has. */
  discoveredAt(): number | undefined;
  /** The enabled collectors that have not finished a first run yet. */
  withoutFirstRun(): CollectorName[];
  /** Why the last discovery failed, if it did: /-/ready says it while discovery has not succeeded. */
  discoveryError?(): string | undefined;
  /** `web.readyTimeout`; 0 waits for every first run however long it takes. */
  readyTimeout: string;
  logger: Logger;
  now?: () => number;
}

export class ReadinessPolicy {
  private readyBeforeFirstRuns = false;
  private readonly now: () => number;
  private readonly log: Logger;

  constructor(private readonly inputs: ReadinessInputs) {
    this.now = inputs.now ?? Date.now;
    this.log = inputs.logger.child({ component: "collectors" });
  }

  check(): Readiness {
    const discoveredAt = this.inputs.discoveredAt();
    if (discoveredAt === undefined) {
      const error = this.inputs.discoveryError?.();
      return {
        ready: false,
        reason: `site discovery has not succeeded yet${error ? `: ${error}` : ""}`,
      };
    }
    const waiting = this.inputs.withoutFirstRun();
    if (waiting.length === 0) return { ready: true };
    const timeoutMs = durationMs(this.inputs.readyTimeout);
    if (timeoutMs > 0 && this.now() - discoveredAt >= timeoutMs) {
      if (!this.readyBeforeFirstRuns) {
        this.readyBeforeFirstRuns = true;
        this.log.warn(
          { collectors: waiting, readyTimeout: this.inputs.readyTimeout },
          "ready before these collectors finished a first run: the request budget stretches them; their metrics appear when they finish",
        );
      }
      return { ready: true, reason: `first run still going for ${waiting.join(", ")}` };
    }
    return { ready: false, reason: `waiting for a first run of ${waiting.join(", ")}` };
  }
}

/**
 * An exporter whose checkpoint directory does not take writes ships nothing and answers webhook
 * events 503: not ready, saying why (a standby's own reason, which names the directory, goes first).
 */
export function readinessWith(readiness: Readiness, volume: CheckpointVolumeStatus | undefined): Readiness {
  if (!readiness.ready || !volume || volume.writable) return readiness;
  return { ready: false, reason: volume.message };
}

/**
 * An exporter whose OTLP endpoint has refused every export for longer than
 * logs.exportFailureWarnAfter ships nothing until its configuration is fixed: not ready, saying why
 * (an endpoint that is down is waited for and is no reason: it is mostly a passing outage).
 */
export function readinessWithExports(readiness: Readiness, refusing: string | undefined): Readiness {
  if (!readiness.ready || refusing === undefined) return readiness;
  return { ready: false, reason: refusing };
}
