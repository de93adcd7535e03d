/** Which handler answers which route: every API route of the shared table, and the local ones. */
import type { RouteName } from "../../routes.js";
import type { LocalRouteName } from "../routes.js";
import * as activity from "./activity.js";
import type { Handler } from "./context.js";
import * as dns from "./dns.js";
import * as logs from "./logs.js";
import * as resources from "./resources.js";
import * as sites from "./sites.js";

export type { Handler } from "./context.js";

/** The token endpoints are the server's: they are about HTTP credentials, not platform data. */
export type ApiRouteName = Exclude<RouteName, "token" | "revoke">;

export const API_HANDLERS: Record<ApiRouteName, Handler> = {
  account: sites.account,
  accountActivity: activity.accountActivity,
  sites: sites.sites,
  site: sites.site,
  statistics: sites.siteStatistics,
  usageReport: sites.siteUsageReport,
  performanceReport: sites.sitePerformanceReport,
  trafficMetrics: sites.siteTrafficMetrics,
  pluginAlerts: sites.pluginAlerts,
  themeAlerts: sites.themeAlerts,
  domains: sites.siteDomains,
  backups: sites.siteBackups,
  ondemandBackups: resources.ondemandBackups,
  restores: resources.restores,
  phpLogs: logs.phpLogs,
  serverLogs: logs.serverLogs,
  siteActivity: activity.siteActivity,
  gitHistory: resources.gitHistory,
  gitConfig: resources.gitConfig,
  cmsUsers: resources.cmsUsers,
  zones: dns.zones,
  phpVersions: sites.phpVersions,
  zoneRecords: dns.zoneRecords,
  recordSsl: dns.recordSsl,
};

export const LOCAL_HANDLERS: Record<LocalRouteName, Handler> = {
  disableSite: sites.putDisable,
  enableSite: sites.putEnable,
  accountActions: activity.accountActions,
  siteActions: activity.siteActions,
};
