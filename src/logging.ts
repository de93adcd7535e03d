import { pino, type Logger, type DestinationStream } from "pino";

export type LogFormat = "json" | "logfmt" | "pretty";
export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal"] as const;

/** Keys whose values are secrets, wherever they appear in a log object (defense in depth). */
const SECRET_LOG_KEYS = [
  "clientSecret",
  "client_secret",
  "token",
  "access_token",
  "refresh_token",
  "authorization",
  "password",
];

/** Each secret key at the top level and up to three objects deep (`a.b.c.clientSecret`). */
export const REDACT_PATHS = SECRET_LOG_KEYS.flatMap((key) =>
  ["", "*.", "*.*.", "*.*.*."].map((prefix) => `${prefix}${key}`),
);

function logfmtValue(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  if (text === undefined) return '""';
  return /[\s"=\\]/.test(text) || text === "" ? JSON.stringify(text) : text;
}

/** Renders one pino JSON line as logfmt: `ts=... level=info msg="..." key=value`. */
export function jsonLineToLogfmt(line: string): string {
  const record = JSON.parse(line) as Record<string, unknown>;
  const { time, level, msg, ...rest } = record;
  const parts = [`ts=${new Date(Number(time)).toISOString()}`, `level=${String(level)}`];
  if (msg !== undefined) parts.push(`msg=${logfmtValue(msg)}`);
  for (const [key, value] of Object.entries(rest)) {
    if (key === "pid" || key === "hostname") continue;
    parts.push(`${key}=${logfmtValue(value)}`);
  }
  return parts.join(" ") + "\n";
}

class LogfmtStream implements DestinationStream {
  constructor(private readonly out: NodeJS.WritableStream) {}
  write(chunk: string): void {
    for (const line of chunk.split("\n")) {
      if (line.trim() !== "") this.out.write(jsonLineToLogfmt(line));
    }
  }
}

export interface LoggerOptions {
  level: string;
  format: LogFormat;
  destination?: NodeJS.WritableStream;
}

export function createLogger(opts: LoggerOptions): Logger {
  const out = opts.destination ?? process.stderr;
  const base = {
    level: opts.level,
    redact: { paths: REDACT_PATHS, censor: "<redacted>" },
    formatters: { level: (label: string) => ({ level: label }) },
    base: undefined,
    timestamp: opts.format === "json" ? pino.stdTimeFunctions.isoTime : pino.stdTimeFunctions.epochTime,
  };
  if (opts.format === "logfmt") return pino(base, new LogfmtStream(out));
  if (opts.format === "pretty") {
    return pino(
      { ...base, timestamp: pino.stdTimeFunctions.epochTime },
      pino.transport({ target: "pino-pretty", options: { destination: out === process.stdout ? 1 : 2 } }),
    );
  }
  return pino(base, out as DestinationStream);
}
