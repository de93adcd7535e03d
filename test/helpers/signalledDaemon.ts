/**
 * Test helper: the built daemon as a process supervisor or an operator starts it, to send it
 * signals: `node dist/src/cli/main.js` or the package's `sitehost-exporter` command (bin/, the
 * launcher npm links into node_modules/.bin). Against a closed API port: it starts and serves, its
 * collectors fail; logs are not shipped.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach } from "vitest";
import { main, root } from "./builtCli.js";
import { captureOutput } from "./prometheus.js";
import { waitFor } from "./wait.js";

export const launcher = join(root, "bin/sitehost-exporter");

export interface Daemon {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export type Via = "node" | "launcher";

const started: Daemon[] = [];
afterEach(() => {
  for (const d of started.splice(0))
    if (d.child.exitCode === null && d.child.signalCode === null) d.child.kill("SIGKILL");
});

/** Starts the daemon in `cwd` (`run` on a loopback port of its choosing unless `args` say otherwise). */
export function signalledDaemon(
  cwd: string,
  env: Record<string, string> = {},
  args: string[] = ["run"],
  via: Via = "node",
): Daemon {
  const listen = args[0] === "run" ? ["--web.listen-address", "127.0.0.1:0"] : [];
  const [file, argv] =
    via === "node" ? [process.execPath, [main, ...args, ...listen]] : [launcher, [...args, ...listen]];
  const child = spawn(file, argv, {
    cwd,
    env: {
      // The launcher runs the `node` it finds first, as npm's bin links do: this one.
      PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`,
      SITEHOST_CLIENT_ID: "id",
      SITEHOST_CLIENT_SECRET: "secret",
      SITEHOST_API_URL: "http://127.0.0.1:9/v1",
      SITEHOST_AUTH_URL: "http://127.0.0.1:9",
      SITEHOST_CHECKPOINT_DIR: join(cwd, "checkpoints"),
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = captureOutput(child, 256 * 1024);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
    child.once("exit", (code, signal) => res({ code, signal })),
  );
  const d = { child, output, exited };
  started.push(d);
  return d;
}

/** Waits for `condition` (20 s at most); a timeout shows the process's output. */
export const until = (condition: () => boolean, what: string, d: Daemon) =>
  waitFor(what, condition, { timeoutMs: 20_000, last: d.output });

export const hasLine = (d: Daemon, text: string) => () => d.output().includes(text);

/** The exit, or "still running" after `ms`. */
export function exitWithin(d: Daemon, ms: number) {
  return Promise.race([
    d.exited,
    new Promise<"still running">((res) => setTimeout(() => res("still running"), ms).unref()),
  ]);
}

/** Whether process `pid` has a handler of its own for `signal` (its SigCgt mask, Linux). */
export function catches(pid: number, signal: number): boolean {
  try {
    const mask = /^SigCgt:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return mask !== undefined && (BigInt(`0x${mask}`) >> BigInt(signal - 1)) % 2n === 1n;
  } catch {
    return false;
  }
}

/**
 * A preload (`NODE_OPTIONS=--import=<file>`) that stands in for a log transport that never finishes
 * flushing at exit: it pauses 1.5 s after the daemon's "stopped" line and blocks the main thread in an
 * exit handler, so a second signal always arrives where a handler still installed would never act.
 */
export function blockingExitHook(dir: string): string {
  const hook = join(dir, "blocking-exit-hook.mjs");
  writeFileSync(
    hook,
    [
      "const block = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);",
      "const write = process.stderr.write.bind(process.stderr);",
      "process.stderr.write = (chunk, ...rest) => {",
      "  const done = write(chunk, ...rest);",
      '  if (String(chunk).includes(\'"msg":"stopped"\')) block(1500);',
      "  return done;",
      "};",
      "process.on('exit', () => block());",
      "",
    ].join("\n"),
  );
  return hook;
}

/**
 * SIGTERM at each of `delays` (ms) after `start()` (and after `ready`, when given: a condition on the
 * new process to wait for first), one process each: how each ended, `<delay>: <exit code or signal>`.
 */
export async function termSweep(
  start: () => Daemon,
  delays: readonly number[],
  ready?: (d: Daemon) => boolean,
): Promise<string[]> {
  const outcomes: string[] = [];
  for (const delay of delays) {
    const d = start();
    if (ready)
      await waitFor("the process to be ready for the signal", () => ready(d), {
        timeoutMs: 10_000,
        last: d.output,
      });
    await new Promise((res) => setTimeout(res, delay));
    d.child.kill("SIGTERM");
    const exit = await exitWithin(d, 10_000);
    outcomes.push(`${delay}: ${exit === "still running" ? exit : `${exit.code ?? exit.signal}`}`);
  }
  return outcomes;
}
