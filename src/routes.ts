/**
 * Every platform route the exporter calls, one table shared by the API client (requests and the
 * `endpoint` label of its metrics), the simulator (which serves them) and the benchmarks. A route is
 * named by its template; `{id}` is always a site id, other parameters say what they are.
 */

export type HttpMethod = "GET" | "POST" | "PUT";
/** `auth`: the host root (token endpoints); `api`: the versioned base that ends in /v1. */
export type RouteBase = "auth" | "api";

export interface RouteSpec {
  readonly method: HttpMethod;
  readonly template: string;
  readonly base: RouteBase;
}

const route = <T extends string>(method: HttpMethod, template: T, base: RouteBase = "api") =>
  ({ method, template, base }) as const;

export const ROUTES = {
  token: route("POST", "/auth/token", "auth"),
  revoke: route("POST", "/auth/revoke", "auth"),
  account: route("GET", "/account"),
  accountActivity: route("POST", "/account/logs/activity"),
  sites: route("GET", "/sites"),
  // Before `site`, whose template would match it too.
  phpVersions: route("GET", "/sites/php-versions"),
  site: route("GET", "/sites/{id}"),
  statistics: route("GET", "/sites/{id}/statistics"),
  usageReport: route("GET", "/sites/{id}/reports/usage"),
  performanceReport: route("GET", "/sites/{id}/reports/performance/latest"),
  trafficMetrics: route("POST", "/sites/{id}/metrics"),
  pluginAlerts: route("GET", "/sites/{id}/security-alerts/plugins"),
  themeAlerts: route("GET", "/sites/{id}/security-alerts/themes"),
  domains: route("GET", "/sites/{id}/domains"),
  backups: route("GET", "/sites/{id}/backups"),
  ondemandBackups: route("GET", "/sites/{id}/ondemand-backups"),
  restores: route("GET", "/sites/{id}/restores"),
  phpLogs: route("GET", "/sites/{id}/logs/php"),
  serverLogs: route("GET", "/sites/{id}/logs/server"),
  siteActivity: route("POST", "/sites/{id}/logs/activity"),
  gitHistory: route("GET", "/sites/{id}/git/history"),
  gitConfig: route("GET", "/sites/{id}/git"),
  cmsUsers: route("GET", "/sites/{id}/cms/users"),
  zones: route("GET", "/zones"),
  zoneRecords: route("GET", "/zones/{zone_id}/records"),
  recordSsl: route("GET", "/zones/{zone_id}/records/{record_id}/ssl"),
} as const satisfies Record<string, RouteSpec>;

export type RouteName = keyof typeof ROUTES;
export type Route = (typeof ROUTES)[RouteName];

/** The `{param}` names of a template, as a union of string literals. */
export type RouteParams<T extends string> = T extends `${string}{${infer P}}${infer Rest}`
  ? P | RouteParams<Rest>
  : never;

/** Values for a route's parameters (none for a route without any). */
export type ParamsOf<N extends RouteName> = Record<
  RouteParams<(typeof ROUTES)[N]["template"]>,
  string | number
>;

/** The concrete path of a route, parameters URL-encoded. */
export function routePath<N extends RouteName>(name: N, params: ParamsOf<N>): string {
  return ROUTES[name].template.replace(/\{(\w+)\}/g, (_, key: string) => {
    const value = (params as Record<string, string | number | undefined>)[key];
    if (value === undefined) throw new Error(`route ${name}: no value for {${key}}`);
    return encodeURIComponent(String(value));
  });
}

export interface RouteMatch<N extends string = RouteName, R extends RouteSpec = Route> {
  name: N;
  spec: R;
  /** Decoded parameter values by name. */
  params: Record<string, string>;
}

/**
 * A matcher for a table of routes: the route a request path (relative to its base) belongs to, or
 * undefined. `method` narrows the match; without it any method matches (so a server can answer 405
 * for a known path). The simulator matches its own extra routes with one of these too.
 */
export function routeMatcher<T extends Readonly<Record<string, RouteSpec>>>(table: T) {
  type Name = keyof T & string;
  const compiled = (Object.entries(table) as Array<[Name, T[Name]]>).map(([name, spec]) => {
    const keys: string[] = [];
    const source = spec.template
      .split(/(\{\w+\})/)
      .map((part) => {
        const m = /^\{(\w+)\}$/.exec(part);
        if (!m) return part.replace(/[.*+?^$()|[\]\\]/g, "\\$&");
        keys.push(m[1] as string);
        return "([^/]+)";
      })
      .join("");
    return { name, spec, pattern: new RegExp(`^${source}$`), keys };
  });
  return (path: string, base: RouteBase, method?: string): RouteMatch<Name, T[Name]> | undefined => {
    for (const c of compiled) {
      if (c.spec.base !== base || (method !== undefined && c.spec.method !== method)) continue;
      const m = c.pattern.exec(path);
      if (!m) continue;
      const params: Record<string, string> = {};
      c.keys.forEach((key, i) => {
        params[key] = decodeURIComponent(m[i + 1] as string);
      });
      return { name: c.name, spec: c.spec, params };
    }
    return undefined;
  };
}

/** The route of the exporter's table a request path belongs to (see routeMatcher). */
export const matchRoute = routeMatcher(ROUTES);
