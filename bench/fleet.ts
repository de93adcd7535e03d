/**
 * Large-account benchmark: the daemon (a child process, default schedules, logs on and shipped to an
 * acknowledging OTLP receiver) against the simulator.
 *
 *   node dist/bench/fleet.js budget [sites=1000] [budget=100] [minutes=6] [logRatePerSite=0.2]
 *     time to ready, collector runs skipped after ready, when every log stream was first read to its
 *     end, the longest time any stream went without a read, API requests per second by kind
 *   node dist/bench/fleet.js rss [sites=5000] [minutes=4]
 *     the daemon's resident memory with logs on (and a generous budget, so everything runs)
 */
import { createServer, type Server } from "node:http";
import { readFile } from "node:fs/promises";
import { startSimulator, type RunningSimulator } from "../src/simulator/index.js";
import { sleep } from "../src/util/time.js";
import { scrape, startBenchDaemon, values, type BenchDaemon } from "./daemon.js";

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

async function startDaemon(
  sim: RunningSimulator,
  otlp: string,
  api: Record<string, unknown>,
): Promise<BenchDaemon> {
  return startBenchDaemon(sim, { api, env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp } });
}

const sum = (rows: Array<{ value: number }>) => rows.reduce((a, r) => a + r.value, 0);

async function stop(d: BenchDaemon, sim: RunningSimulator, receiver: Server): Promise<void> {
  await d.stop();
  await sim.close();
  receiver.close();
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

/** Resident memory with logs on at 5,000 sites (by default). */
async function rss(sites: number, minutes: number): Promise<void> {
  const sim = await startSimulator({ sites, seed: 5 });
  const receiver = await ackingReceiver();
  const d = await startDaemon(sim, receiver.url, { maxRequestsPerSecond: 5000, maxConcurrency: 32 });
  let readyS: number | undefined;
  const samples: number[] = [];
  const deadline = d.started + minutes * 60_000;
  while (performance.now() < deadline) {
    await sleep(5_000);
    if (readyS === undefined) {
      try {
        if ((await fetch(`${d.url}/-/ready`)).ok) readyS = (performance.now() - d.started) / 1000;
      } catch {
        // starting
      }
    }
    samples.push((await rssOf(d.child.pid as number)).rss / 1048576);
  }
  const mem = await rssOf(d.child.pid as number);
  const text = await scrape(d.url);
  const shipped = sum(values(text, "sitehost_exporter_log_records_shipped_total"));
  const lastReads = values(text, "sitehost_exporter_log_last_read_timestamp_seconds").length;
  const mb = (name: string) => Math.round(sum(values(text, name)) / 1048576);
  await stop(d, sim, receiver.server);
  samples.sort((a, b) => a - b);
  console.log(
    JSON.stringify({
      phase: "rss",
      sites,
      readySeconds: readyS === undefined ? null : +readyS.toFixed(1),
      streamsRead: lastReads,
      recordsShipped: shipped,
      rssMbEnd: Math.round(mem.rss / 1048576),
      rssMbMedian: Math.round(samples[Math.floor(samples.length / 2)] ?? 0),
      peakRssMb: Math.round(mem.hwm / 1048576),
      heapUsedMb: mb("nodejs_heap_size_used_bytes"),
      heapTotalMb: mb("nodejs_heap_size_total_bytes"),
      externalMb: mb("nodejs_external_memory_bytes"),
    }),
  );
}

const [mode, ...rest] = process.argv.slice(2);
if (mode === "rss") await rss(Number(rest[0] ?? 5000), Number(rest[1] ?? 4));
else
  await budget(
    Number(rest[0] ?? 1000),
    Number(rest[1] ?? 100),
    Number(rest[2] ?? 6),
    rest[3] === undefined ? undefined : Number(rest[3]),
  );
process.exit(0);
