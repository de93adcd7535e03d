/**
 * Routes the simulator serves beyond the shared table of src/api/routes.ts (which lists what the
 * exporter calls): state changes the exporter never makes and the activity action catalogs. Written
 * and matched the same way as the shared table.
 */
import { routeMatcher, type RouteSpec } from "../routes.js";

export const LOCAL_ROUTES = {
  disableSite: { method: "PUT", template: "/sites/{id}/disable", base: "api" },
  enableSite: { method: "PUT", template: "/sites/{id}/enable", base: "api" },
  accountActions: { method: "GET", template: "/activity/account-actions", base: "api" },
  siteActions: { method: "GET", template: "/activity/site-actions", base: "api" },
} as const satisfies Record<string, RouteSpec>;

export type LocalRouteName = keyof typeof LOCAL_ROUTES;

/** The local route of a path under the /v1 base, with its decoded parameters. */
export const matchLocalRoute = routeMatcher(LOCAL_ROUTES);
