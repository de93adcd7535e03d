/**
 * Git deploys: the newest final deploy of a site's history. The platform documents the states
 * `processing` (right after a trigger) and `deployed` (in history), and reports failed deploys by an
 * event without naming their state, so failure is recognised by the usual words for it. Any other
 * state (processing, queued, ...) is not final: the deploy before it counts until it ends.
 */
import type { GitConfig, GitDeploy } from "../api/schemas.js";
import { parseApiTime } from "../api/times.js";
import type { Sample } from "../metrics/sample.js";
import { sampleFor, type SiteRef } from "../metrics/siteSample.js";

export const SUCCESS_STATES: ReadonlySet<string> = new Set(["deployed", "completed", "succeeded", "success"]);
export type DeployOutcome = "success" | "failure" | "pending";

/** Words that mark a failed deploy however the state is spelled (`failed`, `error`, `deploy_failed`, `cancelled`). */
const FAILURE_WORDS = /fail|error|cancel/;

export function deployOutcome(state: string): DeployOutcome {
  const s = state.trim().toLowerCase();
  if (SUCCESS_STATES.has(s)) return "success";
  if (FAILURE_WORDS.test(s)) return "failure";
  return "pending";
}

/**
 * The newest final deploy by `created`, whatever order the page came in; a deploy whose time cannot
 * be read is passed over. No final deploy (never deployed, or only one in progress): no samples.
 */
export function collectGit(site: SiteRef, deploys: readonly GitDeploy[]): Sample[] {
  let newest: { at: number; success: boolean } | undefined;
  for (const d of deploys) {
    const outcome = deployOutcome(d.state);
    if (outcome === "pending") continue;
    const at = parseApiTime(d.created);
    if (at === undefined) continue;
    if (!newest || at > newest.at) newest = { at, success: outcome === "success" };
  }
  if (!newest) return [];
  return [
    sampleFor(site, "sitehost_site_git_last_deploy_timestamp_seconds", {}, newest.at),
    sampleFor(site, "sitehost_site_git_last_deploy_success", {}, newest.success ? 1 : 0),
  ];
}

/**
 * The site's git connection: connected to its repository, and a token stored. A configuration the
 * platform no longer has (404: disconnected and cleared) is neither; a field it did not send publishes
 * no series (counted as drift by the API client).
 */
export function collectGitConnection(site: SiteRef, config: GitConfig | "none"): Sample[] {
  const connected = config === "none" ? false : config.connected;
  const hasToken = config === "none" ? false : config.hasToken;
  return [
    ...(connected === undefined
      ? []
      : [sampleFor(site, "sitehost_site_git_connected", {}, connected ? 1 : 0)]),
    ...(hasToken === undefined
      ? []
      : [sampleFor(site, "sitehost_site_git_token_stored", {}, hasToken ? 1 : 0)]),
  ];
}
