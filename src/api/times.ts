/** The time forms the platform's API uses, read the same way by every consumer. */

/**
 * Whether a numeric epoch time is in milliseconds rather than seconds: 1e11 seconds is the year 5138,
 * while 1e11 ms is 1973, so no time this API reports is ambiguous.
 */
export function isEpochMs(value: number): boolean {
  return value > 1e11;
}

/**
 * A backup listing time as Unix seconds: the documented 'YYYY-MM-DD-HH-MM' (UTC), tolerating seconds and
 * the ISO / 'YYYY-MM-DD HH:MM:SS' forms other backup views use; zone-less times are UTC.
 */
export function parseBackupTimestamp(text: string): number | undefined {
  const m =
    /^(\d{4})-(\d{2})-(\d{2})[-T ](\d{2})[-:](\d{2})(?:[-:](\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/.exec(
      text.trim(),
    );
  if (!m) return undefined;
  const [y, mo, d, h, mi, sec] = m.slice(1, 7).map((v) => Number(v ?? 0)) as number[];
  let ms = Date.UTC(y as number, (mo as number) - 1, d, h, mi, sec);
  const zone = m[7];
  if (zone && zone !== "Z") {
    const z = /^([+-])(\d{2}):?(\d{2})$/.exec(zone) as RegExpExecArray;
    ms -= (z[1] === "-" ? -1 : 1) * (Number(z[2]) * 60 + Number(z[3])) * 60_000;
  }
  return Number.isNaN(ms) || (mo as number) > 12 || (d as number) > 31 ? undefined : ms / 1000;
}

const ISO_LIKE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|UTC|GMT|[+-]\d{2}(?::?\d{2})?)?$/i;

/** Calendar fields checked by hand: Date.UTC rolls 2026-02-31 over into March instead of refusing it. */
function utcSeconds(
  fields: number[],
  fraction: string | undefined,
  zone: string | undefined,
): number | undefined {
  const [y, mo, d, h, mi, s] = fields as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return undefined;
  const ms = Date.UTC(y, mo - 1, d, h, mi, s);
  if (new Date(ms).getUTCDate() !== d) return undefined;
  let seconds = ms / 1000 + (fraction ? Number(`0.${fraction}`) : 0);
  const offset = zone ? /^([+-])(\d{2}):?(\d{2})?$/.exec(zone) : null;
  if (offset) {
    const minutes = Number(offset[2]) * 60 + Number(offset[3] ?? 0);
    seconds -= (offset[1] === "-" ? -1 : 1) * minutes * 60;
  }
  return seconds;
}

/**
 * Any time the API reports, as Unix seconds: ISO 8601 with or without milliseconds and zone,
 * 'YYYY-MM-DD HH:MM:SS', a date alone, epoch seconds or epoch milliseconds (as numbers or digit
 * strings), and the backup listings' 'YYYY-MM-DD-HH-MM'. Zone-less times are UTC (never the
 * machine's zone, which Date.parse would use). Undefined for anything else, and for 0 or less,
 * which the platform uses for "never".
 */
export function parseApiTime(value: unknown): number | undefined {
  if (typeof value === "number") {
    if (!Number.isFinite(value) || value <= 0) return undefined;
    return isEpochMs(value) ? value / 1000 : value;
  }
  if (typeof value !== "string") return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return parseApiTime(Number(text));
  const m = ISO_LIKE.exec(text);
  if (m) {
    const fields = m.slice(1, 7).map((v) => Number(v ?? 0));
    const zone = m[8]?.toUpperCase();
    return utcSeconds(fields, m[7], zone === "Z" || zone === "UTC" || zone === "GMT" ? undefined : zone);
  }
  const backup = parseBackupTimestamp(text);
  if (backup !== undefined) return backup;
  // An HTTP-style date names its zone ("Sun, 22 Nov 2026 14:00:00 GMT"); without one it would be local time.
  if (/[A-Za-z]{3}/.test(text) && /(GMT|UTC|[+-]\d{4})$/i.test(text)) {
    const ms = Date.parse(text);
    if (!Number.isNaN(ms) && ms > 0) return ms / 1000;
  }
  return undefined;
}
