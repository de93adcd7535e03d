/**
 * Whether the checkpoint directory (`logs.checkpointDir`) takes writes. Every write under it (the
 * checkpoint journals and snapshots, the read spool, the lock, the webhook queue, the shard layout)
 * that fails is reported here as a CheckpointWriteError: counted by reason, logged once per cause
 * (then at most once a minute with how many more), and it pauses log shipping. Nothing is lost by the
 * pause: a delta that cannot be written is never sent, an acknowledgement whose marker cannot be
 * written is kept in memory (and replayed if the process dies), a webhook that cannot be queued is
 * answered 503. While paused, a probe write every few seconds finds out when the volume takes writes
 * again (space freed, remounted read-write), and shipping resumes by itself.
 */
import type { Logger } from "pino";
import type { Counter, Gauge, Registry } from "prom-client";
import { counter, gauge } from "../metrics/selfMetric.js";
import { ThrottledWarnings } from "../util/throttledLog.js";
import { writeProbe } from "../util/writeProbe.js";

const WRITE_FAILURE_REASONS = ["no_space", "read_only", "permission", "other"] as const;
export type WriteFailureReason = (typeof WRITE_FAILURE_REASONS)[number];

/** What was being written. */
export type CheckpointFileKind =
  "journal" | "snapshot" | "spool" | "lock" | "webhook_queue" | "shard_layout" | "probe";

const CODES: Record<string, { reason: WriteFailureReason; words: string }> = {
  ENOSPC: { reason: "no_space", words: "no space left on the device" },
  EDQUOT: { reason: "no_space", words: "disk quota exceeded" },
  EROFS: { reason: "read_only", words: "read-only file system" },
  EACCES: { reason: "permission", words: "permission denied" },
  EPERM: { reason: "permission", words: "operation not permitted" },
};

const KIND_WORDS: Record<CheckpointFileKind, string> = {
  journal: "checkpoint journal",
  snapshot: "checkpoint snapshot",
  spool: "read spool file",
  lock: "checkpoint lock file",
  webhook_queue: "webhook queue",
  shard_layout: "shard layout record",
  probe: "probe file",
};

/** The errno code of a failed file operation ("EIO" and the like), or "error". */
export function errnoCode(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === "string" ? code : "error";
}

/** Whether a failed write says the volume cannot take writes now (full, read-only, refused). */
export function isVolumeFailure(err: unknown): boolean {
  return errnoCode(err) in CODES;
}

export class CheckpointWriteError extends Error {
  readonly code: string;
  readonly reason: WriteFailureReason;

  constructor(
    readonly kind: CheckpointFileKind,
    readonly path: string,
    cause: unknown,
  ) {
    const code = errnoCode(cause);
    const known = CODES[code];
    const why = known ? `${known.words}, ${code}` : (cause as Error | undefined)?.message || code;
    super(
      `cannot write the ${KIND_WORDS[kind]} ${path} under logs.checkpointDir (${why}); log shipping is ` +
        "paused (nothing is acknowledged that could be lost) and resumes by itself once the directory takes writes again",
      { cause },
    );
    this.name = "CheckpointWriteError";
    this.code = code;
    this.reason = known?.reason ?? "other";
  }
}

/** `err` as a CheckpointWriteError about `path` (itself when it is one already). */
export function writeError(kind: CheckpointFileKind, path: string, err: unknown): CheckpointWriteError {
  return err instanceof CheckpointWriteError ? err : new CheckpointWriteError(kind, path, err);
}

/** Where a failed write goes: the volume in the daemon, nowhere in tests that do not care. */
export interface WriteFailures {
  report(err: CheckpointWriteError): void;
}

export type CheckpointVolumeStatus =
  | { writable: true }
  | {
      writable: false;
      reason: WriteFailureReason;
      code: string;
      kind: CheckpointFileKind;
      path: string;
      /** When the first failed write of this outage happened (epoch ms). */
      sinceMs: number;
      failures: number;
      /** One line for the landing page and /-/ready. */
      message: string;
    };

export interface CheckpointVolumeOptions {
  dir: string;
  logger: Logger;
  registry?: Registry;
  /** How often a paused volume is probed (default 5 s). */
  probeIntervalMs?: number;
}

/** Failed writes by reason and file, every pair at 0 from the start: rate() and increase() see the first. */
function writeErrorCounter(registry: Registry): Counter {
  const errors = counter(registry, {
    name: "sitehost_exporter_checkpoint_write_errors_total",
    help: "Writes under logs.checkpointDir that failed, by reason (no_space, read_only, permission, other) and file (journal, snapshot, spool, lock, webhook_queue, shard_layout, probe).",
    labelNames: ["reason", "file"],
  });
  for (const reason of WRITE_FAILURE_REASONS) {
    for (const file of Object.keys(KIND_WORDS)) errors.inc({ reason, file }, 0);
  }
  return errors;
}

function pausedGauge(registry: Registry): Gauge {
  const paused = gauge(registry, {
    name: "sitehost_exporter_log_shipping_paused",
    help: "1 while writes under logs.checkpointDir fail: no log stream is read or shipped and webhook events are answered 503, so nothing is acknowledged that could be lost; shipping resumes by itself once a probe write succeeds.",
  });
  paused.set(0);
  return paused;
}

export class CheckpointVolume implements WriteFailures {
  private failing: Exclude<CheckpointVolumeStatus, { writable: true }> | undefined;
  private readonly reported = new WeakSet<Error>();
  private readonly log: Logger;
  private readonly warnings: ThrottledWarnings;
  private readonly errors: Counter | undefined;
  private readonly pausedNow: Gauge | undefined;
  private timer: NodeJS.Timeout | undefined;
  private probing = false;

  constructor(private readonly opts: CheckpointVolumeOptions) {
    this.log = opts.logger.child({ component: "checkpoint-dir" });
    this.warnings = new ThrottledWarnings(this.log, 60_000, { now: () => Date.now() });
    this.errors = opts.registry && writeErrorCounter(opts.registry);
    this.pausedNow = opts.registry && pausedGauge(opts.registry);
  }

  /** True while writes fail: no log stream is read, nothing new is sent. */
  get paused(): boolean {
    return this.failing !== undefined;
  }

  status(): CheckpointVolumeStatus {
    return this.failing ? { ...this.failing } : { writable: true };
  }

  /** A write failed: count it, log it (once per cause and minute), pause until a probe succeeds. */
  report(err: CheckpointWriteError): void {
    if (this.reported.has(err)) return;
    this.reported.add(err);
    this.errors?.inc({ reason: err.reason, file: err.kind });
    const fields = { dir: this.opts.dir, path: err.path, code: err.code, file: err.kind };
    if (this.failing) {
      this.failing.failures += 1;
      this.warnings.error(`${err.reason} ${err.kind}`, fields, err.message);
      return;
    }
    this.failing = {
      writable: false,
      reason: err.reason,
      code: err.code,
      kind: err.kind,
      path: err.path,
      sinceMs: Date.now(),
      failures: 1,
      message: err.message,
    };
    this.pausedNow?.set(1);
    // The first of an outage is always logged; the same cause again only once a minute.
    this.warnings.error(`${err.reason} ${err.kind}`, fields, err.message);
    const every = this.opts.probeIntervalMs ?? 5_000;
    this.timer = setInterval(() => void this.probe(), every);
    this.timer.unref();
  }

  /** Whether the directory takes writes now (see writeProbe); resumes shipping when it does. */
  async probe(): Promise<boolean> {
    if (this.probing) return false;
    this.probing = true;
    try {
      await writeProbe(this.opts.dir);
    } catch (err) {
      if (this.failing) this.failing.failures += 1;
      const reason = new CheckpointWriteError("probe", this.opts.dir, err).reason;
      this.errors?.inc({ reason, file: "probe" });
      return false;
    } finally {
      this.probing = false;
    }
    this.resume();
    return true;
  }

  private resume(): void {
    const was = this.failing;
    if (!was) return;
    this.failing = undefined;
    clearInterval(this.timer);
    this.timer = undefined;
    this.pausedNow?.set(0);
    this.log.info(
      {
        dir: this.opts.dir,
        pausedForSeconds: Math.round((Date.now() - was.sinceMs) / 1000),
        failedWrites: was.failures,
      },
      "logs.checkpointDir takes writes again; log shipping resumes",
    );
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
