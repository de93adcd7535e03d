/** Go/Prometheus-style durations: 500ms, 30s, 5m, 1h30m, 2d. Returns milliseconds. */
const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/y;

export function parseDuration(text: string): number | undefined {
  const value = text.trim();
  if (value === "" || value !== text) return undefined;
  if (value === "0") return 0;
  PART.lastIndex = 0;
  let total = 0;
  let pos = 0;
  while (pos < value.length) {
    PART.lastIndex = pos;
    const m = PART.exec(value);
    if (!m) return undefined;
    total += Number(m[1]) * (UNIT_MS[m[2] as string] as number);
    pos = PART.lastIndex;
  }
  return total;
}

/** Parse a duration that was already validated by the config schema. */
export function durationMs(text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined) throw new Error(`not a duration: ${JSON.stringify(text)}`);
  return ms;
}
