/**
 * The `access` collector: who can administer each site. It reads the site's cms users a page of 100 at
 * a time (at most MAX_PAGES pages; a site with more users than that is counted, and its administrators
 * are not published rather than published short) and publishes how many users there are and each
 * administrator's login (never an e-mail): a new administrator is the classic
 * sign of a compromised site. What a run costs is declared from the pages each site took last time
 * (one for a site not read yet).
 */
import type { CmsUser, Site } from "../api/schemas.js";
import type { SourcedApi } from "../api/sourced.js";
import type { Sample } from "../metrics/sample.js";
import { sampleFor, type SiteRef } from "../metrics/siteSample.js";
import type { SiteCollector } from "./types.js";

export const CMS_USERS_PAGE_SIZE = 100;
/** Pages read per site and run at most: 1,000 users (a shop's customers are users too). */
export const MAX_PAGES = 10;
/** Longest login published as a label value; a longer one is cut (and marked). */
const MAX_LOGIN_LENGTH = 64;

export interface AccessInput {
  users: CmsUser[];
  /** Users in all, as the platform counts them (or as many as were read). */
  total: number;
  /** Whether every user was read. */
  complete: boolean;
  /** Pages read. */
  pages: number;
}

async function fetchUsers(api: SourcedApi, site: Site, signal: AbortSignal): Promise<AccessInput> {
  const users: CmsUser[] = [];
  let total: number | undefined;
  for (let page = 1; page <= MAX_PAGES; page++) {
    const listing = await api.cmsUsers({ id: site.id, page, perPage: CMS_USERS_PAGE_SIZE }, { signal });
    users.push(...listing.users);
    total ??= listing.total_user_count;
    const done = listing.users.length < CMS_USERS_PAGE_SIZE || (total !== undefined && users.length >= total);
    if (done) return { users, total: total ?? users.length, complete: true, pages: page };
  }
  return { users, total: Math.max(total ?? 0, users.length), complete: false, pages: MAX_PAGES };
}

/** Whether a user's roles (a comma-separated string) hold the administrator role. */
export function isAdministrator(user: CmsUser): boolean {
  return (user.roles ?? "").split(",").some((role) => role.trim().toLowerCase() === "administrator");
}

function loginLabel(login: string): string {
  return login.length <= MAX_LOGIN_LENGTH ? login : `${login.slice(0, MAX_LOGIN_LENGTH - 1)}…`;
}

export function collectAccess(site: SiteRef, input: AccessInput): Sample[] {
  const out: Sample[] = [sampleFor(site, "sitehost_site_cms_users", {}, input.total)];
  if (!input.complete) return out;
  const logins = new Set(input.users.filter(isAdministrator).map((u) => loginLabel(u.user_login)));
  for (const login of [...logins].sort())
    out.push(sampleFor(site, "sitehost_site_cms_administrator_info", { login }, 1));
  return out;
}

export class AccessCollector implements SiteCollector<AccessInput> {
  readonly scope = "site";
  readonly name = "access";
  readonly requestsPerSite = 1;
  /** Site id → pages its last read took. */
  private readonly pages = new Map<number, number>();

  requestsPerRun(sites: readonly Site[]): number {
    let sum = 0;
    for (const site of sites) sum += this.pages.get(site.id) ?? 1;
    return sum;
  }

  async fetch(api: SourcedApi, site: Site, signal: AbortSignal): Promise<AccessInput> {
    const input = await fetchUsers(api, site, signal);
    this.pages.set(site.id, input.pages);
    return input;
  }

  collect(site: Site, input: AccessInput): Sample[] {
    return collectAccess(site, input);
  }

  /** Sites no longer selected are forgotten. */
  summary(sites: readonly Site[]): Sample[] {
    const selected = new Set(sites.map((s) => s.id));
    for (const id of this.pages.keys()) if (!selected.has(id)) this.pages.delete(id);
    return [];
  }
}
