/**
 * Routes the simulator serves beyond the shared table of src/api/routes.ts (which lists what the
 * exporter calls): state changes the exporter never makes and the activity action catalogs.
 */
import type { RouteBase } from "../api/routes.js";

export interface LocalRoute {
  readonly method: "GET" | "PUT";
  readonly template: string;
  readonly base: RouteBase;
}

export const LOCAL_ROUTES = {
  disableSite: { method: "PUT", template: "/sites/{id}/disable", base: "api" },
  enableSite: { method: "PUT", template: "/sites/{id}/enable", base: "api" },
  accountActions: { method: "GET", template: "/activity/account-actions", base: "api" },
  siteActions: { method: "GET", template: "/activity/site-actions", base: "api" },
} as const satisfies Record<string, LocalRoute>;

export type LocalRouteName = keyof typeof LOCAL_ROUTES;

const COMPILED = (Object.entries(LOCAL_ROUTES) as Array<[LocalRouteName, LocalRoute]>).map(([name, spec]) => {
  const keys: string[] = [];
  const source = spec.template.replace(/\{(\w+)\}/g, (_, key: string) => {
    keys.push(key);
    return "([^/]+)";
  });
  return { name, spec, keys, pattern: new RegExp(`^${source}$`) };
});

/** The local route of a path under the /v1 base and a method, with its decoded parameters. */
export function matchLocalRoute(
  path: string,
  method: string,
): { name: LocalRouteName; spec: LocalRoute; params: Record<string, string> } | undefined {
  for (const c of COMPILED) {
    if (c.spec.method !== method) continue;
    const m = c.pattern.exec(path);
    if (!m) continue;
    const params: Record<string, string> = {};
    c.keys.forEach((key, i) => (params[key] = decodeURIComponent(m[i + 1] as string)));
    return { name: c.name, spec: c.spec, params };
  }
  return undefined;
}
