/** What a route handler gets: the request without its HTTP, and the platform. */
import type { Reply } from "../envelope.js";
import { notFound } from "../envelope.js";
import type { SimSiteData } from "../fleet.js";
import type { Platform } from "../platform.js";

export interface RequestContext {
  /** The route's `{param}` values, decoded. */
  params: Record<string, string>;
  query: URLSearchParams;
  /** A JSON or form-encoded body; {} when there is none. */
  body: Record<string, unknown>;
}

export type Handler = (p: Platform, ctx: RequestContext) => Reply;

/** A parameter from the query or, as the documentation allows for GETs too, from the body. */
export function param(ctx: RequestContext, key: string): string | null {
  const q = ctx.query.get(key);
  if (q !== null) return q;
  const b = ctx.body[key];
  return b === undefined || b === null ? null : String(b);
}

/** A handler of a `/sites/{id}/...` route: 404 for an unknown site. */
export const siteRoute =
  (fn: (p: Platform, site: SimSiteData, ctx: RequestContext) => Reply): Handler =>
  (p, ctx) => {
    const site = p.site(Number(ctx.params.id));
    return site ? fn(p, site, ctx) : notFound();
  };
