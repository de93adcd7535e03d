/**
 * Times as a person reads them on the status page: the absolute UTC time and how long ago (or how
 * soon) it is from the page's own now, so the page needs no script and no clock of the reader's.
 */

const MINUTE = 60;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * How far `atMs` is from `nowMs`, in words: "12 s ago", "3 min ago", "5 h ago", "2 days ago", or
 * "in 12 min" for a time to come; "now" within a second. Rounded down to the unit shown.
 */
export function relativeTime(atMs: number, nowMs: number): string {
  const seconds = Math.round((atMs - nowMs) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 1) return "now";
  let span: string;
  if (abs < MINUTE) span = `${abs} s`;
  else if (abs < HOUR) span = `${Math.floor(abs / MINUTE)} min`;
  else if (abs < 2 * DAY) span = `${Math.floor(abs / HOUR)} h`;
  else span = `${Math.floor(abs / DAY)} days`;
  return seconds < 0 ? `${span} ago` : `in ${span}`;
}

/** "2026-11-29 06:40:12 UTC": an ISO time (or epoch ms) to the second, in UTC. */
export function utcTime(at: string | number): string {
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return String(at);
  return `${d.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** "2026-11-29 06:40:12 UTC (3 min ago)"; the time alone when it cannot be read. */
export function utcWithRelative(at: string, nowMs: number): string {
  const ms = Date.parse(at);
  if (Number.isNaN(ms)) return at;
  return `${utcTime(ms)} (${relativeTime(ms, nowMs)})`;
}
