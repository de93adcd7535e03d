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
import { readdir, rename } from "node:fs/promises";
import { join, resolve } from "node:path";
import { startSimulator } from "../src/simulator/index.js";
import { sleep } from "../src/util/time.js";
import { scrape, values } from "./daemon.js";
import {
  ackingReceiver,
  residentParts,
  rssOf,
  scrapeLikePrometheus,
  startDaemon,
  startFleet,
  stop,
  sum,
  type Daemon,
} from "./fleetDaemon.js";

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

/** The longest the rss run waits for every stream to be read and every site's traffic to be counted. */
const WARM_UP_CAP_MS = 20 * 60_000;

/**
 * Resident memory with logs on at 5,000 sites (by default): first until the daemon is ready, every
 * stream was read to its end once and every site has traffic counters (so the per-stream and per-site
 * state is all there, however slow a shared machine makes start-up), then `minutes` of steady state.
 * RSS is read every 5 s and /metrics scraped every 30 s, as Prometheus would (OpenMetrics, gzip).
 */
async function rss(sites: number, minutes: number, snapshotFile?: string): Promise<void> {
  const { sim, receiver, d } = await startFleet(
    sites,
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
