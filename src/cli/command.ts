/**
 * Which command a command line runs, read without loading anything: the entry point needs it before
 * it installs the signal handling, which must come before any slow import.
 */

export const COMMANDS = ["run", "once", "simulate", "demo", "check-config", "doctor", "slo-rules", "help"];

/** The command `argv` runs: the first known command name, else `run` (the default); help and version are short. */
export function commandOf(argv: readonly string[]): string {
  const args = argv.slice(2);
  if (args.some((a) => a === "--help" || a === "-h" || a === "--version")) return "help";
  return args.find((a) => COMMANDS.includes(a)) ?? "run";
}
