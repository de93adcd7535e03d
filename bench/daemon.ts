/**
 * What the benchmarks that run the built daemon share: a free loopback port, the daemon as a child
 * process against a simulator with a configuration of the benchmark's choosing, and its exposition.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { stringify } from "yaml";
import type { RunningSimulator } from "../src/simulator/index.js";

const MAIN = resolve(import.meta.dirname, "../src/cli/main.js");

export async function freePort(): Promise<number> {
  return new Promise((res) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

export interface BenchDaemon {
  child: ChildProcess;
  url: string;
  /** performance.now() at spawn. */
  started: number;
  /** Its temporary directory (configuration, checkpoints). */
  dir: string;
  /** SIGTERM, wait for the exit, remove the directory. */
  stop(): Promise<void>;
}

/**
 * The daemon against `sim`: `api` and `config` are merged over the simulator's address and a
 * checkpoint directory of its own; `env` is added to the process's.
 */
export async function startBenchDaemon(
  sim: RunningSimulator,
  opts: { api?: Record<string, unknown>; config?: Record<string, unknown>; env?: Record<string, string> },
): Promise<BenchDaemon> {
  const dir = await mkdtemp(join(tmpdir(), "sitehost-bench-"));
  const port = await freePort();
  const file = join(dir, "config.yaml");
  const { logs, ...rest } = opts.config ?? {};
  await writeFile(
    file,
    stringify({
      api: { url: sim.apiUrl, authUrl: sim.authUrl, clientId: sim.clientId, ...opts.api },
      logs: { checkpointDir: join(dir, "checkpoints"), ...(logs as Record<string, unknown> | undefined) },
      ...rest,
    }),
  );
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [MAIN, "run", "--config", file, "--web.listen-address", `127.0.0.1:${port}`, "--log.level", "error"],
    {
      env: { ...process.env, SITEHOST_CLIENT_SECRET: sim.clientSecret, ...opts.env },
      stdio: ["ignore", "ignore", "inherit"],
    },
  );
  const exited = new Promise((r) => child.once("exit", r));
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    started,
    dir,
    stop: async () => {
      child.kill("SIGTERM");
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export async function scrape(url: string): Promise<string> {
  return (await fetch(`${url}/metrics`)).text();
}

/** Every series of `name` in an exposition: its label text and value. */
export function values(text: string, name: string): Array<{ labels: string; value: number }> {
  const out: Array<{ labels: string; value: number }> = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const space = line.lastIndexOf(" ");
    out.push({ labels: line.slice(name.length, space), value: Number(line.slice(space + 1)) });
  }
  return out;
}

/** A label's value in a label text such as `{collector="traffic",result="ok"}`. */
export function label(labels: string, name: string): string | undefined {
  return new RegExp(`${name}="([^"]*)"`).exec(labels)?.[1];
}
