/**
 * The `git` collector: one page of each site's deploy history and its git configuration (connected,
 * token stored). A site that is not enrolled in the git integration answers 422; only support can
 * enroll it, so it is asked again only once a day and counted meanwhile (no git series, not a failure).
 */
import { ApiHttpError } from "../api/errors.js";
import type { GitConfig, GitDeploy, Site } from "../api/schemas.js";
import type { SourcedApi } from "../api/sourced.js";
import type { Sample } from "../metrics/sample.js";
import { collectGit, collectGitConnection } from "./git.js";
import type { CollectorEnv, SiteCollector } from "./types.js";

export const GIT_SITES_NOT_ENROLLED = "sitehost_exporter_git_sites_not_enrolled";
/** How long a site that answered 422 is left alone. */
export const NOT_ENROLLED_RECHECK_MS = 24 * 3_600_000;
/** Newest deploys read per run: enough to pass a few still in progress. */
export const GIT_HISTORY_PAGE_SIZE = 20;

export type GitInput =
  { enrolled: true; deploys: GitDeploy[]; config: GitConfig | "none" } | { enrolled: false };

export class GitCollector implements SiteCollector<GitInput> {
  readonly scope = "site";
  readonly name = "git";
  readonly requestsPerSite = 2;
  /** Site id → when it last answered 422. */
  private readonly notEnrolled = new Map<number, number>();

  constructor(private readonly env: CollectorEnv) {}

  private resting(siteId: number, nowMs: number): boolean {
    const at = this.notEnrolled.get(siteId);
    return at !== undefined && nowMs - at < NOT_ENROLLED_RECHECK_MS;
  }

  /** Two requests per site, less the sites not enrolled that are not due for another look. */
  requestsPerRun(sites: readonly Site[]): number {
    const now = this.env.now();
    return sites.filter((s) => !this.resting(s.id, now)).length * this.requestsPerSite;
  }

  async fetch(api: SourcedApi, site: Site, signal: AbortSignal): Promise<GitInput> {
    if (this.resting(site.id, this.env.now())) return { enrolled: false };
    try {
      const [page, config] = await Promise.all([
        api.gitHistory({ id: site.id, page: 1, perPage: GIT_HISTORY_PAGE_SIZE }, { signal }),
        api.gitConfig({ id: site.id }, { signal }).catch((err: unknown) => {
          if (err instanceof ApiHttpError && err.status === 404) return "none" as const;
          throw err;
        }),
      ]);
      this.notEnrolled.delete(site.id);
      return { enrolled: true, deploys: page.items, config };
    } catch (err) {
      if (!(err instanceof ApiHttpError && err.status === 422)) throw err;
      this.notEnrolled.set(site.id, this.env.now());
      return { enrolled: false };
    }
  }

  collect(site: Site, input: GitInput): Sample[] {
    return input.enrolled
      ? [...collectGit(site, input.deploys), ...collectGitConnection(site, input.config)]
      : [];
  }

  /** Selected sites known not to be enrolled; sites no longer selected are forgotten. */
  summary(sites: readonly Site[]): Sample[] {
    const selected = new Set(sites.map((s) => s.id));
    for (const id of this.notEnrolled.keys()) if (!selected.has(id)) this.notEnrolled.delete(id);
    return [{ name: GIT_SITES_NOT_ENROLLED, labels: {}, value: this.notEnrolled.size }];
  }
}
