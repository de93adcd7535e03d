/**
 * Large-account benchmark: the daemon (a child process, default schedules, logs on and shipped to an
 * acknowledging OTLP receiver) against the simulator.
 *
 *   node dist/bench/fleet.js budget [sites=1000] [budget=100] [minutes=6] [logRatePerSite=0.2]
 *     time to ready, collector runs skipped after ready, when every log stream was first read to its
 *     end, the longest time any stream went without a read, API requests per second by kind
 *   node dist/bench/fleet.js rss [sites=5000] [minutes=4] [heap-snapshot-file]
 *     the daemon's resident memory with logs on (and a generous budget, so everything runs), once every
 *     stream was read and every site's traffic counted, for `minutes` more; with a
 *     file, a heap snapshot of the daemon taken after the last sample (summarise it with
 *     `node dist/bench/heapSummary.js <file>`)
 */
import { spawn, type ChildProcess } from "node:child_process";
import { openSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { mkdtemp, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { stringify } from "yaml";
import { startSimulator, type RunningSimulator } from "../src/simulator/index.js";
import { sleep } from "../src/util/time.js";
import { scrape, values } from "./daemon.js";

const MAIN = resolve(import.meta.dirname, "../src/cli/main.js");

async function freePort(): Promise<number> {
  const { createServer: net } = await import("node:net");
  return new Promise((res) => {
    const s = net().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

async function ackingReceiver(): Promise<{ url: string; server: Server; requests: () => number }> {
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

async function rssOf(pid: number): Promise<{ rss: number; hwm: number }> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb("VmRSS"), hwm: kb("VmHWM") };
}

/**
 * Where the resident memory is, from /proc/<pid>/smaps (MB): file-backed pages (the Node.js binary
 * and libraries), glibc's main heap (`[heap]`: malloc'd buffers), and the other anonymous mappings
 * (the V8 heap, malloc's second arena, thread stacks).
 */
async function residentParts(pid: number): Promise<{ files: number; mallocHeap: number; anonymous: number }> {
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

interface Daemon {
  child: ChildProcess;
  url: string;
  started: number;
  dir: string;
}

async function startDaemon(
  sim: RunningSimulator,
  otlp: string,
  api: Record<string, unknown>,
  nodeOptions?: string,
): Promise<Daemon> {
  const dir = await mkdtemp(join(tmpdir(), "sitehost-fleet-"));
  const port = await freePort();
  const file = join(dir, "config.yaml");
  await writeFile(
    file,
    stringify({
      api: { url: sim.apiUrl, authUrl: sim.authUrl, clientId: sim.clientId, ...api },
      logs: { checkpointDir: join(dir, "checkpoints") },
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

const sum = (rows: Array<{ value: number }>) => rows.reduce((a, r) => a + r.value, 0);

async function stop(d: Daemon, sim: RunningSimulator, receiver: Server): Promise<void> {
  d.child.kill("SIGTERM");
  await new Promise((r) => d.child.once("exit", r));
  await sim.close();
  receiver.close();
  await rm(d.dir, { recursive: true, force: true });
}

/** 1,000 sites (by default) at a budget of 100 requests/s. */
async function budget(sites: number, rps: number, minutes: number, logRate?: number): Promise<void> {
  const sim = await startSimulator({
    sites,
    seed: 5,
    ...(logRate === undefined ? {} : { logRatePerSite: logRate }),
  });
  const receiver = await ackingReceiver();
  const d = await startDaemon(sim, receiver.url, { maxRequestsPerSecond: rps, maxConcurrency: 16 });
  let readyS: number | undefined;
  let notReady = "";
  let readyAnswer = "";
  let allReadS: number | undefined;
  let skippedAtReady = new Map<string, number>();
  /** collector → seconds from start until its first run had finished (seen at a sample). */
  const firstRunDone = new Map<string, number>();
  /** stream → last read time seen, and the longest gap seen. */
  const lastRead = new Map<string, number>();
  let longestGapS = 0;
  const streams = sites * 3 + 1;
  const requests0 = sim.control.stats().requests;
  const deadline = d.started + minutes * 60_000;
  while (performance.now() < deadline) {
    await sleep(5_000);
    let text: string;
    try {
      text = await scrape(d.url);
    } catch {
      continue;
    }
    const now = Date.now() / 1000;
    const sinceStart = (performance.now() - d.started) / 1000;
    const readyRes = readyS === undefined ? await fetch(`${d.url}/-/ready`) : undefined;
    if (readyRes && !readyRes.ok) notReady = (await readyRes.text()).trim();
    if (readyRes?.ok) {
      readyS = sinceStart;
      readyAnswer = (await readyRes.text()).trim();
      skippedAtReady = new Map(
        values(text, "sitehost_exporter_collector_skipped_runs_total").map((r) => [r.labels, r.value]),
      );
    }
    for (const r of values(text, "sitehost_exporter_collector_runs_total")) {
      const collector = /collector="([^"]+)"/.exec(r.labels)?.[1] ?? r.labels;
      if (r.value > 0 && !firstRunDone.has(collector)) firstRunDone.set(collector, Math.round(sinceStart));
    }
    const reads = values(text, "sitehost_exporter_log_last_read_timestamp_seconds");
    for (const r of reads) {
      const before = lastRead.get(r.labels);
      if (before !== undefined && r.value > before) longestGapS = Math.max(longestGapS, r.value - before);
      lastRead.set(r.labels, r.value);
    }
    // A stream still waiting for its next read counts too.
    for (const t of lastRead.values()) longestGapS = Math.max(longestGapS, now - t);
    if (allReadS === undefined && lastRead.size >= streams) allReadS = sinceStart;
  }
  const text = await scrape(d.url);
  const skippedAfterReady = values(text, "sitehost_exporter_collector_skipped_runs_total")
    .filter((r) => r.value > (skippedAtReady.get(r.labels) ?? 0))
    .map((r) => `${r.labels}=${r.value - (skippedAtReady.get(r.labels) ?? 0)}`);
  const skippedByCollector = values(text, "sitehost_exporter_collector_skipped_runs_total")
    .filter((r) => r.value > 0)
    .map((r) => `${r.labels}=${r.value}`);
  const elapsed = (performance.now() - d.started) / 1000;
  const stats = sim.control.stats().requests;
  const delta = (match: (k: string) => boolean) =>
    Object.entries(stats)
      .filter(([k]) => match(k))
      .reduce((a, [k, v]) => a + v - (requests0[k] ?? 0), 0);
  const logs = delta((k) => /\/logs\//.test(k));
  const all = delta(() => true);
  await stop(d, sim, receiver.server);
  console.log(
    JSON.stringify({
      phase: "budget",
      sites,
      budget: rps,
      logRatePerSite: logRate ?? "simulator default",
      streams,
      readySeconds: readyS === undefined ? null : +readyS.toFixed(1),
      ...(readyS === undefined ? { notReady } : { readyAnswer }),
      requestsByRoute: Object.fromEntries(
        Object.entries(stats)
          .map(([k, v]) => [k, v - (requests0[k] ?? 0)] as const)
          .sort((a, b) => b[1] - a[1])
          .slice(0, 12),
      ),
      streamsReadToEndBySeconds: allReadS === undefined ? null : +allReadS.toFixed(1),
      streamsEverRead: lastRead.size,
      skippedRunsAfterReady: skippedAfterReady,
      skippedRuns: skippedByCollector,
      firstRunsDoneBySeconds: Object.fromEntries([...firstRunDone].sort((a, b) => a[1] - b[1])),
      longestSecondsWithoutRead: +longestGapS.toFixed(1),
      apiRequestsPerSecond: +(all / elapsed).toFixed(1),
      logRequestsPerSecond: +(logs / elapsed).toFixed(1),
      seconds: +elapsed.toFixed(0),
    }),
  );
}

/**
 * A heap snapshot of the daemon (started with --heapsnapshot-signal=SIGUSR2), moved to `file`. The
 * daemon writes it on its main thread, so the first answer after the signal comes once it is written.
 */
async function heapSnapshot(d: Daemon, file: string): Promise<void> {
  d.child.kill("SIGUSR2");
  await sleep(1_000);
  await scrape(d.url);
  const name = (await readdir(d.dir)).find((n) => n.endsWith(".heapsnapshot"));
  if (!name) throw new Error(`the daemon wrote no heap snapshot in ${d.dir}`);
  await rename(join(d.dir, name), resolve(file));
}

/** What Prometheus 3 asks for by default (it sends gzip too): OpenMetrics, so exemplars are rendered. */
const PROMETHEUS_ACCEPT =
  "application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.1";

/** /metrics as Prometheus scrapes it (the text is OpenMetrics: the series lines the bench reads are alike). */
async function scrapeLikePrometheus(url: string): Promise<string> {
  const res = await fetch(`${url}/metrics`, { headers: { accept: PROMETHEUS_ACCEPT } });
  return res.text();
}

/** The longest the rss run waits for every stream to be read and every site's traffic to be counted. */
const WARM_UP_CAP_MS = 20 * 60_000;

/**
 * Resident memory with logs on at 5,000 sites (by default): first until the daemon is ready, every
 * stream was read to its end once and every site has traffic counters (so the per-stream and per-site
 * state is all there, however slow a shared machine makes start-up), then `minutes` of steady state.
 * RSS is read every 5 s and /metrics scraped every 30 s, as Prometheus would (OpenMetrics, gzip).
 */
async function rss(sites: number, minutes: number, snapshotFile?: string): Promise<void> {
  const sim = await startSimulator({ sites, seed: 5 });
  const receiver = await ackingReceiver();
  const d = await startDaemon(
    sim,
    receiver.url,
    { maxRequestsPerSecond: 5000, maxConcurrency: 32 },
    snapshotFile ? "--heapsnapshot-signal=SIGUSR2" : undefined,
  );
  const streams = sites * 3 + 1;
  let readyS: number | undefined;
  let warmS: number | undefined;
  let text = "";
  const all: number[] = [];
  const steady: number[] = [];
  /** RSS every 30 s, MB. */
  const timeline: number[] = [];
  let steadyUntil = Infinity;
  for (let tick = 1; performance.now() < steadyUntil; tick++) {
    await sleep(5_000);
    const now = performance.now();
    const mb = (await rssOf(d.child.pid as number)).rss / 1048576;
    all.push(mb);
    if (warmS !== undefined) steady.push(mb);
    if (tick % 6 !== 0) continue;
    timeline.push(Math.round(mb));
    try {
      text = await scrapeLikePrometheus(d.url);
      if (readyS === undefined && (await fetch(`${d.url}/-/ready`)).ok) readyS = (now - d.started) / 1000;
    } catch {
      continue; // starting
    }
    const read = values(text, "sitehost_exporter_log_last_read_timestamp_seconds").length;
    const counted = new Set(
      values(text, "sitehost_site_requests_total").map((r) => /site_id="(\d+)"/.exec(r.labels)?.[1]),
    ).size;
    const warm = readyS !== undefined && read >= streams && counted >= sites;
    if (warmS === undefined && (warm || now - d.started > WARM_UP_CAP_MS)) {
      warmS = (now - d.started) / 1000;
      steadyUntil = now + minutes * 60_000;
    }
  }
  const mem = await rssOf(d.child.pid as number);
  const parts = await residentParts(d.child.pid as number);
  text = await scrapeLikePrometheus(d.url);
  const shipped = sum(values(text, "sitehost_exporter_log_records_shipped_total"));
  const lastReads = values(text, "sitehost_exporter_log_last_read_timestamp_seconds").length;
  const mb = (name: string) => Math.round(sum(values(text, name)) / 1048576);
  if (snapshotFile) await heapSnapshot(d, snapshotFile);
  await stop(d, sim, receiver.server);
  const median = (xs: number[]) => Math.round(xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0);
  console.log(
    JSON.stringify({
      phase: "rss",
      sites,
      readySeconds: readyS === undefined ? null : Math.round(readyS),
      warmSeconds: Math.round(warmS ?? 0),
      streamsRead: `${lastReads}/${streams}`,
      recordsShipped: shipped,
      rssMbMedian: median(all),
      rssMbSteadyMedian: median(steady),
      rssMbEnd: Math.round(mem.rss / 1048576),
      peakRssMb: Math.round(mem.hwm / 1048576),
      heapUsedMb: mb("nodejs_heap_size_used_bytes"),
      heapTotalMb: mb("nodejs_heap_size_total_bytes"),
      externalMb: mb("nodejs_external_memory_bytes"),
      residentMbAtEnd: parts,
      rssMbEvery30s: timeline,
    }),
  );
}

const [mode, ...rest] = process.argv.slice(2);
if (mode === "rss") await rss(Number(rest[0] ?? 5000), Number(rest[1] ?? 4), rest[2]);
else
  await budget(
    Number(rest[0] ?? 1000),
    Number(rest[1] ?? 100),
    Number(rest[2] ?? 6),
    rest[3] === undefined ? undefined : Number(rest[3]),
  );
process.exit(0);
