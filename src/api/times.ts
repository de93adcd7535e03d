/** The time forms the platform's API uses, read the same way by every consumer. */

/**
 * Whether a numeric epoch time is in milliseconds rather than seconds: 1e11 seconds is the year 5138,
 * while 1e11 ms is 1973, so no time this API reports is ambiguous.
 */
export function isEpochMs(value: number): boolean {
  return value > 1e11;
}

/**
 * A backup listing time as Unix seconds: the spec's 'YYYY-MM-DD-HH-MM' (UTC), tolerating seconds and
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
