/**
 * Field ranges of cron expressions. node-cron validates plain values but reads out-of-range
 * steps (`*\/61`) as "the first value only"; a schedule that silently runs once an hour instead
 * of what was written is a configuration error.
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
