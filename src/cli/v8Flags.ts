/**
 * Node.js flags for the long-running commands, applied by re-executing the same process image
 * (`process.execve`: same PID, same stdio and signals) before anything else loads.
 *
 * `--disable-sigusr1`, always: by default SIGUSR1 makes Node.js open its inspector on
 * 127.0.0.1:9229, and whoever can reach that port runs code in the daemon. Use `--inspect` to
 * debug on purpose.
 *
 * Memory-lean V8 settings, unless opted out: V8 sizes its heap from the host's RAM, not from the
 * container's limit. On a large host the young generation alone reserves 128 MB and the old
 * generation grows to three times the live set before collecting; with these flags RSS stays
 * close to the live set (docs/benchmarks.md: about 170 MB instead of 490 MB at 5,000 sites).
 * Skipped when the user chose any of these flags (NODE_OPTIONS or the command line) or set
 * SITEHOST_NODE_FLAGS=off.
 *
 * Nothing is done for short commands, on the second pass, and where execve is unavailable.
 */
export const LEAN_V8_FLAGS = ["--max-semi-space-size=2", "--optimize-for-size"] as const;
export const NO_SIGUSR1_INSPECTOR = "--disable-sigusr1";

const APPLIED = "SITEHOST_NODE_FLAGS_APPLIED";
const COMMANDS = ["run", "once", "simulate", "demo", "check-config", "help"];
/** Commands that run until stopped: no inspector on SIGUSR1. */
const LONG_RUNNING = new Set(["run", "demo", "simulate"]);
/** Of those, the ones that hold the metric store: memory-lean flags. */
const LEAN = new Set(["run", "demo"]);

/** The command `argv` runs: the first known command name, else `run` (the default); help and version are short. */
export function commandOf(argv: readonly string[]): string {
  const args = argv.slice(2);
  if (args.some((a) => a === "--help" || a === "-h" || a === "--version")) return "help";
  return args.find((a) => COMMANDS.includes(a)) ?? "run";
}

/** The arguments to re-execute with, or undefined when nothing is to be done. */
export function leanReexecArgs(
  argv: readonly string[],
  execArgv: readonly string[],
  env: NodeJS.ProcessEnv,
): string[] | undefined {
  if (env[APPLIED]) return undefined;
  const command = commandOf(argv);
  if (!LONG_RUNNING.has(command)) return undefined;
  // V8 reads --optimize_for_size and --optimize-for-size alike: compare in the dashed form.
  const chosen = ` ${env.NODE_OPTIONS ?? ""} ${execArgv.join(" ")} `.replace(/_/g, "-");
  const flags: string[] = [];
  if (!chosen.includes(` ${NO_SIGUSR1_INSPECTOR} `)) flags.push(NO_SIGUSR1_INSPECTOR);
  const lean =
    LEAN.has(command) &&
    env.SITEHOST_NODE_FLAGS !== "off" &&
    !LEAN_V8_FLAGS.some((flag) => chosen.includes(flag.split("=")[0] as string));
  if (lean) flags.unshift(...LEAN_V8_FLAGS);
  if (flags.length === 0) return undefined;
  // The user's own execArgv after ours, so their settings win.
  return [...flags, ...execArgv, ...argv.slice(1)];
}

/** Re-execute this process with the flags when `leanReexecArgs` says so; returns only when it does not. */
export function applyLeanV8Flags(): void {
  const execve = (process as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never })
    .execve;
  if (typeof execve !== "function") return;
  const args = leanReexecArgs(process.argv, process.execArgv, process.env);
  if (!args) return;
  try {
    execve.call(process, process.execPath, [process.execPath, ...args], { ...process.env, [APPLIED]: "1" });
  } catch {
    // Not supported here (Windows, a sandbox): run with V8's defaults.
  }
}
