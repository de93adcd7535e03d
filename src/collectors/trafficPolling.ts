/**
 * Adaptive traffic polling. A busy live site is asked at every run of the schedule; a live site whose
 * last answer showed no requests waits twice as long after each such answer, and a staging, sandbox
 * or kit site waits the longest, up to `collectors.traffic.maxInterval`. The counters stay exact
 * (every period is counted from a later answer); only how fresh they and the gauges are moves. No
 * site ever waits longer than the window one answer covers, less the settle delay and two runs.
 * Waits above one run are shortened by up to a fifth, by site, so slow sites spread over the runs.
 */
import type { Site } from "../api/schemas.js";
import { siteKind } from "../discovery/kind.js";
import { dueAtRun, spreadWait, type CadenceSettings } from "./cadence.js";
import { TRAFFIC_SETTLE_SECONDS } from "./trafficCounts.js";

/** The schedule's runs and `collectors.traffic.maxInterval`. */
export type TrafficPollingSettings = CadenceSettings;

interface SitePolling {
  /** When the site is next asked (ms). */
  dueAt: number;
  intervalMs: number;
  /** Answers in a row without requests. */
  idleAnswers: number;
}

export class TrafficPolling {
  private readonly sites = new Map<number, SitePolling>();
  /** The window the last answer covered, ms (its end less its start), when it said. */
  private windowMs: number | undefined;

  constructor(private readonly settings: TrafficPollingSettings) {}

  /** Whether a run at `nowMs` asks about the site (a site is due within half a run of its time). */
  due(siteId: number, nowMs: number): boolean {
    const polling = this.sites.get(siteId);
    return !polling || dueAtRun(polling.dueAt, nowMs, this.settings.runEveryMs);
  }

  /** After an answer about the site at `nowMs`: when it is asked next. */
  answered(site: Site, nowMs: number, busy: boolean, windowSeconds: number | undefined): void {
    if (windowSeconds !== undefined && windowSeconds > 0) this.windowMs = windowSeconds * 1000;
    const idleAnswers = busy ? 0 : (this.sites.get(site.id)?.idleAnswers ?? 0) + 1;
    const intervalMs = this.intervalFor(site, idleAnswers);
    this.sites.set(site.id, { dueAt: nowMs + intervalMs, intervalMs, idleAnswers });
  }

  /** Average requests per run over these sites (a site not asked yet: one per run). */
  requestsPerRun(sites: readonly Site[]): number {
    let sum = 0;
    for (const site of sites)
      sum += this.settings.runEveryMs / (this.sites.get(site.id)?.intervalMs ?? this.settings.runEveryMs);
    return sum;
  }

  /** Forget sites no longer selected. */
  retain(selected: ReadonlySet<number>): void {
    for (const id of this.sites.keys()) if (!selected.has(id)) this.sites.delete(id);
  }

  /** The longest wait: the configured ceiling, within what the window covers. */
  private ceilingMs(): number {
    const { runEveryMs, maxIntervalMs } = this.settings;
    const windowCover =
      this.windowMs === undefined ? Infinity : this.windowMs - TRAFFIC_SETTLE_SECONDS * 1000 - 2 * runEveryMs;
    return Math.max(runEveryMs, Math.min(maxIntervalMs, windowCover));
  }

  private intervalFor(site: Site, idleAnswers: number): number {
    const { runEveryMs } = this.settings;
    const ceiling = this.ceilingMs();
    const live = siteKind(site) === "live";
    const wait = live ? Math.min(ceiling, runEveryMs * 2 ** Math.min(idleAnswers, 20)) : ceiling;
    return spreadWait(site.id, wait, runEveryMs);
  }
}
