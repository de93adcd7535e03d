/**
 * Memory-lean V8 settings for the long-running commands, applied by re-executing the same process
 * image (`process.execve`: same PID, same stdio and signals) before anything else loads.
 *
 * Why: V8 sizes its heap from the host's RAM, not from the container's limit. On a large host the
 * young generation alone reserves 128 MB and the old generation grows to three times the live set
 * before collecting; with these flags RSS stays close to the live set (docs/benchmarks.md: about
 * 170 MB instead of 490 MB at 5,000 sites).
 *
 * Skipped when the user chose any of these flags (NODE_OPTIONS or the command line), when
 * SITEHOST_NODE_FLAGS=off, for short commands, and where execve is unavailable.
 */
export const LEAN_V8_FLAGS = ["--max-semi-space-size=2", "--optimize-for-size"] as const;

const APPLIED = "SITEHOST_NODE_FLAGS_APPLIED";
const COMMANDS = ["run", "once", "simulate", "demo", "check-config", "help"];
const LONG_RUNNING = new Set(["run", "demo"]);

/** The command `argv` runs: the first known command name, else `run` (the default); help and version are short. */
function commandOf(argv: readonly string[]): string {
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
  if (env[APPLIED] || env.SITEHOST_NODE_FLAGS === "off") return undefined;
  if (!LONG_RUNNING.has(commandOf(argv))) return undefined;
  // V8 reads --optimize_for_size and --optimize-for-size alike: compare in the dashed form.
  const chosen = `${env.NODE_OPTIONS ?? ""} ${execArgv.join(" ")}`.replace(/_/g, "-");
  if (LEAN_V8_FLAGS.some((flag) => chosen.includes(flag.split("=")[0] as string))) return undefined;
  // The user's own execArgv after ours, so their settings win.
  return [...LEAN_V8_FLAGS, ...execArgv, ...argv.slice(1)];
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
