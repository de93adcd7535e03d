/**
 * Changes that polling shows, as pure functions of what two reads returned:
 *
 * - `git`: the site's newest final deploy, when it succeeded, at the time it was asked for;
 * - `restores` (of the backups collector): the site's latest restore, when it completed, at the time it was asked for;
 * - `access`: a cms administrator login the previous read did not list (between the two reads);
 * - the site list: a PHP version, a conversion (staging, sandbox) or a collaborator added or removed
 *   (`collaboratorsCount`) between two listings.
 *
 * A first read has nothing to compare with: only the deploys and restores (which carry their own
 * times) are reported then, and those past 24 hours are dropped by the book.
 */
import type { Site } from "../api/schemas.js";
import type { Sample } from "../metrics/sample.js";
import type { ChangeKind } from "./kinds.js";
import { betweenReads, pointReport, type ChangeReport } from "./report.js";

function valueOf(samples: readonly Sample[], name: string, labels: Record<string, string> = {}) {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    ?.value;
}

function administrators(samples: readonly Sample[]): Set<string> {
  return new Set(
    samples.filter((s) => s.name === "sitehost_site_cms_administrator_info").map((s) => s.labels.login ?? ""),
  );
}

export interface PolledRead {
  samples: readonly Sample[];
  atMs: number;
}

/** What a site collector's read shows changed since its previous read of the site (`before`). */
export function changesOfCollected(
  collector: string,
  siteId: number,
  before: PolledRead | undefined,
  after: PolledRead,
): ChangeReport[] {
  switch (collector) {
    case "git": {
      const at = valueOf(after.samples, "sitehost_site_git_last_deploy_timestamp_seconds");
      const ok = valueOf(after.samples, "sitehost_site_git_last_deploy_success") === 1;
      if (at === undefined || !ok) return [];
      return [pointReport({ siteId, kind: "deploy", source: "git", key: String(at), atMs: at * 1000 })];
    }
    // The backups collector reads the restores too.
    case "backups": {
      const at = valueOf(after.samples, "sitehost_site_restore_last_timestamp_seconds");
      const done = valueOf(after.samples, "sitehost_site_restore_last_state", { state: "completed" }) === 1;
      if (at === undefined || !done) return [];
      return [pointReport({ siteId, kind: "restore", source: "restores", key: String(at), atMs: at * 1000 })];
    }
    case "access": {
      if (!before) return [];
      const known = administrators(before.samples);
      return [...administrators(after.samples)]
        .filter((login) => !known.has(login))
        .map((login) =>
          betweenReads(
            { siteId, kind: "access", source: "access", key: `${login}@${after.atMs}`, atMs: after.atMs },
            before.atMs,
          ),
        );
    }
    default:
      return [];
  }
}

/** What a site's entry in the site list shows changed since the previous listing. */
export function changesOfListing(
  before: { site: Site; atMs: number } | undefined,
  site: Site,
  atMs: number,
): ChangeReport[] {
  if (!before) return [];
  const was = before.site;
  const kinds: Array<[ChangeKind, string]> = [];
  if (was.phpVersion && site.phpVersion && was.phpVersion !== site.phpVersion)
    kinds.push(["php", `${was.phpVersion}>${site.phpVersion}`]);
  const told = (s: Site) => typeof s.staging === "boolean" && typeof s.sandbox === "boolean";
  // A listing that left a flag out (schema drift) says nothing about a conversion.
  if (told(was) && told(site) && (was.staging !== site.staging || was.sandbox !== site.sandbox))
    kinds.push(["conversion", `${kindOfSite(was)}>${kindOfSite(site)}`]);
  if (
    was.collaboratorsCount !== undefined &&
    site.collaboratorsCount !== undefined &&
    was.collaboratorsCount !== site.collaboratorsCount
  )
    kinds.push(["access", `collaborators ${was.collaboratorsCount}>${site.collaboratorsCount}`]);
  return kinds.map(([kind, what]) =>
    betweenReads({ siteId: site.id, kind, source: "sites", key: `${what}@${atMs}`, atMs }, before.atMs),
  );
}

function kindOfSite(site: Site): string {
  return site.sandbox ? "sandbox" : site.staging ? "staging" : "live";
}
