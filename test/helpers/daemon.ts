/**
 * Test helper: the built daemon (`dist/src/cli/main.js run`) as a child process
 * on a free loopback port, configured through a temporary YAML file.
 */
import { BACKING_OFF_COLLECTORS } from "../../src/config/schema.js";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { stringify } from "yaml";
import { freePort } from "./ports.js";
import { captureOutput } from "./prometheus.js";
import { waitFor } from "./wait.js";

export const MAIN = resolve(import.meta.dirname, "../../dist/src/cli/main.js");

export interface SimulatorEndpoint {
  apiUrl: string;
  authUrl: string;
  clientId: string;
  clientSecret: string;
}

export interface DaemonProcess {
  url: string;
  pid: number;
  child: ChildProcess;
  checkpointDir: string;
  /** Sends the signal (default SIGTERM) and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  kill(): Promise<void>;
  logs(): string;
}

function deepMerge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    out[k] =
      v &&
      typeof v === "object" &&
      !Array.isArray(v) &&
      prev &&
      typeof prev === "object" &&
      !Array.isArray(prev)
        ? deepMerge(prev as Record<string, unknown>, v as Record<string, unknown>)
        : v;
  }
  return out;
}

export async function startDaemonProcess(opts: {
  sim: SimulatorEndpoint;
  config?: Record<string, unknown>;
  env?: Record<string, string>;
  checkpointDir?: string;
  port?: number;
}): Promise<DaemonProcess> {
  const dir = await mkdtemp(join(tmpdir(), "sitehost-daemon-"));
  const checkpointDir = opts.checkpointDir ?? join(dir, "checkpoints");
  const port = opts.port ?? (await freePort());
  const config = deepMerge(
    {
      api: {
        url: opts.sim.apiUrl,
        authUrl: opts.sim.authUrl,
        clientId: opts.sim.clientId,
        maxRequestsPerSecond: 500,
        maxConcurrency: 16,
      },
      // Seconds for the defaults' 30 s and 5 minutes: a stream is read at least every 5 s.
      logs: { checkpointDir, pollInterval: "1s", maxPollInterval: "5s", ship: false },
      // Seconds for the defaults' hours: a site whose answers stay the same is asked at least every 5 s.
      collectors: Object.fromEntries(BACKING_OFF_COLLECTORS.map((name) => [name, { maxInterval: "5s" }])),
    },
    opts.config ?? {},
  );
  const file = join(dir, "config.yaml");
  await writeFile(file, stringify(config));
  const child = spawn(
    process.execPath,
    [MAIN, "run", "--config", file, "--web.listen-address", `127.0.0.1:${port}`],
    {
      env: { ...process.env, SITEHOST_CLIENT_SECRET: opts.sim.clientSecret, ...opts.env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const logs = captureOutput(child, 256 * 1024);
  const exited = new Promise<number | null>((res) => child.once("exit", (code) => res(code)));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    "the daemon to answer /-/healthy",
    async () => {
      if (child.exitCode !== null) throw new Error(`daemon exited with ${child.exitCode}:\n${logs()}`);
      try {
        return (await fetch(`${url}/-/healthy`)).ok;
      } catch {
        return false; // not listening yet
      }
    },
    { timeoutMs: 30_000, intervalMs: 100, last: logs },
  ).catch((err: unknown) => {
    child.kill("SIGKILL");
    throw err;
  });
  return {
    url,
    pid: child.pid as number,
    child,
    checkpointDir,
    stop: async (signal = "SIGTERM") => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
    kill: async () => {
      if (child.exitCode === null) child.kill("SIGKILL");
      await exited;
    },
    logs,
  };
}

/** Polls /-/ready until 200. */
export async function waitReady(url: string, timeoutMs = 60_000): Promise<void> {
  let last = "";
  await waitFor(
    "/-/ready to answer 200",
    async () => {
      try {
        const res = await fetch(`${url}/-/ready`);
        last = await res.text();
        return res.ok;
      } catch (err) {
        last = String(err);
        return false;
      }
    },
    { timeoutMs, intervalMs: 200, last: () => last },
  );
}

/** The daemon's exposition. */
export async function scrape(d: Pick<DaemonProcess, "url">): Promise<string> {
  return (await fetch(`${d.url}/metrics`)).text();
}

/** The value of the first series of `name` whose label text contains `labels`. */
export function metricValue(text: string, name: string, labels = ""): number | undefined {
  for (const line of text.split("\n")) {
    if (!line.startsWith(name) || !/[ {]/.test(line[name.length] ?? "")) continue;
    if (labels && !line.includes(labels)) continue;
    return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return undefined;
}

/** The sum of every series of `name` whose labels include `labels` (counters pre-set at 0 per label set). */
export function metricSum(text: string, name: string, labels = ""): number {
  return text
    .split("\n")
    .filter((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && l.includes(labels))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
}

/** The values of every series of `name`. */
export function metricValues(text: string, name: string): number[] {
  const out: number[] = [];
  for (const line of text.split("\n")) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `))
      out.push(Number(line.slice(line.lastIndexOf(" ") + 1)));
  }
  return out;
}

/**
 * Waits until `streams` PHP and web-server streams have each been read to their end by a read that
 * began at `sinceMs` or later (sitehost_exporter_log_last_read_timestamp_seconds). A read moves that
 * gauge only after everything it found was acknowledged by the collector and committed, and a stream
 * is never read twice at once, so by then every record read before `sinceMs` has arrived, replays
 * included: nothing more can come from those reads.
 */
export async function waitForReadsSince(
  d: DaemonProcess,
  sinceMs: number,
  streams: number,
  timeoutMs = 30_000,
): Promise<void> {
  let last = "";
  await waitFor(
    `${streams} log streams read to their end since ${new Date(sinceMs).toISOString()}`,
    async () => {
      const text = await scrape(d);
      const reads = text
        .split("\n")
        .filter((l) => l.startsWith("sitehost_exporter_log_last_read_timestamp_seconds{"))
        .filter((l) => /stream="(php|server)"/.test(l));
      last = reads.join("; ");
      return reads.filter((l) => Number(l.slice(l.lastIndexOf(" ") + 1)) * 1000 >= sinceMs).length >= streams;
    },
    { timeoutMs, intervalMs: 250, last: () => `${last}\n${d.logs().slice(-2000)}` },
  );
}
