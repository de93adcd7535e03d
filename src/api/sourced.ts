/**
 * The API as one source of requests sees it: the same methods, every request counted against that
 * source in the request budget. A collector is handed one bound to its name, so it cannot ask as
 * another source (or forget to say who asks).
 */
import type { BudgetSource } from "./budget.js";
import { ENDPOINTS, type EndpointName } from "./endpoints.js";
import type { EndpointMethods, ListResult, RequestOptions, SitehostApi } from "./types.js";
import type { Site } from "./schemas.js";

/** Request options without the source: it is the API's. */
export type SourcedRequestOptions = Omit<RequestOptions, "source">;

export interface SourcedApi extends EndpointMethods<SourcedRequestOptions> {
  readonly source: BudgetSource;
  /** Every page of GET /sites. */
  allSites(opts?: SourcedRequestOptions): Promise<ListResult<Site>>;
}

export function sourcedApi(api: SitehostApi, source: BudgetSource): SourcedApi {
  const call =
    (name: EndpointName) =>
    (input: unknown, opts?: SourcedRequestOptions): Promise<unknown> =>
      (api[name] as (input: unknown, opts: RequestOptions) => Promise<unknown>)(input, { ...opts, source });
  const methods = Object.fromEntries(
    (Object.keys(ENDPOINTS) as EndpointName[]).map((name) => [name, call(name)]),
  ) as unknown as EndpointMethods<SourcedRequestOptions>;
  return { ...methods, source, allSites: (opts) => api.allSites({ ...opts, source }) };
}
