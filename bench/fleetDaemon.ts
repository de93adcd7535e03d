/**
 * The large-account benchmarks' daemon: a child process with default schedules, logs shipped to an
 * acknowledging OTLP receiver, against the simulator; what it is measured with (resident memory,
 * /metrics as Prometheus scrapes it).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { openSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { stringify } from "yaml";
import { startSimulator, type RunningSimulator } from "../src/simulator/index.js";
import { freePort } from "./daemon.js";

const MAIN = resolve(import.meta.dirname, "../src/cli/main.js");

export async function ackingReceiver(): Promise<{ url: string; server: Server; requests: () => number }> {
  let n = 0;
  const server = createServer((req, res) => {
    req.on("data", () => undefined);
    req.on("end", () => {
      n += 1;
      res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    server,
    requests: () => n,
  };
}

export async function rssOf(pid: number): Promise<{ rss: number; hwm: number }> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb("VmRSS"), hwm: kb("VmHWM") };
}

/**
 * Where the resident memory is, from /proc/<pid>/smaps (MB): file-backed pages (the Node.js binary
 * and libraries), glibc's main heap (`[heap]`: malloc'd buffers), and the other anonymous mappings
 * (the V8 heap, malloc's second arena, thread stacks).
 */
export async function residentParts(
  pid: number,
): Promise<{ files: number; mallocHeap: number; anonymous: number }> {
  const smaps = await readFile(`/proc/${pid}/smaps`, "utf8");
  const parts = { files: 0, mallocHeap: 0, anonymous: 0 };
  let kind: keyof typeof parts = "anonymous";
  for (const line of smaps.split("\n")) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ (\d+)\s*(.*)$/.exec(line);
    if (mapping) {
      const [, inode, name] = mapping;
      kind = name === "[heap]" ? "mallocHeap" : inode !== "0" ? "files" : "anonymous";
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) parts[kind] += Number(rss[1]) / 1024;
  }
  return {
    files: Math.round(parts.files),
    mallocHeap: Math.round(parts.mallocHeap),
    anonymous: Math.round(parts.anonymous),
  };
}

export interface Daemon {
  child: ChildProcess;
  url: string;
  started: number;
  dir: string;
}

export async function startDaemon(
  sim: RunningSimulator,
  otlp: string,
  api: Record<string, unknown>,
  nodeOptions?: string,
  logs = true,
): Promise<Daemon> {
  const dir = await mkdtemp(join(tmpdir(), "sitehost-fleet-"));
  const port = await freePort();
  const file = join(dir, "config.yaml");
  await writeFile(
    file,
    stringify({
      api: { url: sim.apiUrl, authUrl: sim.authUrl, clientId: sim.clientId, ...api },
      logs: { checkpointDir: join(dir, "checkpoints"), enabled: logs },
    }),
  );
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [MAIN, "run", "--config", file, "--web.listen-address", `127.0.0.1:${port}`, "--log.level", "error"],
    {
      env: {
        ...process.env,
        SITEHOST_CLIENT_SECRET: sim.clientSecret,
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp,
        ...(nodeOptions ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} ${nodeOptions}` } : {}),
      },
      cwd: dir,
      // FLEET_DAEMON_STDOUT=<file> keeps what the daemon prints: with SITEHOST_NODE_FLAGS="<its flags>
      // --trace-gc", its collections (NODE_OPTIONS may not carry --trace-gc).
      stdio: [
        "ignore",
        process.env.FLEET_DAEMON_STDOUT ? openSync(process.env.FLEET_DAEMON_STDOUT, "w") : "ignore",
        "inherit",
      ],
    },
  );
  return { child, url: `http://127.0.0.1:${port}`, started, dir };
}

/**
 * A simulator of `sites` sites, a receiver and the daemon against them with a budget generous enough
 * for everything to run.
 */
export async function startFleet(
  sites: number,
  nodeOptions?: string,
  logs = true,
): Promise<{ sim: RunningSimulator; receiver: Awaited<ReturnType<typeof ackingReceiver>>; d: Daemon }> {
  const sim = await startSimulator({ sites, seed: 5 });
  const receiver = await ackingReceiver();
  const api = { maxRequestsPerSecond: 5000, maxConcurrency: 32 };
  return { sim, receiver, d: await startDaemon(sim, receiver.url, api, nodeOptions, logs) };
}

export const sum = (rows: Array<{ value: number }>) => rows.reduce((a, r) => a + r.value, 0);

export async function stop(d: Daemon, sim: RunningSimulator, receiver: Server): Promise<void> {
  d.child.kill("SIGTERM");
  await new Promise((r) => d.child.once("exit", r));
  await sim.close();
  receiver.close();
  await rm(d.dir, { recursive: true, force: true });
}

/** What Prometheus 3 asks for by default (it sends gzip too): OpenMetrics, so exemplars are rendered. */
export const PROMETHEUS_ACCEPT =
  "application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.1";

/** /metrics as Prometheus scrapes it (the text is OpenMetrics: the series lines the bench reads are alike). */
export async function scrapeLikePrometheus(url: string): Promise<string> {
  const res = await fetch(`${url}/metrics`, { headers: { accept: PROMETHEUS_ACCEPT } });
  return res.text();
}
