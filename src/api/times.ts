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

/**
 * An epoch number as milliseconds, its unit told by its magnitude: up to 10¹¹ seconds, up to 10¹⁴
 * milliseconds, up to 10¹⁷ microseconds, up to 10²⁰ nanoseconds. Each band is the years 1973 to 5138
 * in its unit, and no band's times reach the next one's (10¹¹ seconds is the year 5138, 10¹¹ ms 1973).
 * Undefined for 0 or less (the platform's "never"), past 10²⁰, and for what is no finite number.
 */
export function epochMs(value: number): number | undefined {
  if (!(value > 0)) return undefined;
  if (value <= 1e11) return value * 1000;
  if (value <= 1e14) return value;
  if (value <= 1e17) return value / 1e3;
  if (value <= 1e20) return value / 1e6;
  return undefined;
}

/** `epochMs` in seconds, without a detour through milliseconds for a number that is seconds already. */
function epochSeconds(value: number): number | undefined {
  if (value > 0 && value <= 1e11) return value;
  const ms = epochMs(value);
  return ms === undefined ? undefined : ms / 1000;
}

/** A time given as a number in text: digits, a fraction, an exponent, blanks around it. */
const EPOCH_TEXT = /^\s*\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\s*$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Days from 1970-01-01 to a date of the proleptic Gregorian calendar (any year, unlike Date.UTC's 0 to 99). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  return (
    era * 146097 +
    yearOfEra * 365 +
    Math.floor(yearOfEra / 4) -
    Math.floor(yearOfEra / 100) +
    dayOfYear -
    719468
  );
}

/** Reads an ISO 8601 time a character at a time: no regular expression, no Date, nothing allocated. */
class IsoReader {
  at = 0;
  constructor(private readonly text: string) {}

  get done(): boolean {
    return this.at === this.text.length;
  }

  /** `n` digits as a number, or -1. */
  digits(n: number): number {
    let v = 0;
    for (let i = 0; i < n; i++) {
      const c = this.text.charCodeAt(this.at + i) - 48;
      if (!(c >= 0 && c <= 9)) return -1;
      v = v * 10 + c;
    }
    this.at += n;
    return v;
  }

  /** A time of day follows the date: `T` (or `t`, or a blank) and a digit. */
  timeFollows(): boolean {
    const c = this.text[this.at];
    const d = this.text.charCodeAt(this.at + 1) - 48;
    if (!((c === "T" || c === "t" || c === " ") && d >= 0 && d <= 9)) return false;
    this.at++;
    return true;
  }

  /** The character `ch` (or, when given, `other`) is next: taken. */
  take(ch: string, other = ch): boolean {
    const c = this.text[this.at];
    if (c !== ch && c !== other) return false;
    this.at++;
    return true;
  }

  /** Milliseconds of a fraction's digits (beyond the third ignored: truncated, as Date.parse does), or -1. */
  fraction(): number {
    let ms = 0;
    let n = 0;
    for (;;) {
      const c = this.text.charCodeAt(this.at) - 48;
      if (!(c >= 0 && c <= 9)) break;
      if (n < 3) ms = ms * 10 + c;
      n++;
      this.at++;
    }
    if (n === 0) return -1;
    for (let k = n; k < 3; k++) ms *= 10;
    return ms;
  }

  /** The zone's offset from UTC in minutes (0 for none, Z, UTC or GMT), or undefined when it is no zone. */
  zone(): number | undefined {
    while (this.text.charCodeAt(this.at) === 32) this.at++;
    if (this.done) return 0;
    const c = this.text[this.at];
    if (c === "Z" || c === "z") {
      this.at++;
      return this.done ? 0 : undefined;
    }
    if (c === "+" || c === "-") {
      this.at++;
      const hours = this.digits(2);
      if (hours < 0 || hours > 23) return undefined;
      let minutes = 0;
      if (!this.done) {
        this.take(":");
        minutes = this.digits(2);
        if (minutes < 0 || minutes > 59 || !this.done) return undefined;
      }
      return (c === "-" ? -1 : 1) * (hours * 60 + minutes);
    }
    const word = this.text.slice(this.at).toUpperCase();
    return word === "UTC" || word === "GMT" ? 0 : undefined;
  }
}

/**
 * An ISO 8601 time as epoch milliseconds (whole: digits of the fraction past the third are dropped):
 * `YYYY-MM-DD`, then optionally `T` (or a blank) and `hh:mm`, `:ss`, a fraction after `.` or `,`, and
 * a zone: `Z`, `±hh:mm`, `±hhmm`, `±hh`, `UTC` or `GMT`; without one, UTC (never the machine's zone).
 * A date alone is its midnight. Impossible calendar dates (2026-02-31, hour 25) are refused rather than
 * rolled over; `24:00:00` is the next day's midnight and a leap second (`23:59:60`) the first moment of
 * the next minute, as Unix time counts them.
 */
function isoMs(text: string): number | undefined {
  const r = new IsoReader(text);
  const year = r.digits(4);
  if (year < 0 || !r.take("-")) return undefined;
  const month = r.digits(2);
  if (month < 1 || month > 12 || !r.take("-")) return undefined;
  const day = r.digits(2);
  const leap = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day < 1 || day > (DAYS_IN_MONTH[month - 1] as number) + (leap ? 1 : 0)) return undefined;
  let hour = 0;
  let minute = 0;
  let second = 0;
  let ms = 0;
  if (r.timeFollows()) {
    hour = r.digits(2);
    if (hour < 0 || !r.take(":")) return undefined;
    minute = r.digits(2);
    if (minute < 0 || minute > 59) return undefined;
    if (r.take(":")) {
      second = r.digits(2);
      if (second < 0 || second > 60) return undefined;
      if (r.take(".", ",")) ms = r.fraction();
      if (ms < 0) return undefined;
    }
    if (hour > 24 || (hour === 24 && (minute > 0 || second > 0 || ms > 0))) return undefined;
  }
  const offset = r.zone();
  if (offset === undefined) return undefined;
  const days = daysFromCivil(year, month, day);
  return ((days * 24 + hour) * 60 + minute - offset) * 60_000 + second * 1000 + ms;
}

/**
 * Any time the API reports, as epoch milliseconds: a number or a numeric string (its unit by its
 * magnitude: `epochMs`), ISO 8601 (`isoMs`), the backup listings' 'YYYY-MM-DD-HH-MM', or an HTTP-style
 * date that names its zone. Blanks around a string are ignored. Undefined for anything else, and for 0
 * or less, which the platform uses for "never".
 */
export function apiTimeMs(value: unknown): number | undefined {
  if (typeof value === "number") return epochMs(value);
  if (typeof value !== "string") return undefined;
  const text = value.trim();
  if (EPOCH_TEXT.test(text)) return epochMs(Number(text));
  const iso = isoMs(text);
  if (iso !== undefined) return iso > 0 ? iso : undefined;
  // The backup listings' own form (a dash after the date); an impossible ISO time is not read as one.
  const backup = text[10] === "-" ? parseBackupTimestamp(text) : undefined;
  if (backup !== undefined) return backup > 0 ? backup * 1000 : undefined;
  // An HTTP-style date names its zone ("Sun, 22 Nov 2026 14:00:00 GMT"); without one it would be local time.
  if (/[A-Za-z]{3}/.test(text) && /(GMT|UTC|[+-]\d{4})$/i.test(text)) {
    const ms = Date.parse(text);
    if (!Number.isNaN(ms) && ms > 0) return ms;
  }
  return undefined;
}

/**
 * Any time the API reports (as `apiTimeMs` reads it), as Unix seconds; a number that is seconds
 * already is given as it is.
 */
export function parseApiTime(value: unknown): number | undefined {
  if (typeof value === "number") return epochSeconds(value);
  const ms = apiTimeMs(value);
  return ms === undefined ? undefined : ms / 1000;
}
