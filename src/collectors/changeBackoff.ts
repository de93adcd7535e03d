/**
 * Asking less often what does not change. Each thing a collector asks about (a site, a DNS record) is
 * asked at every run of the schedule until its answer is the same as the last one; then it waits
 * twice as long after each unchanged answer, up to `maxIntervalMs`. A first answer counts as one
 * unchanged answer (two runs): most answers stay the same, and the second run of every collector would
 * otherwise ask every site again while the others' first runs are still going. A changed answer, or a
 * wake (a webhook event about the site), brings it back to the schedule. Waits above one run are shortened by
 * up to a fifth, by key, so the things that back off spread over the runs instead of all coming due at
 * the same run. What an answer is compared by: a 32-bit hash of its JSON (a collision only delays one
 * read by one wait).
 */
import { fnv1a32 } from "../discovery/shard.js";
import { dueAtRun, MEAN_SPREAD_FACTOR, spreadWait, type CadenceSettings } from "./cadence.js";

/** The schedule's runs and `collectors.<name>.maxInterval` (at or under one run: no backoff). */
export type ChangeBackoffSettings = CadenceSettings;

interface Cadence {
  /** When it is next asked (ms). */
  dueAt: number;
  intervalMs: number;
  /** Hash of the last answer. */
  answer: number;
}

export type BackoffKey = number | string;

/** The share of runs that ask about a key whose answers stay the same, at steady state (the spread's mean taken). */
export function quietShare({ runEveryMs, maxIntervalMs }: ChangeBackoffSettings): number {
  if (maxIntervalMs <= runEveryMs) return 1;
  return Math.min(1, runEveryMs / (maxIntervalMs * MEAN_SPREAD_FACTOR));
}

export class ChangeBackoff {
  private readonly cadences = new Map<BackoffKey, Cadence>();

  constructor(readonly settings: ChangeBackoffSettings) {}

  /**
   * Whether a run at `nowMs` asks about `key`: at every run until its answers stay the same, then when
   * due (within half a run of its time).
   */
  due(key: BackoffKey, nowMs: number): boolean {
    const cadence = this.cadences.get(key);
    const { runEveryMs } = this.settings;
    return !cadence || cadence.intervalMs <= runEveryMs || dueAtRun(cadence.dueAt, nowMs, runEveryMs);
  }

  /** After an answer about `key` at `nowMs`: the same as the last one waits longer, another one does not. */
  answered(key: BackoffKey, answer: unknown, nowMs: number): void {
    const hash = fnv1a32(JSON.stringify(answer) ?? "");
    const last = this.cadences.get(key);
    const { runEveryMs, maxIntervalMs } = this.settings;
    const unchangedFrom = !last ? runEveryMs : last.answer === hash ? last.intervalMs : undefined;
    const intervalMs =
      unchangedFrom === undefined
        ? runEveryMs
        : Math.max(runEveryMs, Math.min(maxIntervalMs, unchangedFrom * 2));
    this.cadences.set(key, {
      dueAt: nowMs + spreadWait(key, intervalMs, runEveryMs),
      intervalMs,
      answer: hash,
    });
  }

  /** Ask about `key` at the next run; its next answer decides how long it waits after that. */
  wake(key: BackoffKey): void {
    const cadence = this.cadences.get(key);
    if (cadence) cadence.dueAt = 0;
  }

  /** Whether the next run (one run from `nowMs`) asks about `key`: what it will cost. */
  dueNext(key: BackoffKey, nowMs: number): boolean {
    return this.due(key, nowMs + this.settings.runEveryMs);
  }

  /** Wake every key (an event that names no site, about something any of them may have). */
  wakeAll(): void {
    for (const cadence of this.cadences.values()) cadence.dueAt = 0;
  }

  /** The share of runs that ask about `key` at steady state (1: every run). */
  share(key: BackoffKey): number {
    const cadence = this.cadences.get(key);
    return cadence ? this.settings.runEveryMs / Math.max(this.settings.runEveryMs, cadence.intervalMs) : 1;
  }

  /** Forget keys no longer asked about. */
  retain(keep: (key: BackoffKey) => boolean): void {
    for (const key of this.cadences.keys()) if (!keep(key)) this.cadences.delete(key);
  }
}
