/**
 * Restores of a site from its backups. The platform's documentation shows the statuses `in_progress`
 * and `completed` and says a failed restore carries `failedAt` and `error` without naming its status,
 * so a restore is
 * read as failed when it has a failure time (or says so), completed when it has a completion time (or
 * says so), failed when it has an error but no completion, and otherwise by its status as given
 * (`in_progress`, or any other value, kept as it is).
 */
import type { Restore } from "../api/schemas.js";
import { parseApiTime } from "../api/times.js";
import type { Sample } from "../metrics/sample.js";
import { sampleFor, type SiteRef } from "../metrics/siteSample.js";

export const RESTORE_STATES = ["in_progress", "completed", "failed"] as const;
const FAILED_WORDS = new Set(["failed", "failure", "error", "errored"]);
const COMPLETED_WORDS = new Set(["completed", "complete", "succeeded", "success", "restored"]);

function present(value: unknown): boolean {
  return value !== null && value !== undefined && value !== "";
}

export function restoreState(r: Restore): string {
  const status = r.status.trim().toLowerCase();
  if (present(r.failedAt) || FAILED_WORDS.has(status)) return "failed";
  if (present(r.completedAt) || COMPLETED_WORDS.has(status)) return "completed";
  // An error without a completion: failed, whatever the status still says.
  return present(r.error) ? "failed" : status;
}

/**
 * The latest restore (by `created`) as a state set and its time; the restores of the listing's newest
 * page counted by state, a state only while it has one (most sites have no restore: nothing at all).
 */
export function collectRestores(site: SiteRef, restores: readonly Restore[]): Sample[] {
  const counts = new Map<string, number>(RESTORE_STATES.map((s) => [s, 0]));
  let latest: { at: number; state: string } | undefined;
  for (const r of restores) {
    const state = restoreState(r);
    counts.set(state, (counts.get(state) ?? 0) + 1);
    const at = parseApiTime(r.created);
    if (at !== undefined && (!latest || at > latest.at)) latest = { at, state };
  }
  const out = [...counts]
    .filter(([, n]) => n > 0)
    .map(([state, n]) => sampleFor(site, "sitehost_site_restores", { state }, n));
  if (latest) {
    const current = latest.state;
    out.push(sampleFor(site, "sitehost_site_restore_last_timestamp_seconds", {}, latest.at));
    const states = new Set<string>([...RESTORE_STATES, current]);
    for (const state of states)
      out.push(sampleFor(site, "sitehost_site_restore_last_state", { state }, state === current ? 1 : 0));
  }
  return out;
}
