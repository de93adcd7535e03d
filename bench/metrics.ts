/**
 * Metrics benchmark: at N simulated sites, the series count,
 * /metrics latency beside serving the same bytes from memory, request for request in the same run
 * (the ratio is the figure), the daemon's RSS and time to ready. (API requests per site-hour: the
 * `requests` benchmark, over simulated hours.)
 *
 *   npm run bench -- metrics            (or: node dist/bench/metrics.js 1000 5000)
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Agent, request } from "undici";
import { gzipSync } from "node:zlib";
import { stringify } from "yaml";
import { startSimulator } from "../src/simulator/index.js";
import { sleep } from "../src/util/time.js";

const MAIN = resolve(import.meta.dirname, "../src/cli/main.js");

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

async function rssOf(pid: number): Promise<{ rss: number; hwm: number }> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb("VmRSS"), hwm: kb("VmHWM") };
}

async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  return new Promise((res) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

/**
 * Gzip GETs (as Prometheus scrapes), each URL over its own keep-alive connection, alternating between
 * the URLs request by request so that every one sees the same machine noise; latencies in ms, sorted.
 */
async function measure(urls: string[], n: number): Promise<number[][]> {
  const agents = urls.map(() => new Agent({ connections: 1 }));
  const times: number[][] = urls.map(() => []);
  for (let i = 0; i < n + 10; i++) {
    for (let u = 0; u < urls.length; u++) {
      const t = performance.now();
      const res = await request(urls[u] as string, {
        dispatcher: agents[u],
        headers: { "accept-encoding": "gzip" },
      });
      await res.body.arrayBuffer();
      if (i >= 10) times[u]?.push(performance.now() - t); // first 10 warm up
    }
  }
  await Promise.all(agents.map((a) => a.close()));
  return times.map((t) => t.sort((a, b) => a - b));
}

export async function benchMetrics(sites: number): Promise<Record<string, string | number>> {
  const sim = await startSimulator({ sites, seed: 3 });
  const dir = await mkdtemp(join(tmpdir(), "sitehost-bench-"));
  const port = await freePort();
  const file = join(dir, "config.yaml");
  await writeFile(
    file,
    stringify({
      api: {
        url: sim.apiUrl,
        authUrl: sim.authUrl,
        clientId: sim.clientId,
        maxRequestsPerSecond: 5000,
        maxConcurrency: 32,
      },
      logs: { enabled: false },
    }),
  );
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [MAIN, "run", "--config", file, "--web.listen-address", `127.0.0.1:${port}`, "--log.level", "warn"],
    {
      env: { ...process.env, SITEHOST_CLIENT_SECRET: sim.clientSecret },
      stdio: ["ignore", "ignore", "inherit"],
    },
  );
  const url = `http://127.0.0.1:${port}`;
  let readyMs: number;
  for (;;) {
    try {
      const res = await fetch(`${url}/-/ready`);
      if (res.ok) {
        readyMs = performance.now() - started;
        break;
      }
    } catch {
      // starting
    }
    if (performance.now() - started > 600_000) throw new Error("daemon not ready after 10 minutes");
    await sleep(100);
  }

  const body = Buffer.from(await (await fetch(`${url}/metrics`)).arrayBuffer());
  const zipped = gzipSync(body, { level: 1 });
  const series = body
    .toString("utf8")
    .split("\n")
    .filter((l) => l.startsWith("sitehost_site_") || l.startsWith("sitehost_account_")).length;

  // Baseline: a separate process serving the same bytes from memory.
  const bytesFile = join(dir, "metrics.txt");
  await writeFile(bytesFile, zipped);
  const basePort = await freePort();
  const baseline = spawn(
    process.execPath,
    [
      "-e",
      `const b=require("fs").readFileSync(${JSON.stringify(bytesFile)});require("http").createServer((q,r)=>{r.writeHead(200,{"content-type":"text/plain; version=0.0.4; charset=utf-8","content-encoding":"gzip","content-length":b.length});r.end(b)}).listen(${basePort},"127.0.0.1")`,
    ],
    { stdio: "ignore" },
  );
  await sleep(500);
  const n = 1000;
  const [daemonTimes = [], baseTimes = []] = await measure(
    [`${url}/metrics`, `http://127.0.0.1:${basePort}/`],
    n,
  );
  baseline.kill();
  const mem = await rssOf(child.pid as number);
  const selfText = await (await fetch(`${url}/metrics`)).text();
  const gauge = (name: string) =>
    Number(new RegExp(`^${name} (\\S+)$`, "m").exec(selfText)?.[1] ?? NaN) / 1048576;

  child.kill("SIGTERM");
  await new Promise((r) => child.once("exit", r));
  await sim.close();
  const p = (t: number[], q: number) => percentile(t, q).toFixed(2);
  return {
    sites,
    series,
    "exposition bytes": body.length,
    "gzip bytes": zipped.length,
    "/metrics p50 ms": p(daemonTimes, 50),
    "/metrics p99 ms": p(daemonTimes, 99),
    "memory p50 ms": p(baseTimes, 50),
    "memory p99 ms": p(baseTimes, 99),
    "p50 ratio": (percentile(daemonTimes, 50) / percentile(baseTimes, 50)).toFixed(2),
    "p99 ratio": (percentile(daemonTimes, 99) / percentile(baseTimes, 99)).toFixed(2),
    "RSS MB": (mem.rss / 1048576).toFixed(0),
    "peak RSS MB": (mem.hwm / 1048576).toFixed(0),
    "heap used MB": gauge("nodejs_heap_size_used_bytes").toFixed(0),
    "heap total MB": gauge("nodejs_heap_size_total_bytes").toFixed(0),
    "external MB": gauge("nodejs_external_memory_bytes").toFixed(0),
    "ready s": (readyMs / 1000).toFixed(1),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const sizes = process.argv.slice(2).map(Number).filter(Boolean);
  for (const n of sizes.length ? sizes : [1000, 5000]) console.log(JSON.stringify(await benchMetrics(n)));
}
