/**
 * undici's `Agent` and `request`, loaded from their own modules rather than the package's index.
 *
 * The index loads all of undici (fetch, WebSocket, EventSource, caches, mocks, proxy agents) to build
 * its exports: 2.8 MB more heap (measured after `gc()`), held for the life of a daemon that only
 * sends requests through agents of its own. The package is pinned to one version in package.json;
 * test/unit/util/undici.test.ts checks that these modules are what the index exports and that the
 * daemon's modules leave the index unloaded.
 */
import { createRequire } from "node:module";
import type { Agent as UndiciAgent, Dispatcher } from "undici";

const load = createRequire(import.meta.url);

export const Agent = load("undici/lib/dispatcher/agent.js") as typeof UndiciAgent;
export type Agent = UndiciAgent;

/** The request of undici's API, called with the dispatcher as `this` (what the index's wrapper does). */
const requestOn = load("undici/lib/api/api-request.js") as (
  this: Dispatcher,
  opts: Dispatcher.RequestOptions,
) => Promise<Dispatcher.ResponseData>;

export type RequestOptions = Omit<Dispatcher.RequestOptions, "origin" | "path" | "method"> & {
  method: Dispatcher.HttpMethod;
  dispatcher: Dispatcher;
};

/** undici's `request(url, options)` for an absolute URL, sent through `options.dispatcher`. */
export function request(url: string, options: RequestOptions): Promise<Dispatcher.ResponseData> {
  const target = new URL(url);
  const { dispatcher, ...rest } = options;
  return requestOn.call(dispatcher, {
    ...rest,
    origin: target.origin,
    path: `${target.pathname}${target.search}`,
  });
}
