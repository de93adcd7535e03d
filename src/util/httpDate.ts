/** The one reading of an HTTP-date header value (Retry-After, Sunset, Deprecation's older form). */

/** An HTTP-date ("Sun, 22 Nov 2026 14:00:00 GMT") as epoch ms; undefined when it is not one. */
export function httpDateMs(text: string): number | undefined {
  // An HTTP date names a month; without this check V8's lenient Date.parse reads "-5" or "2" as a
  // year, and a garbage header would be a date.
  if (!/[A-Za-z]{3}/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : at;
}
