/**
 * V8's memory saver mode while the log path is quiet, not while it drains a backlog.
 *
 * V8 keeps the pages a full collection frees in a pool for the heap's next growth, resident: a
 * process shipping logs holds the largest heap it has had, not the heap it uses (at 5,000 sites
 * about 70 MB more). In memory saver mode every full collection reduces memory and gives that pool
 * back. At a fleet's steady load (5,000 sites: about 3,500 new records/s) that costs no CPU a run
 * can tell apart; draining a backlog (25,000 records/s and more) it costs about 60 % more CPU per
 * record. So the mode is on while the pipeline takes fewer new records from the pages it reads than
 * DRAIN_RECORDS_PER_SECOND, and off within one short window of taking more; back on after
 * QUIET_WINDOWS windows below QUIET_RECORDS_PER_SECOND. New records taken, not records shipped
 * (a newest-first backlog is read to its end before any of it is shipped) and not entries read (a
 * fleet re-reads three times as many as it ships, to deduplicate), measure the work.
 *
 * Only where the exporter chose the heap flags itself (not with SITEHOST_NODE_FLAGS, or the user's
 * own heap flags): see cli/v8Flags.ts.
 */
import { setFlagsFromString } from "node:v8";

/** Above this many new records taken per second, a backlog is draining: CPU first. */
export const DRAIN_RECORDS_PER_SECOND = 10_000;
/** Below this, a window counts as quiet. */
export const QUIET_RECORDS_PER_SECOND = 5_000;
/** The rate is taken over windows this long ... */
export const WINDOW_MS = 2_000;
/** ... and the mode comes back after this many quiet ones in a row. */
export const QUIET_WINDOWS = 8;

/**
 * Quiet: memory saver mode, and the old generation let grow by a quarter of the live heap before
 * the next full collection instead of 40 % (the top of the sawtooth is the resident peak).
 */
export const MEMORY_SAVER_ON = "--memory-saver-mode --heap-growing-percent=25";
/** Draining: V8's default mode and the logging flags' growth. */
export const MEMORY_SAVER_OFF = "--no-memory-saver-mode --heap-growing-percent=40";

/** Whether the mode should be on after a window at `perSecond`, given `quiet` quiet windows before it. */
export function memorySaverAfter(
  on: boolean,
  perSecond: number,
  quiet: number,
): { on: boolean; quiet: number } {
  if (perSecond > DRAIN_RECORDS_PER_SECOND) return { on: false, quiet: 0 };
  const nowQuiet = perSecond < QUIET_RECORDS_PER_SECOND ? quiet + 1 : 0;
  return { on: on || nowQuiet >= QUIET_WINDOWS, quiet: nowQuiet };
}

export interface MemorySaverDeps {
  /** New records taken from the pages read since the pipeline started. */
  taken: () => number;
  /** Where the flag goes (V8's own by default). */
  setFlags?: (flags: string) => void;
  /** A log line when the mode changes. */
  changed?: (on: boolean, perSecond: number) => void;
}

/** Switches the mode by the rate new records are taken at, every WINDOW_MS from `start` to `stop`. */
export class MemorySaver {
  private on = false;
  private quiet = 0;
  private last = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly setFlags: (flags: string) => void;

  constructor(private readonly deps: MemorySaverDeps) {
    this.setFlags = deps.setFlags ?? setFlagsFromString;
  }

  /** On at once (a pipeline starts quiet), then by the rate. */
  start(): void {
    this.last = this.deps.taken();
    this.apply(true, 0);
    this.timer = setInterval(() => this.window(), WINDOW_MS);
    this.timer.unref();
  }

  /** One window ended: the rate over it decides. */
  window(): void {
    const taken = this.deps.taken();
    const perSecond = ((taken - this.last) * 1000) / WINDOW_MS;
    this.last = taken;
    const next = memorySaverAfter(this.on, perSecond, this.quiet);
    this.quiet = next.quiet;
    if (next.on !== this.on) this.apply(next.on, perSecond);
  }

  /** Back to V8's default (off) and no more windows. */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    // Not a change of load: nothing to report, V8's default back.
    if (this.on) this.setFlags(MEMORY_SAVER_OFF);
    this.on = false;
  }

  private apply(on: boolean, perSecond: number): void {
    this.on = on;
    this.setFlags(on ? MEMORY_SAVER_ON : MEMORY_SAVER_OFF);
    this.deps.changed?.(on, perSecond);
  }
}
