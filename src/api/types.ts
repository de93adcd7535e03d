/**
 * The API client's public surface. Collectors, discovery and log tailers depend
 * on this interface only; `src/api/client.ts` implements it over HTTP.
 */
import type {
  Account,
  BackupEntry,
  Domain,
  LogEntry,
  LogStream,
  MetricsResult,
  PerformanceReport,
  SecurityAlertItem,
  Site,
  Statistics,
  UsageReportEntry,
} from "./schemas.js";

/** A record that did not fit its schema and was skipped. */
export interface RejectedRecord {
  /** Route template, e.g. `/sites/{id}/domains`. */
  endpoint: string;
  /** Dotted path of the first offending field, e.g. `[3].healthy`. */
  field: string;
  /** What the schema expected and what came (value abbreviated, never secrets). */
  problem: string;
}

/** A list result: the valid records plus the ones that were rejected. */
export interface ListResult<T> {
  items: T[];
  rejected: RejectedRecord[];
}

export interface SecurityAlertGroup {
  /** The grouping key the API used (active, inactive, drop-ins, parent, ...). */
  group: string;
  item: SecurityAlertItem;
}

export interface TrafficQuery {
  /** Relative phrase sent as start_at, e.g. "3 hours ago". */
  startAt: string;
  metrics: string[];
  dimensions: string[];
}

export interface LogPageResult {
  entries: LogEntry[];
  rejected: RejectedRecord[];
  /** Number of raw records the page held (valid + rejected). */
  rawCount: number;
  totalResults: number | null;
  scrollId: string | null;
}

export interface RequestOptions {
  signal?: AbortSignal;
}

export interface SitehostApi {
  getAccount(opts?: RequestOptions): Promise<Account>;
  /** GET /sites?paginate=true, following nextPage until null. */
  listSites(opts?: RequestOptions): Promise<ListResult<Site>>;
  getSite(siteId: number, opts?: RequestOptions): Promise<Site>;
  getStatistics(siteId: number, opts?: RequestOptions): Promise<Statistics>;
  getUsageReport(siteId: number, opts?: RequestOptions): Promise<ListResult<UsageReportEntry>>;
  getLatestPerformanceReport(siteId: number, opts?: RequestOptions): Promise<PerformanceReport>;
  /** POST /sites/{id}/metrics (a read: retried like a GET). */
  getTrafficMetrics(siteId: number, query: TrafficQuery, opts?: RequestOptions): Promise<MetricsResult>;
  getSecurityAlerts(
    siteId: number,
    kind: "plugins" | "themes",
    opts?: RequestOptions,
  ): Promise<ListResult<SecurityAlertGroup>>;
  getDomains(siteId: number, opts?: RequestOptions): Promise<ListResult<Domain>>;
  getBackups(siteId: number, opts?: RequestOptions): Promise<ListResult<BackupEntry>>;
  /**
   * One page of a log stream. Without scrollId a fresh scroll is opened.
   * Never retried internally with the same scroll id: a failure is thrown
   * to the tailer, which restarts from its checkpoint.
   */
  getLogPage(
    siteId: number,
    stream: LogStream,
    scrollId: string | null,
    opts?: RequestOptions,
  ): Promise<LogPageResult>;
  /** Revoke the token and close the connection pool. */
  close(): Promise<void>;
}
