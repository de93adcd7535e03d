/**
 * A change to a site as one source reports it, and when the change may have happened by that report.
 * Each source sees a change at a different moment: a webhook event when it arrives (just after the
 * change), an activity entry at the action's own time, the git and restore lists at the time the
 * deploy or restore was asked for (it completes later), the site list and the cms users between two
 * reads. Reports of one change from two sources have overlapping windows; that is how they are matched.
 */
import type { ChangeKind } from "./kinds.js";

export const CHANGE_SOURCES = ["activity", "webhook", "git", "restores", "sites", "access"] as const;
export type ChangeSource = (typeof CHANGE_SOURCES)[number];

/** Sources by how well their time tells when the change took effect: the first, best. */
const PRECISION: Record<ChangeSource, number> = {
  activity: 0,
  webhook: 1,
  git: 2,
  restores: 2,
  sites: 3,
  access: 3,
};

export function precisionOf(source: ChangeSource): number {
  return PRECISION[source];
}

const MINUTE = 60_000;
/** Clocks: an activity entry's time is the platform's, known here to about a second. */
const CLOCK_MS = MINUTE;
/** A webhook event arrives this long after its change at most (the platform's retries included). */
const DELIVERY_MS = 10 * MINUTE;
/** A deploy or restore completes this long after it was asked for at most. */
const COMPLETION_MS: Record<"git" | "restores", number> = { git: 60 * MINUTE, restores: 2 * 60 * MINUTE };

export interface ChangeReport {
  siteId: number;
  kind: ChangeKind;
  source: ChangeSource;
  /** What identifies this report within its source (an activity entry's id, an event's body, a time): a repeat is ignored. */
  key: string;
  /** The source's time of the change (ms). */
  atMs: number;
  /** The change happened within [fromMs, toMs] by this report. */
  fromMs: number;
  toMs: number;
}

type Reported = Omit<ChangeReport, "fromMs" | "toMs">;

/** The window of a report that has a time of its own. */
export function pointReport(r: Reported): ChangeReport {
  switch (r.source) {
    case "webhook":
      return { ...r, fromMs: r.atMs - DELIVERY_MS, toMs: r.atMs + CLOCK_MS };
    case "git":
    case "restores":
      return { ...r, fromMs: r.atMs - CLOCK_MS, toMs: r.atMs + COMPLETION_MS[r.source] };
    default:
      return { ...r, fromMs: r.atMs - CLOCK_MS, toMs: r.atMs + CLOCK_MS };
  }
}

/** A change seen between two reads (`sinceMs`, `atMs`): it happened in between. */
export function betweenReads(r: Reported, sinceMs: number): ChangeReport {
  return { ...r, fromMs: sinceMs - CLOCK_MS, toMs: r.atMs + CLOCK_MS };
}
