/** Account, site list and per-site read endpoints, and the API's own site state changes. */
import { fail, PROBLEM, pageOf, positiveInt, reply, success } from "../envelope.js";
import { accountFor } from "../fleet.js";
import { disableSite, enableSite } from "../operations.js";
import {
  backups,
  performanceReport,
  securityAlerts,
  statistics,
  trafficMetrics,
  usageReport,
} from "../responses.js";
import { param, siteRoute, type Handler } from "./context.js";

export const SITES_MAX_PER_PAGE = 1000;

export const account: Handler = (p) => success(accountFor(p.sites()));

export const phpVersions: Handler = (p) => success(p.phpVersions);

export const sites: Handler = (p, ctx) => {
  const listed = p.listed();
  if (param(ctx, "paginate") !== "true")
    return success(
      p.corruptor.list(
        listed.map((s) => s.site),
        "site",
      ),
    );
  const perPage = Math.min(SITES_MAX_PER_PAGE, positiveInt(param(ctx, "per_page"), 25));
  const { items, page } = pageOf(listed, positiveInt(param(ctx, "page"), 1), perPage);
  return success(
    p.corruptor.list(
      items.map((s) => s.site),
      "site",
    ),
    page,
  );
};

export const site = siteRoute((p, s) =>
  success({
    ...s.site,
    pageViews: statistics(s, p.now()).pageViews,
    collaborators: [],
    suite: null,
    cmsLoginUrl: `${s.site.url}/wp-admin`,
  }),
);

export const siteStatistics = siteRoute((p, s) => success(statistics(s, p.now())));

export const siteUsageReport = siteRoute((p, s) =>
  success(p.corruptor.list(usageReport(s, p.now()), "usage")),
);

export const sitePerformanceReport = siteRoute((p, s) => success(performanceReport(s, p.now())));

export const siteTrafficMetrics = siteRoute((p, s, { body }) => {
  const metrics = Array.isArray(body.metrics) ? body.metrics.map(String) : [];
  const dims = Array.isArray(body.dimensions) ? body.dimensions.map(String) : [];
  if (p.behaviour.trafficStartAt === "timestamp") {
    // Only an ISO 8601 time is taken: the window runs from it to now.
    const at =
      typeof body.start_at === "string" && body.start_at.includes("T") ? Date.parse(body.start_at) : NaN;
    if (!Number.isFinite(at)) return reply(400, fail(PROBLEM, ["start_at must be a time in ISO 8601"]));
    const minutes = Math.max(1, Math.round((p.now() - at) / 60_000));
    return success(trafficMetrics(s, p.now(), `${minutes} minutes ago`, metrics, dims));
  }
  return success(trafficMetrics(s, p.now(), body.start_at, metrics, dims));
});

const alerts = (kind: "plugins" | "themes"): Handler =>
  siteRoute((p, s) => {
    const groups = securityAlerts(s, kind);
    return success(
      Object.fromEntries(Object.entries(groups).map(([k, v]) => [k, p.corruptor.list(v, "extension")])),
    );
  });
export const pluginAlerts = alerts("plugins");
export const themeAlerts = alerts("themes");

export const siteDomains = siteRoute((p, s) => success(p.corruptor.list(s.domains, "domain")));

export const siteBackups = siteRoute((p, s) => success(p.corruptor.list(backups(s, p.now()), "backup")));

export const putDisable = siteRoute((p, s) => {
  disableSite(p, s, "api.v1");
  return success(s.site);
});

/** Only disabled sites can be enabled, as the documentation's state table says. */
export const putEnable = siteRoute((p, s) => {
  if (s.site.state !== "disabled") return reply(400, fail(PROBLEM, ["Only disabled sites can be enabled."]));
  enableSite(p, s, "api.v1");
  return success(s.site);
});
