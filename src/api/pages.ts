/** Lists that come in numbered pages: every page, following the envelope's `page.nextPage`. */
import type { ListResult, PageResult } from "./decode.js";
import { ApiSchemaError } from "./errors.js";
import { mergeValidated } from "./validate.js";

/** More pages than any account has; past it the paging is taken to be broken. */
const MAX_PAGES = 10_000;

/**
 * Fetch page 1, then each `nextPage` until it is null. A `nextPage` that goes back to a page already
 * read, or past `lastPage`, is a schema error: following it could loop forever.
 */
export async function allPages<T>(
  endpoint: string,
  fetchPage: (page: number) => Promise<PageResult<T>>,
): Promise<ListResult<T>> {
  const out: ListResult<T> = { items: [], rejected: 0 };
  const seen = new Set<number>();
  let page = 1;
  for (;;) {
    seen.add(page);
    const result = await fetchPage(page);
    out.items.push(...result.items);
    mergeValidated(out, result);
    const next = result.page?.nextPage ?? null;
    if (next === null) return out;
    if (seen.has(next) || (result.page && next > result.page.lastPage) || seen.size > MAX_PAGES) {
      throw new ApiSchemaError(
        endpoint,
        "page.nextPage",
        `pagination does not advance (page ${page} → ${next})`,
      );
    }
    page = next;
  }
}
