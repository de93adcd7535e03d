/**
 * `doctor --output json` answers in JSON whatever happens: a configuration that cannot be read or is
 * invalid (exit 2), a command line commander refuses (exit 2), a failure of the run itself (exit 1).
 * The object has the report's shape (no findings, no API requests) and an `error` saying what
 * stopped the checks, so a script reads `exitCode` and `error` the same way in every case.
 */
import { VERSION } from "../version.js";

export type DoctorErrorKind = "configuration" | "usage" | "failure";

export interface DoctorErrorReport {
  version: string;
  generatedAt: string;
  node: string;
  configFile: string | undefined;
  findings: [];
  apiRequests: 0;
  exitCode: 1 | 2;
  error: {
    kind: DoctorErrorKind;
    /** One line: what stopped the checks. */
    message: string;
    /** Each problem on its own (a YAML syntax error holds its snippet, lines joined by "\n"). */
    problems: string[];
  };
}

/** Whether `argv` (process.argv) asks for `doctor --output json`, read without commander. */
export function doctorJsonRequested(argv: readonly string[]): boolean {
  const args = argv.slice(2);
  if (!args.includes("doctor")) return false;
  return args.some((a, i) => a === "--output=json" || (a === "--output" && args[i + 1] === "json"));
}

/** The value of `--config` in `argv`, for the report's `configFile` when commander did not get that far. */
export function configFileOf(argv: readonly string[]): string | undefined {
  const args = argv.slice(2);
  for (const [i, a] of args.entries()) {
    if (a === "--config") return args[i + 1];
    if (a.startsWith("--config=")) return a.slice("--config=".length);
  }
  return undefined;
}

export function doctorErrorReport(
  kind: DoctorErrorKind,
  message: string,
  problems: readonly string[],
  configFile: string | undefined,
): DoctorErrorReport {
  return {
    version: VERSION,
    generatedAt: new Date().toISOString(),
    node: process.version,
    configFile,
    findings: [],
    apiRequests: 0,
    exitCode: kind === "failure" ? 1 : 2,
    error: { kind, message, problems: [...problems] },
  };
}

/** Writes the report to stdout; returns its exit code. */
export function writeDoctorError(
  kind: DoctorErrorKind,
  message: string,
  problems: readonly string[],
  configFile: string | undefined,
): 1 | 2 {
  const report = doctorErrorReport(kind, message, problems, configFile);
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  return report.exitCode;
}
