/** Git deploy history, on-demand backups and restores of a site. */
import { fail, pageOf, positiveInt, reply, success } from "../envelope.js";
import { param, siteRoute, type RequestContext } from "./context.js";

/** Page size of the git history and restores when the request names none, and the most they give. */
export const DEFAULT_PER_PAGE = 25;
export const MAX_PER_PAGE = 100;

const paging = (ctx: RequestContext) => ({
  page: positiveInt(param(ctx, "page"), 1),
  perPage: Math.min(MAX_PER_PAGE, positiveInt(param(ctx, "per_page"), DEFAULT_PER_PAGE)),
});

export const NOT_ENROLLED = [
  "This site is not enrolled in the git integration. Support enrolls sites on request; there is no self-serve toggle.",
];

export const gitHistory = siteRoute((p, s, ctx) => {
  const history = p.git.history(s);
  if (!history) return reply(422, fail("Unprocessable Entity", NOT_ENROLLED));
  const { page, perPage } = paging(ctx);
  const one = pageOf(history, page, perPage);
  return success(p.corruptor.list(one.items, "deploy"), one.page);
});

export const gitConfig = siteRoute((p, s) => {
  const config = p.git.config(s);
  if (!config) return reply(422, fail("Unprocessable Entity", NOT_ENROLLED));
  return success(config);
});

/** The listing's shape as the documentation gives it; the table names are the simulator's own. */
export const cmsUsers = siteRoute((p, s, ctx) => {
  const { page, perPage } = paging(ctx);
  return success({
    users: p.cmsUsers.page(s, page, perPage),
    total_user_count: p.cmsUsers.total(s),
    per_page: perPage,
    page,
    table_prefix: "cms_",
    user_table: "cms_users",
    user_meta_table: "cms_usermeta",
    capabilities_meta_key: "cms_capabilities",
  });
});

export const ondemandBackups = siteRoute((p, s) =>
  success(p.corruptor.list(p.ondemand.list(s, p.now()), "ondemand")),
);

export const restores = siteRoute((p, s, ctx) => {
  const { page, perPage } = paging(ctx);
  const one = pageOf(p.restores.list(s, p.now()), page, perPage);
  return success(p.corruptor.list(one.items, "restore"), one.page);
});
