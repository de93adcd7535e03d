/**
 * The `backups` collector: automatic backups, on-demand backups and restores, three requests per site.
 * The automatic listing decides whether the site is there (its 404 goes to the runner's 404 policy);
 * the other two may answer 404 when the site has none.
 */
import { ApiHttpError } from "../api/errors.js";
import type { BackupEntry, OndemandBackup, Restore, Site } from "../api/schemas.js";
import type { SourcedApi } from "../api/sourced.js";
import { collectBackups } from "./backups.js";
import { collectOndemandBackups } from "./ondemand.js";
import { perSite } from "./perSite.js";
import { collectRestores } from "./restores.js";

/** Restores read per run: the newest page (they are rare; this covers months). */
export const RESTORES_PAGE_SIZE = 50;

/** A listing the platform may answer 404 for when the site has none of it: then it is empty. */
async function emptyOn404<T>(request: Promise<{ items: T[] }>): Promise<T[]> {
  try {
    return (await request).items;
  } catch (err) {
    if (err instanceof ApiHttpError && err.status === 404) return [];
    throw err;
  }
}

export interface BackupsInput {
  automatic: BackupEntry[];
  ondemand: OndemandBackup[];
  restores: Restore[];
}

async function fetchBackups(api: SourcedApi, site: Site, signal: AbortSignal): Promise<BackupsInput> {
  const opts = { signal };
  const [automatic, ondemand, restores] = await Promise.all([
    api.backups({ id: site.id }, opts),
    emptyOn404(api.ondemandBackups({ id: site.id }, opts)),
    emptyOn404(api.restores({ id: site.id, page: 1, perPage: RESTORES_PAGE_SIZE }, opts)),
  ]);
  return { automatic: automatic.items, ondemand, restores };
}

export const backupsCollector = perSite<BackupsInput, "backups">({
  name: "backups",
  requestsPerSite: 3,
  fetch: fetchBackups,
  collect: (site, input) => [
    ...collectBackups(site, input.automatic),
    ...collectOndemandBackups(site, input.ondemand),
    ...collectRestores(site, input.restores),
  ],
});
