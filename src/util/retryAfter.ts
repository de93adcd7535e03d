/** The one reading of a `Retry-After` header, for the API client and the OTLP sink. */

/** Retry-After: delta seconds or an HTTP date, as ms from `now`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(text)) return Math.max(0, Number(text) * 1000);
  // An HTTP date names a month ("Sun, 22 Nov 2026 14:00:00 GMT"); without this check V8's lenient
  // Date.parse reads "-5" as a year and a garbage header would mean "retry at once".
  if (!/[A-Za-z]{3}/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
