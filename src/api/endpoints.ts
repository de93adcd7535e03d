/**
 * The endpoint table: for every call the exporter makes, its route (method and path template, from
 * the route table), how its input becomes path parameters, query and body, how its answer is decoded,
 * and whether it may be repeated after a network error, a timeout or a 5xx. The client's methods, the
 * route templates and the per-route metrics all come from here.
 */
import { grouped, list, logPage, object, pagedList, zoneWithRecords, type Decoder } from "./decode.js";
import type { RouteName } from "../routes.js";
import {
  AccountSchema,
  ActivityEntrySchema,
  BackupEntrySchema,
  DnsRecordSchema,
  DomainSchema,
  CmsUserListingSchema,
  GitConfigSchema,
  GitDeploySchema,
  MetricsResultSchema,
  OndemandBackupSchema,
  PerformanceReportSchema,
  PhpLogEntrySchema,
  PhpVersionSchema,
  RestoreSchema,
  SecurityAlertItemSchema,
  ServerLogEntrySchema,
  SiteSchema,
  SslDetailsSchema,
  StatisticsSchema,
  UsageReportEntrySchema,
  ZoneSchema,
} from "./schemas.js";

export interface RequestParts {
  params: Record<string, string | number>;
  query?: Record<string, string>;
  body?: unknown;
}

export interface Endpoint<I, O> {
  route: RouteName;
  request(input: I): RequestParts;
  decode: Decoder<O>;
  /** Default: a read, repeated after network errors, timeouts and 5xx. */
  repeatable?(input: I): boolean;
}

/** A call about one site. */
export interface SiteRef {
  id: number;
}

export interface TrafficQuery {
  /** Relative phrase sent as start_at, e.g. "3 hours ago". */
  startAt: string;
  metrics: string[];
  dimensions: string[];
}

export interface PageRef {
  page: number;
  perPage: number;
}

export interface LogPageRef extends SiteRef {
  /** Continue this scroll; null opens a fresh one. */
  scrollId: string | null;
}

/** Sites per page when listing them (discovery's cost is one request per page). */
export const SITES_PER_PAGE = 100;

const define = <I, O>(e: Endpoint<I, O>): Endpoint<I, O> => e;
const site = ({ id }: SiteRef): RequestParts => ({ params: { id } });
const noInput = (): RequestParts => ({ params: {} });
const pageQuery = ({ page, perPage }: PageRef) => ({ page: String(page), per_page: String(perPage) });

/**
 * One log page. A page of an open scroll is never repeated with the same scroll id (the platform may
 * have moved the scroll on): the tailer starts again from its checkpoint instead.
 */
const logPageEndpoint = <O>(route: RouteName, decode: Decoder<O>) =>
  define<LogPageRef, O>({
    route,
    request: ({ id, scrollId }) => ({
      params: { id },
      query: scrollId ? { scroll_id: scrollId } : undefined,
    }),
    decode,
    repeatable: ({ scrollId }) => scrollId === null,
  });

export const ENDPOINTS = {
  account: define({ route: "account", request: noInput, decode: object(AccountSchema) }),
  sites: define({
    route: "sites",
    request: (p: PageRef) => ({ params: {}, query: { paginate: "true", ...pageQuery(p) } }),
    decode: pagedList(SiteSchema),
  }),
  site: define({ route: "site", request: site, decode: object(SiteSchema) }),
  statistics: define({ route: "statistics", request: site, decode: object(StatisticsSchema) }),
  usageReport: define({ route: "usageReport", request: site, decode: list(UsageReportEntrySchema) }),
  performanceReport: define({
    route: "performanceReport",
    request: site,
    decode: object(PerformanceReportSchema),
  }),
  trafficMetrics: define({
    route: "trafficMetrics",
    // A read, despite the POST.
    request: ({ id, query }: SiteRef & { query: TrafficQuery }) => ({
      params: { id },
      body: { start_at: query.startAt, metrics: query.metrics, dimensions: query.dimensions },
    }),
    decode: object(MetricsResultSchema),
  }),
  pluginAlerts: define({ route: "pluginAlerts", request: site, decode: grouped(SecurityAlertItemSchema) }),
  themeAlerts: define({ route: "themeAlerts", request: site, decode: grouped(SecurityAlertItemSchema) }),
  domains: define({ route: "domains", request: site, decode: list(DomainSchema) }),
  backups: define({ route: "backups", request: site, decode: list(BackupEntrySchema) }),
  ondemandBackups: define({ route: "ondemandBackups", request: site, decode: list(OndemandBackupSchema) }),
  restores: define({
    route: "restores",
    request: ({ id, ...p }: SiteRef & PageRef) => ({ params: { id }, query: pageQuery(p) }),
    decode: pagedList(RestoreSchema),
  }),
  phpLogs: logPageEndpoint("phpLogs", logPage(PhpLogEntrySchema)),
  serverLogs: logPageEndpoint("serverLogs", logPage(ServerLogEntrySchema)),
  accountActivity: define({
    route: "accountActivity",
    // A read, despite the POST.
    request: (p: PageRef) => ({ params: {}, body: { page: p.page, per_page: p.perPage } }),
    decode: pagedList(ActivityEntrySchema),
  }),
  siteActivity: define({
    route: "siteActivity",
    request: ({ id, ...p }: SiteRef & PageRef) => ({
      params: { id },
      body: { page: p.page, per_page: p.perPage },
    }),
    decode: pagedList(ActivityEntrySchema),
  }),
  gitHistory: define({
    route: "gitHistory",
    request: ({ id, ...p }: SiteRef & PageRef) => ({ params: { id }, query: pageQuery(p) }),
    decode: pagedList(GitDeploySchema),
  }),
  gitConfig: define({ route: "gitConfig", request: site, decode: object(GitConfigSchema) }),
  cmsUsers: define({
    route: "cmsUsers",
    request: ({ id, ...p }: SiteRef & PageRef) => ({ params: { id }, query: pageQuery(p) }),
    decode: object(CmsUserListingSchema),
  }),
  zones: define({ route: "zones", request: noInput, decode: list(ZoneSchema) }),
  phpVersions: define({ route: "phpVersions", request: noInput, decode: list(PhpVersionSchema) }),
  zoneRecords: define({
    route: "zoneRecords",
    request: ({ zoneId }: { zoneId: number }) => ({ params: { zone_id: zoneId } }),
    decode: zoneWithRecords(DnsRecordSchema),
  }),
  recordSsl: define({
    route: "recordSsl",
    request: ({ zoneId, recordId }: { zoneId: number; recordId: number }) => ({
      params: { zone_id: zoneId, record_id: recordId },
    }),
    decode: object(SslDetailsSchema),
  }),
};

export type Endpoints = typeof ENDPOINTS;
export type EndpointName = keyof Endpoints;
export type InputOf<N extends EndpointName> = Endpoints[N] extends Endpoint<infer I, unknown> ? I : never;
export type OutputOf<N extends EndpointName> = Endpoints[N] extends Endpoint<unknown, infer O> ? O : never;
