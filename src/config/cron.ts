/**
 * What is wrong with a cron expression, in words that say which: a field out of its range (node-cron
 * reads out-of-range steps such as `*\/61` as "the first value only", so a schedule that silently runs
 * once an hour instead of what was written is a configuration error), or a date that never comes
 * (`0 0 31 2 *`: there is no 31 February; node-cron calls it invalid, which reads as if it were no
 * cron expression at all). Nicknames (`@hourly` and friends) are listed in NICKNAMES.
 */
interface Field {
  name: string;
  min: number;
  max: number;
  /** Distinct values (7 for week days, where 0 and 7 are both Sunday). */
  span?: number;
  /** Short and long names, and the value of the first one. */
  names?: { short: readonly string[]; long: readonly string[]; first: number };
}

const MONTHS = {
  short: ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"],
  long: [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
  ],
  first: 1,
};
const DAYS = {
  short: ["sun", "mon", "tue", "wed", "thu", "fri", "sat"],
  long: ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"],
  first: 0,
};

const SECOND: Field = { name: "second", min: 0, max: 59 };
const FIELDS: readonly Field[] = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12, names: MONTHS },
  { name: "day of week", min: 0, max: 7, span: 7, names: DAYS },
];

/** Forms node-cron gives a meaning of its own (last day, nearest weekday, nth weekday): its validation judges them. */
const SPECIAL = /^(?:L|LW|\d{1,2}W|L-\d{1,2}|[0-7]L|\w+#\d)$/i;

/** A number or (months, week days) a name: its value, or undefined when neither. */
function value(text: string, field: Field): number | undefined {
  if (/^\d+$/.test(text)) return Number(text);
  const names = field.names;
  if (!names) return undefined;
  const lower = text.toLowerCase();
  const i = Math.max(names.short.indexOf(lower), names.long.indexOf(lower));
  return i < 0 ? undefined : i + names.first;
}

function itemProblem(item: string, field: Field): string | undefined {
  const range = `${field.min}-${field.max}`;
  const [base = "", step, extra] = item.split("/");
  if (extra !== undefined) return `${field.name} ${JSON.stringify(item)} has more than one step`;
  if (step !== undefined) {
    const span = field.span ?? field.max - field.min + 1;
    if (!/^\d+$/.test(step) || Number(step) < 1 || Number(step) > span)
      return `${field.name} step ${JSON.stringify(step)} is out of range 1-${span}`;
  }
  if (base === "*" || base === "?") return undefined;
  const ends = base.split("-");
  const values = ends.map((end) => value(end, field));
  if (values.some((v) => v === undefined)) {
    if (step === undefined && SPECIAL.test(base)) return undefined;
    return `${field.name} ${JSON.stringify(item)} is not a value or range in ${range}`;
  }
  if (ends.length > 2) return `${field.name} ${JSON.stringify(item)} is not a value or range in ${range}`;
  for (const v of values as number[]) {
    if (v < field.min || v > field.max) return `${field.name} ${v} is out of range ${range}`;
  }
  return undefined;
}

/**
 * Why a 5-field (or 6-field, leading seconds) cron expression has a field out of its range, or
 * undefined. Nicknames (`@hourly`) and the field count are left to node-cron.
 */
export function cronRangeProblem(expression: string): string | undefined {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5 && parts.length !== 6) return undefined;
  const fields = parts.length === 6 ? [SECOND, ...FIELDS] : FIELDS;
  for (const [i, part] of parts.entries()) {
    for (const item of part.split(",")) {
      const problem = itemProblem(item, fields[i] as Field);
      if (problem) return problem;
    }
  }
  return undefined;
}

/** The nicknames node-cron accepts, with what they stand for (documented in docs/configuration.md). */
export const NICKNAMES: Readonly<Record<string, string>> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

/** The values a field's list stands for, or undefined when an item is a special form (L, W, #). */
function expand(part: string, field: Field): Set<number> | undefined {
  const out = new Set<number>();
  for (const item of part.split(",")) {
    const [base = "", stepText] = item.split("/");
    const step = stepText === undefined ? 1 : Number(stepText);
    let from = field.min;
    let to = field.max;
    if (base !== "*" && base !== "?") {
      const ends = base.split("-").map((end) => value(end, field));
      if (ends.some((v) => v === undefined)) return undefined;
      from = ends[0] as number;
      to = ends.length > 1 ? (ends[1] as number) : stepText === undefined ? from : field.max;
    }
    for (let v = from; v <= to; v += step) out.add(v);
  }
  return out;
}

/** Days in each month, February in a leap year (the most a date can have). */
const MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Why a cron expression whose fields are in range would never run, or undefined: days of the month
 * that no chosen month has (`0 0 31 2 *`, `0 0 30,31 2 *`, `0 0 31 4,6 *`). A day of the week given
 * as well does not help: node-cron refuses such an expression all the same.
 */
export function cronNeverFiresProblem(expression: string): string | undefined {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5 && parts.length !== 6) return undefined;
  const [dom = "*", month = "*"] = parts.slice(-3);
  const [, , domField, monthField] = FIELDS as [Field, Field, Field, Field, Field];
  const days = expand(dom, domField);
  const months = expand(month, monthField);
  if (!days || !months || days.size === 0 || months.size === 0) return undefined;
  for (const m of months) for (const d of days) if (d <= (MONTH_DAYS[m - 1] ?? 31)) return undefined;
  const monthNames = [...months].map((m) =>
    (MONTHS.long[m - 1] ?? String(m)).replace(/^./, (c) => c.toUpperCase()),
  );
  return `never runs: day of month ${[...days].join(",")} does not occur in ${monthNames.join(", ")}`;
}
