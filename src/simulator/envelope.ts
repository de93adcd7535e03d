/** The platform's response envelope, its generic messages, and what a route handler returns. */

export interface Envelope {
  message: string;
  data: unknown;
  errors: string[] | null;
  page?: PageInfo;
}

/** `page` of paginated lists. */
export interface PageInfo {
  currentPage: number;
  nextPage: number | null;
  lastPage: number;
  perPage: number;
  totalItems: number;
}

/** A handler's answer: status and body (undefined: an empty body). */
export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export const NOT_FOUND = "We could not locate the requested resources.";
export const INTERNAL = "An internal error occurred while processing your request. Please try again.";
export const PROBLEM = "There was a problem processing your request.";

export function ok(data: unknown, page?: PageInfo): Envelope {
  return page === undefined
    ? { message: "Success", data, errors: null }
    : { message: "Success", data, errors: null, page };
}

export function fail(message: string, errors: string[] | null = null): Envelope {
  return { message, data: null, errors };
}

export const reply = (status: number, body: unknown): Reply => ({ status, body });
export const success = (data: unknown, page?: PageInfo): Reply => reply(200, ok(data, page));
export const notFound = (): Reply => reply(404, fail(NOT_FOUND));

/** page/per_page → one page of `items` and its `page` object. A page past the end is empty. */
export function pageOf<T>(
  items: readonly T[],
  page: number,
  perPage: number,
): { items: T[]; page: PageInfo } {
  const lastPage = Math.max(1, Math.ceil(items.length / perPage));
  return {
    items: items.slice((page - 1) * perPage, page * perPage),
    page: {
      currentPage: page,
      nextPage: page < lastPage ? page + 1 : null,
      lastPage,
      perPage,
      totalItems: items.length,
    },
  };
}

/** A positive whole number from a parameter, or the fallback when absent or not a positive number. */
export function positiveInt(value: string | null, fallback: number): number {
  if (value === null) return fallback;
  const n = Math.floor(Number(value));
  return Number.isFinite(n) && n >= 1 ? n : fallback;
}
