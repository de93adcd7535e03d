/**
 * Git deployment: which sites support has enrolled in the git integration, and each one's deploy
 * history (newest first). Built per site on first use, from the site's seed and fleet index.
 */
import type { SimSiteData } from "./fleet.js";
import { hash32, mulberry32, pick } from "./random.js";

/** A history entry as the API returns it. */
export interface GitDeploy {
  id: number;
  created: string;
  after: string;
  before: string;
  branch: string;
  email: string;
  message: string;
  name: string;
  repository: string;
  state: string;
}

/** The state the documentation shows for a successful deploy, and the simulator's choice for a failed one. */
export const DEPLOYED = "deployed";
export const DEPLOY_FAILED = "failed";

export interface DeployInput {
  /** A failed deploy (state `failed`); default: a successful one. */
  fail?: boolean;
  message?: string;
  branch?: string;
}

interface GitSite {
  repository: string;
  branch: string;
  /** Connected to its repository, with a token stored (both cleared by a disconnect). */
  connected: boolean;
  hasToken: boolean;
  /** Newest first. */
  history: GitDeploy[];
}

const DAY = 86_400_000;
const MESSAGES = [
  "Fix checkout totals",
  "Update theme styles",
  "Add landing page",
  "Bump plugin versions",
  "Tidy header markup",
  "Cache product queries",
];
const AUTHORS = [
  { name: "Dana Developer", email: "dana@agency.example" },
  { name: "Sam Builder", email: "sam@agency.example" },
];

/** A 40-hex commit id, fixed by its inputs. */
function sha(...values: number[]): string {
  let out = "";
  for (let k = 0; out.length < 40; k++)
    out += hash32(...values, k)
      .toString(16)
      .padStart(8, "0");
  return out.slice(0, 40);
}

/** Enrolled: fleet index % 3 = 0. Last deploy failed: index % 9 = 6. Index 12: enrolled, never deployed. */
export function gitEnrolled(index: number): boolean {
  return index % 3 === 0;
}

export class GitStore {
  private readonly sites = new Map<number, GitSite | null>();
  /** Deploys after start-up; those before have ids from their site's id (access order must not matter). */
  private nextId = 10_000_001;

  constructor(private readonly startMs: number) {}

  private build(data: SimSiteData): GitSite | null {
    if (!gitEnrolled(data.index)) return null;
    const site: GitSite = {
      repository: `https://git.example/agency/${data.site.name}.git`,
      branch: "main",
      connected: true,
      hasToken: true,
      history: [],
    };
    if (data.index === 12) return site;
    const rng = mulberry32(data.seed ^ 0x617);
    const count = 2 + (data.index % 5);
    let at = this.startMs - (1 + rng() * 47) * 3_600_000;
    const times: number[] = [];
    for (let k = 0; k < count; k++, at -= (0.5 + rng() * 6) * DAY) times.push(Math.floor(at));
    // Oldest first, so every entry's `before` is the previous one's `after`.
    times.reverse().forEach((t, k) => {
      const failed = k === count - 1 && data.index % 9 === 6;
      const input = { fail: failed, message: pick(rng, MESSAGES) };
      site.history.unshift(this.entry(data.site.id * 100 + k, data.site.id, site, t, input));
    });
    return site;
  }

  private entry(id: number, siteId: number, site: GitSite, atMs: number, input: DeployInput): GitDeploy {
    const author = AUTHORS[id % AUTHORS.length] as (typeof AUTHORS)[number];
    const previous = site.history[0];
    return {
      id,
      created: new Date(atMs).toISOString(),
      after: sha(siteId, id),
      before: previous?.after ?? sha(siteId, 0),
      branch: input.branch ?? site.branch,
      email: author.email,
      message: input.message ?? "Deploy",
      name: author.name,
      repository: site.repository,
      state: input.fail === true ? DEPLOY_FAILED : DEPLOYED,
    };
  }

  private get(data: SimSiteData): GitSite | null {
    let site = this.sites.get(data.site.id);
    if (site === undefined) this.sites.set(data.site.id, (site = this.build(data)));
    return site;
  }

  enrolled(data: SimSiteData): boolean {
    return this.get(data) !== null;
  }

  /** The site's deploy history, newest first; undefined when the site is not enrolled. */
  history(data: SimSiteData): readonly GitDeploy[] | undefined {
    return this.get(data)?.history;
  }

  /** The site's git configuration as GET /sites/{id}/git answers it; undefined when not enrolled. */
  config(data: SimSiteData):
    | {
        repository: string;
        branch: string;
        destinationPath: string;
        repositorySubdirectory: string;
        connected: boolean;
        hasToken: boolean;
      }
    | undefined {
    const site = this.get(data);
    if (!site) return undefined;
    const { repository, branch, connected, hasToken } = site;
    return { repository, branch, destinationPath: "", repositorySubdirectory: "", connected, hasToken };
  }

  /** DELETE /sites/{id}/git: the connection and its stored token are gone; false when not enrolled. */
  disconnect(data: SimSiteData): boolean {
    const site = this.get(data);
    if (!site) return false;
    site.connected = false;
    site.hasToken = false;
    return true;
  }

  /** Enroll a site (as support would); a no-op for an enrolled one. */
  enroll(data: SimSiteData): void {
    if (this.get(data)) return;
    this.sites.set(data.site.id, {
      repository: `https://git.example/agency/${data.site.name}.git`,
      branch: "main",
      connected: true,
      hasToken: true,
      history: [],
    });
  }

  /** Record a finished deploy; undefined when the site is not enrolled. */
  deploy(data: SimSiteData, input: DeployInput, atMs: number): GitDeploy | undefined {
    const site = this.get(data);
    if (!site) return undefined;
    const entry = this.entry(this.nextId++, data.site.id, site, atMs, input);
    site.history.unshift(entry);
    return entry;
  }

  forget(siteId: number): void {
    this.sites.delete(siteId);
  }
}
