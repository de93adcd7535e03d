/**
 * Account and site activity logs: POST with page, per_page (at most 50) and filters; an envelope with
 * the entries and `page`. The order is a switch (newest-first by default); page numbers shift when
 * new entries arrive at the front, as with any page-number paging over a growing list.
 */
import {
  ACCOUNT_ACTIONS,
  ACTIVITY_DEFAULT_PER_PAGE,
  ACTIVITY_MAX_PER_PAGE,
  parseActivityFilters,
  SITE_ACTIONS,
} from "../activity.js";
import { fail, PROBLEM, pageOf, positiveInt, reply, success, type Reply } from "../envelope.js";
import type { Platform } from "../platform.js";
import { param, siteRoute, type Handler, type RequestContext } from "./context.js";

function activity(p: Platform, siteId: number | null, ctx: RequestContext): Reply {
  const parsed = parseActivityFilters(ctx.body.filters);
  if ("problems" in parsed) return reply(400, fail(PROBLEM, parsed.problems));
  let perPage = positiveInt(param(ctx, "per_page"), ACTIVITY_DEFAULT_PER_PAGE);
  if (perPage > ACTIVITY_MAX_PER_PAGE) {
    if (p.behaviour.activityPerPageOverflow === "reject")
      return reply(400, fail(PROBLEM, [`per_page must be at most ${ACTIVITY_MAX_PER_PAGE}`]));
    perPage = ACTIVITY_MAX_PER_PAGE;
  }
  const { activityOrder, accountActivityScope } = p.behaviour;
  const entries = p.activity.query(siteId, p.now(), parsed.filters, activityOrder, accountActivityScope);
  const { items, page } = pageOf(entries, positiveInt(param(ctx, "page"), 1), perPage);
  return success(p.corruptor.list(items, "activity"), page);
}

export const accountActivity: Handler = (p, ctx) => activity(p, null, ctx);
export const siteActivity = siteRoute((p, s, ctx) => activity(p, s.site.id, ctx));

export const accountActions: Handler = () => success(ACCOUNT_ACTIONS);
export const siteActions: Handler = () => success(SITE_ACTIONS);
