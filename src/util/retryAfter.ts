/** The one reading of a `Retry-After` header, for the API client and the OTLP sink. */
import { httpDateMs } from "./httpDate.js";

/** Retry-After: delta seconds or an HTTP date, as ms from `now`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(text)) return Math.max(0, Number(text) * 1000);
  // Without httpDateMs's check a garbage header would mean "retry at once".
  const at = httpDateMs(text);
  return at === undefined ? undefined : Math.max(0, at - now);
}
