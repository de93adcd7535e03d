/**
 * Whether the OTLP collector takes exports, for everything that ships to it (the log streams and the
 * webhook queue): one place that knows the endpoint, says in words what is wrong with it, and tells a
 * person at the right pace.
 *
 * - The first failure of each cause (connection refused, a 404, a timeout, …) is one warning naming the
 *   endpoint and what to check; the same cause again is not repeated, however many streams retry it.
 * - A failure that lasts longer than `lastingAfterMs` is a warning again, every `repeatEveryMs`, saying
 *   for how long: an exporter whose collector stays down is not quiet about it.
 * - The first success after failures is one info line with how long it took.
 * - An endpoint that answers but refuses every export (a non-retryable status for every record, a
 *   partial success that rejects them all, a 2xx that is not an OTLP answer) is `refusing`: a
 *   configuration to fix rather than an outage to wait out. Refusing for longer than `lastingAfterMs`
 *   makes the exporter not ready (`notReadyReason`), so that a rollout with a wrong endpoint stops.
 * `status()` is the state for the landing page and `/-/status`.
 */
import type { Logger } from "pino";
import { displayUrl } from "../../api/redact.js";
import { durationMs } from "../../config/duration.js";
import type { Config } from "../../config/schema.js";
import { systemClock, type Clock } from "../../util/time.js";
import { describeExportFailure } from "./failureText.js";
import { refusalReason, type ExportFailure } from "./outcome.js";
import { otlpSettings } from "./settings.js";

/** A lasting failure is warned about again this often. */
const LASTING_REPEAT_MS = 5 * 60_000;

export interface ExportHealthOptions {
  /** Failures lasting longer than this are warned about again, every `repeatEveryMs`. */
  lastingAfterMs: number;
  repeatEveryMs: number;
  clock: Pick<Clock, "now">;
}

/** One stream kind's shipping (php, server, activity, webhook). */
export interface StreamExportStatus {
  lastSuccessMs?: number;
  lastFailureMs?: number;
  lastError?: string;
  /** The last failure was the endpoint refusing the export (not an outage). */
  refused?: boolean;
}

export interface ExportStatus {
  /** The endpoint as messages show it (no credentials). */
  endpoint: string;
  /** "unknown" until the first export settles. */
  state: "ok" | "failing" | "unknown";
  /** While failing: since when (epoch ms), and the last error in words. */
  failingSinceMs?: number;
  lastError?: string;
  lastSuccessMs?: number;
  /** Whether the failure has lasted past the warning threshold. */
  lasting: boolean;
  /** By stream kind, those that exported or failed so far. */
  streams: Record<string, StreamExportStatus>;
  /** While failing because the endpoint answers but refuses every export: since when (epoch ms). */
  refusingSinceMs?: number;
  /** The last records a collector that takes exports rejected (dropped): when, how many, why. */
  lastRejection?: { atMs: number; records: number; reason: string };
}

export { describeExportFailure };

/** The cause of a failure, for "once per cause": the reason without what varies (numbers, detail). */
function causeOf(outcome: ExportFailure): string {
  const status = /^(HTTP|gRPC status) \d+/.exec(outcome.reason)?.[0];
  return `${outcome.kind} ${status ?? outcome.reason.replace(/\d+/g, "#").slice(0, 80)}`;
}

export class ExportHealth {
  private readonly endpoint: string;
  private failingSince: number | undefined;
  private lastError: string | undefined;
  private lastSuccess: number | undefined;
  private lastLastingWarning: number | undefined;
  private readonly causesWarned = new Set<string>();
  private settledOnce = false;
  private readonly streams = new Map<string, StreamExportStatus>();
  /** The first refusal since the last success or outage; undefined unless refusing. */
  private refusingSince: number | undefined;
  private lastRejection: ExportStatus["lastRejection"];

  constructor(
    private readonly url: string,
    private readonly log: Logger,
    private readonly opts: ExportHealthOptions,
  ) {
    this.endpoint = displayUrl(url);
  }

  /** An export failed and is retried. */
  failed(outcome: ExportFailure, stream: string): void {
    const now = this.opts.clock.now();
    this.settledOnce = true;
    this.failingSince ??= now;
    const text = describeExportFailure(this.url, outcome);
    this.lastError = text;
    const refused = refusalReason(outcome) !== undefined;
    // An outage in between (no answer, a 5xx) ends "refusing": whether the endpoint refuses is unknown.
    this.refusingSince = refused ? (this.refusingSince ?? now) : undefined;
    this.streams.set(stream, {
      ...this.streams.get(stream),
      lastFailureMs: now,
      lastError: text,
      refused: refused || undefined,
    });
    const cause = causeOf(outcome);
    if (!this.causesWarned.has(cause)) {
      this.causesWarned.add(cause);
      this.log.warn(
        { endpoint: this.endpoint, stream, reason: outcome.reason },
        `${text}; the records are kept and retried, reading waits meanwhile`,
      );
    }
    const lastedMs = now - this.failingSince;
    if (
      lastedMs >= this.opts.lastingAfterMs &&
      (this.lastLastingWarning === undefined || now - this.lastLastingWarning >= this.opts.repeatEveryMs)
    ) {
      this.lastLastingWarning = now;
      this.log.warn(
        { endpoint: this.endpoint, failingForSeconds: Math.round(lastedMs / 1000), reason: outcome.reason },
        `OTLP export to ${this.endpoint} has been failing for ${formatDuration(lastedMs)}: ${text}`,
      );
    }
  }

  /** An export of this stream kind was accepted. */
  succeeded(stream: string): void {
    const now = this.opts.clock.now();
    this.settledOnce = true;
    this.lastSuccess = now;
    this.streams.set(stream, { ...this.streams.get(stream), lastSuccessMs: now });
    if (this.failingSince !== undefined) {
      this.log.info(
        { endpoint: this.endpoint, failedForSeconds: Math.round((now - this.failingSince) / 1000) },
        `OTLP export to ${this.endpoint} works again after ${formatDuration(now - this.failingSince)}`,
      );
    }
    this.failingSince = undefined;
    this.refusingSince = undefined;
    this.lastLastingWarning = undefined;
    this.causesWarned.clear();
  }

  /** Records of an export the collector took were rejected (dropped) by it. */
  rejected(records: number, reason: string): void {
    this.lastRejection = { atMs: this.opts.clock.now(), records, reason };
  }

  /**
   * Why the exporter is not ready on account of the endpoint: it has refused every export for longer
   * than `lastingAfterMs` (an endpoint that is down is waited for, not a reason).
   */
  notReadyReason(): string | undefined {
    if (this.refusingSince === undefined) return undefined;
    const lastedMs = this.opts.clock.now() - this.refusingSince;
    if (lastedMs < this.opts.lastingAfterMs) return undefined;
    return `the OTLP endpoint has refused every export for ${formatDuration(lastedMs)}: ${this.lastError ?? this.endpoint}`;
  }

  status(): ExportStatus {
    const failing = this.failingSince !== undefined;
    return {
      endpoint: this.endpoint,
      state: !this.settledOnce ? "unknown" : failing ? "failing" : "ok",
      ...(failing ? { failingSinceMs: this.failingSince, lastError: this.lastError } : {}),
      ...(this.lastSuccess !== undefined ? { lastSuccessMs: this.lastSuccess } : {}),
      lasting: failing && this.opts.clock.now() - (this.failingSince as number) >= this.opts.lastingAfterMs,
      streams: Object.fromEntries(this.streams),
      ...(failing && this.refusingSince !== undefined ? { refusingSinceMs: this.refusingSince } : {}),
      ...(this.lastRejection ? { lastRejection: this.lastRejection } : {}),
    };
  }
}

/** "45 s", "3 min", "2 h 5 min". */
export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s} s`;
  const min = Math.round(s / 60);
  if (min < 120) return `${min} min`;
  return `${Math.floor(min / 60)} h ${min % 60} min`;
}

/** The export health of the endpoint the OTEL_* variables choose, with the config's threshold. */
export function exportHealthFor(
  config: Pick<Config, "logs">,
  env: NodeJS.ProcessEnv,
  logger: Logger,
  clock: Pick<Clock, "now"> = systemClock,
): ExportHealth {
  return new ExportHealth(otlpSettings(env).url, logger.child({ component: "otlp" }), {
    lastingAfterMs: durationMs(config.logs.exportFailureWarnAfter),
    repeatEveryMs: LASTING_REPEAT_MS,
    clock,
  });
}
