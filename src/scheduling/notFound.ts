/**
 * The 404 policy. A per-site endpoint that answers 404 says one of two things: the site was deleted
 * since discovery, or it has none of that data (no audit run yet, say). Discovery asks the site itself
 * (`GET /sites/{id}`): a 404 there too, and every series of the site is dropped at once; any other
 * answer, and the collector publishes nothing for the site.
 */
import type { Logger } from "pino";
import { ApiHttpError } from "../api/errors.js";
import type { Site } from "../api/schemas.js";
import type { CollectorName } from "../config/schema.js";
import type { SiteDiscovery } from "../discovery/discovery.js";
import type { MetricStore } from "../metrics/store.js";

export function isNotFound(err: unknown): boolean {
  return err instanceof ApiHttpError && err.status === 404;
}

export interface NotFoundContext {
  discovery: Pick<SiteDiscovery, "confirmGone">;
  store: Pick<MetricStore, "replaceSite">;
  log: Logger;
  signal: AbortSignal;
}

/** After `collector` was answered 404 for `site`: the site is dropped when gone, else its samples of the collector cleared. */
export async function settleNotFound(
  collector: CollectorName,
  site: Site,
  { discovery, store, log, signal }: NotFoundContext,
): Promise<void> {
  if (await discovery.confirmGone(site, signal)) return;
  log.debug({ collector, site: site.name }, "no data for this site (404)");
  store.replaceSite(collector, String(site.id), []);
}
