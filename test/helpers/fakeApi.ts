/**
 * A SitehostApi for unit tests: the methods a test gives, and for every other one a rejection that
 * names the method (a test that calls what it did not expect fails with a clear message).
 */
import type { ListResult, SitehostApi } from "../../src/api/types.js";

export function fakeApi(methods: Partial<SitehostApi>): SitehostApi {
  return new Proxy(methods, {
    get(target, prop) {
      const own = (target as Record<PropertyKey, unknown>)[prop];
      if (own !== undefined) return own;
      if (prop === "close") return async () => undefined;
      if (typeof prop !== "string" || prop === "then") return undefined;
      return () => Promise.reject(new Error(`fake API: ${prop} was not expected in this test`));
    },
  }) as SitehostApi;
}

/** A list result with no skipped records. */
export const list = <T>(items: T[]): ListResult<T> => ({ items, rejected: 0 });
