/**
 * The API client's public surface. Collectors, discovery and log tailers depend on this type only;
 * `src/api/client.ts` implements it over HTTP, tests with fakes. One method per endpoint of the
 * endpoint table, plus `allSites` (every page of the site list) and `close`.
 */
import type { BudgetSource } from "./budget.js";
import type { EndpointName, InputOf, OutputOf } from "./endpoints.js";
import type { ListResult } from "./decode.js";
import type { Site } from "./schemas.js";

export type { Grouped, ListResult, LogPage, PageResult, ZoneRecords } from "./decode.js";
export type { LogPageRef, PageRef, SiteRef, TrafficQuery } from "./endpoints.js";
export type { RejectedRecord } from "./validate.js";

export interface RequestOptions {
  signal?: AbortSignal;
  /**
   * Who asks (a collector's name, `logs`, ...): the request budget is shared fairly between sources.
   * Default `other`.
   */
  source?: BudgetSource;
  /**
   * Most records of a log page are expected to be new to the caller (a backlog is being read): the
   * page is decoded whole at once. Otherwise its records are built only as they are asked for (a
   * quiet stream's page is mostly entries read before), which costs more per record built.
   */
  recordsMostlyNew?: boolean;
}

/** A call of one endpoint; endpoints without input take none. */
export type EndpointMethod<N extends EndpointName, O = RequestOptions> =
  Record<string, never> extends InputOf<N>
    ? (input?: InputOf<N>, opts?: O) => Promise<OutputOf<N>>
    : (input: InputOf<N>, opts?: O) => Promise<OutputOf<N>>;

export type EndpointMethods<O = RequestOptions> = { [N in EndpointName]: EndpointMethod<N, O> };

export interface SitehostApi extends EndpointMethods {
  /** Every page of GET /sites, following `page.nextPage` until it is null. */
  allSites(opts?: RequestOptions): Promise<ListResult<Site>>;
  /** Revoke the token and close the connection pool. */
  close(): Promise<void>;
}
