/**
 * Node.js flags for the long-running commands, applied by re-executing the same process image
 * (`process.execve`: same PID, same stdio and signals) before anything else loads.
 *
 * `--disable-sigusr1`, always: by default SIGUSR1 makes Node.js open its inspector on
 * 127.0.0.1:9229, and whoever can reach that port runs code in the daemon. Use `--inspect` to
 * debug on purpose.
 *
 * V8 heap settings chosen for the work the process does, unless opted out. V8 sizes its heap from
 * the host's RAM, not from the container's limit: on a large host the young generation alone
 * reserves 128 MB and the old generation grows to several times the live set before collecting.
 * - Metrics only (`logs.enabled: false`): memory first. The collectors spend almost no CPU, so
 *   `--optimize-for-size` (small heap growth, memory returned promptly) costs nothing a user sees.
 * - Shipping logs: CPU per record first. `--optimize-for-size` doubles the log path's CPU (it
 *   collects the old generation every few MB); instead the old generation grows by 40 % of the
 *   live set, and not before it reaches 64 MB. The young generation is collected by the main thread
 *   alone: helper threads shorten those pauses (a millisecond or two here) but cost more CPU in
 *   all. With these flags `run` also switches V8's memory saver mode by the log load: on while the
 *   log path is quiet (each full collection gives freed pages back), off while a backlog drains
 *   (logs/memorySaver.ts). docs/benchmarks.md has the measurements behind all of it.
 * Skipped when the user chose any of these flags (NODE_OPTIONS or the command line);
 * SITEHOST_NODE_FLAGS=off keeps V8's defaults, SITEHOST_NODE_FLAGS="<flags>" uses those instead.
 *
 * Nothing is done for short commands, on the second pass, when the image's entry point gave the
 * chosen flags already (PRESET), and where execve is unavailable.
 */
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { commandOf } from "./command.js";

export type Workload = "metrics" | "logs";

export const V8_FLAGS: Record<Workload, readonly string[]> = {
  metrics: ["--max-semi-space-size=2", "--optimize-for-size"],
  logs: [
    "--max-semi-space-size=8",
    "--no-parallel-scavenge",
    "--initial-old-space-size=64",
    "--heap-growing-percent=40",
  ],
};
export const NO_SIGUSR1_INSPECTOR = "--disable-sigusr1";
/**
 * glibc's allocator settings for the re-executed process (the user's own win): two arenas instead of
 * one per thread, and large buffers mapped and unmapped rather than left to fragment the heap. The
 * threshold is fixed because glibc otherwise raises its own to the size of the largest buffer freed
 * (megabytes: an exposition, a sites list), after which all of them fragment the heap. The log path's
 * is 256 KB, above its page buffers (64 KB and more for every page: mapping each afresh costs about
 * 1.5 µs of CPU per record in page faults), below its exports and expositions.
 */
export const LEAN_MALLOC_ENV: Record<Workload, Readonly<Record<string, string>>> = {
  metrics: { MALLOC_ARENA_MAX: "2", MALLOC_MMAP_THRESHOLD_: "65536" },
  logs: { MALLOC_ARENA_MAX: "2", MALLOC_MMAP_THRESHOLD_: "262144" },
};

const APPLIED = "SITEHOST_NODE_FLAGS_APPLIED";
/**
 * Set by the container image, whose entry point gives `node` the flags of this workload (and
 * `--disable-sigusr1`) on its command line: those are the exporter's, not the user's, and when they
 * are the ones chosen the process runs on without re-executing (Node.js starts once, so a signal in
 * the first part of a second finds the handlers in sooner).
 */
export const PRESET = "SITEHOST_NODE_FLAGS_PRESET";
/** Commands that run until stopped: no inspector on SIGUSR1. */
const LONG_RUNNING = new Set(["run", "demo", "simulate"]);
/** Of those, the ones that hold the metric store and the log pipeline: heap settings. */
const TUNED = new Set(["run", "demo"]);

export { commandOf } from "./command.js";

/** The `--config` file named on the command line, if any. */
function configFileOf(argv: readonly string[]): string | undefined {
  for (let i = 2; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--config") return argv[i + 1];
    if (arg.startsWith("--config=")) return arg.slice("--config=".length);
  }
  return undefined;
}

/**
 * What the process will mostly do, from a quick look at the config file: "metrics" only when it
 * turns logs off. Anything unreadable counts as the default (logs on); the real load reports it.
 */
export function workloadOf(argv: readonly string[], readFile: (file: string) => string = readUtf8): Workload {
  if (commandOf(argv) !== "run") return "logs"; // the demo ships logs
  const file = configFileOf(argv);
  if (!file) return "logs";
  try {
    const doc: unknown = parse(readFile(file));
    const logs = (doc as { logs?: { enabled?: unknown } } | null)?.logs;
    return logs?.enabled === false ? "metrics" : "logs";
  } catch {
    return "logs";
  }
}

function readUtf8(file: string): string {
  return readFileSync(file, "utf8");
}

/** The flags the image's entry point gave `node` (see PRESET), as found on its command line. */
function presetGiven(execArgv: readonly string[], env: NodeJS.ProcessEnv): string[] {
  const workload = env[PRESET]?.trim();
  if (workload !== "logs" && workload !== "metrics") return [];
  return [NO_SIGUSR1_INSPECTOR, ...V8_FLAGS[workload]].filter((flag) => execArgv.includes(flag));
}

const sameFlags = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((flag) => b.includes(flag));

/** The arguments to re-execute with, or undefined when nothing is to be done. */
export function leanReexecArgs(
  argv: readonly string[],
  execArgv: readonly string[],
  env: NodeJS.ProcessEnv,
  workload: () => Workload = () => workloadOf(argv),
): string[] | undefined {
  if (env[APPLIED]) return undefined;
  const command = commandOf(argv);
  if (!LONG_RUNNING.has(command)) return undefined;
  // The image's own flags are not the user's: what the user chose is the rest.
  const preset = presetGiven(execArgv, env);
  const userArgv = execArgv.filter((flag) => !preset.includes(flag));
  // V8 reads --optimize_for_size and --optimize-for-size alike: compare in the dashed form.
  const chosen = ` ${env.NODE_OPTIONS ?? ""} ${userArgv.join(" ")} `.replace(/_/g, "-");
  const flags: string[] = [];
  if (!chosen.includes(` ${NO_SIGUSR1_INSPECTOR} `)) flags.push(NO_SIGUSR1_INSPECTOR);
  const own = env.SITEHOST_NODE_FLAGS?.trim();
  if (TUNED.has(command) && own !== "off") {
    const heapFlags = own ? own.split(/\s+/) : V8_FLAGS[workload()];
    const userChose = heapFlags.some((flag) => chosen.includes(` ${flag.split("=")[0] as string}`));
    if (!userChose) flags.unshift(...heapFlags);
  }
  // Already running with exactly these (none, or the image's).
  if (sameFlags(flags, preset)) return undefined;
  // The user's own execArgv after ours, so their settings win.
  return [...flags, ...userArgv, ...argv.slice(1)];
}

/**
 * Whether this process runs with the heap flags the exporter chose for shipping logs (re-executed
 * with them, or given them by the image's entry point: not SITEHOST_NODE_FLAGS, not the user's own
 * heap flags). Only then does the log
 * pipeline switch V8's memory saver mode by its load (logs/memorySaver.ts); a user's own
 * `--memory-saver-mode` or `--no-memory-saver-mode` is theirs too.
 */
export function exporterHeapFlagsApplied(
  execArgv: readonly string[] = process.execArgv,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  const ours = Boolean(env[APPLIED]) || env[PRESET]?.trim() === "logs";
  if (!ours || env.SITEHOST_NODE_FLAGS?.trim()) return false;
  const given = ` ${env.NODE_OPTIONS ?? ""} ${execArgv.join(" ")} `.replace(/_/g, "-");
  if (given.includes("memory-saver-mode")) return false;
  return V8_FLAGS.logs.every((flag) => execArgv.includes(flag));
}

/**
 * The re-execution with the flags, ready to run, when `leanReexecArgs` says there is one: what it
 * needs (the config file read for the workload) is done now, so nothing slow is left between the
 * entry point's last turn of the event loop and the re-execution itself (a signal taken by then is
 * handled, see main.ts). Running it returns only when re-execution is not possible here.
 */
export function leanReexec(): (() => void) | undefined {
  const execve = (process as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never })
    .execve;
  if (typeof execve !== "function") return undefined;
  let workload: Workload | undefined;
  const args = leanReexecArgs(process.argv, process.execArgv, process.env, () => {
    workload ??= workloadOf(process.argv);
    return workload;
  });
  if (!args) return undefined;
  const env = { ...LEAN_MALLOC_ENV[workload ?? "metrics"], ...process.env, [APPLIED]: "1" };
  return () => {
    try {
      execve.call(process, process.execPath, [process.execPath, ...args], env);
    } catch {
      // Not supported here (Windows, a sandbox): run with V8's defaults.
    }
  };
}
