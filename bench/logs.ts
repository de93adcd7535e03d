/**
 * Log pipeline benchmark (records/s, CPU per 1,000 records, peak RSS while a one-million-record
 * backlog drains, lag under a steady load).
 *
 *   npx tsc -p tsconfig.json && npx node dist/bench/logs.js [newest-first|oldest-first] [backlog] [spreadSeconds] [no-steady] [sites] [durations-off] [php] [groups-off]
 *   node dist/bench/logs.js busy [entriesPerSecond=30] [seconds=120] [lateFraction=0] [lateMaxSeconds=0]
 *     log reads per 1,000 records (late*: that share of entries becomes visible up to that much later)
 *   node dist/bench/logs.js idle [streams=200] [minutes=20]            log reads per idle stream-hour
 *   (sites: the backlog is spread evenly over that many sites' server streams, drained by the
 *   pipeline's concurrent tailers; default 1; durations-off: web-server records count their status
 *   alone, the baseline of bench/histogram.ts; php: the sites' PHP streams instead of their web-server
 *   streams; groups-off: PHP error records not grouped, the baseline of bench/errorGroups.ts)
 *   (defaults: newest-first 1000000 10800; oldest-first snapshots re-read the whole 7-day retention
 *   every cycle, so with a frozen clock they page through rate × 7 days first)
 *
 * Layout: the simulator (latencyMs 0) and a minimal loopback OTLP/HTTP receiver run in a child
 * process (the receiver acks every POST /v1/logs with 200 after reading the body, without decoding
 * it), so this process holds only the daemon's LogPipeline and ApiClient, and process.cpuUsage()
 * and the peak RSS are the pipeline's own. Records go through the real OTLP http/protobuf exporter.
 *
 * Backlog: the child's simulator clock is frozen at start, the log rate is set so one site's
 * server stream holds `backlog` entries over the 100 seconds before it, and logs.startFrom is that
 * window's start: the pipeline drains exactly that backlog and nothing new arrives. Steady load: a
 * second child with a real clock and a constant rate, sampled once a second.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:http";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import pino from "pino";
import { Registry } from "prom-client";
import { createApiClient } from "../src/api/client.js";
import { apiClientOptionsFromConfig } from "../src/api/options.js";
import type { Site } from "../src/api/schemas.js";
import { ConfigSchema } from "../src/config/schema.js";
import { V8_FLAGS } from "../src/cli/v8Flags.js";
import { MemorySaver } from "../src/logs/memorySaver.js";
import { LogPipeline } from "../src/logs/pipeline.js";
import { ErrorGroupBook } from "../src/logs/errorGroups.js";
import { UNKEPT_ERROR_GROUPS } from "../src/logs/errorGroupsFile.js";
import { METRIC_FAMILIES } from "../src/metrics/families.js";
import { MetricStore } from "../src/metrics/store.js";
import { startSimulator } from "../src/simulator/index.js";
import type { LogOrder, ScrollMode } from "../src/simulator/logs.js";
import { sleep } from "../src/util/time.js";

interface Served {
  apiUrl: string;
  authUrl: string;
  clientId: string;
  clientSecret: string;
  otlp: string;
  sites: Site[];
  frozenAt: number;
}

/** Child mode: simulator + acking receiver; prints their addresses as one JSON line. */
async function serve(
  rate: number,
  order: LogOrder,
  mode: ScrollMode,
  frozen: boolean,
  sites: number,
  lateLogFraction = 0,
  lateLogMaxSeconds = 0,
): Promise<void> {
  const frozenAt = Math.floor(Date.now() / 1000) * 1000;
  const sim = await startSimulator({
    sites,
    lateLogFraction,
    lateLogMaxSeconds,
    latencyMs: 0,
    logRatePerSite: rate,
    logOrder: order,
    scrollMode: mode,
    ...(frozen ? { now: () => frozenAt } : {}),
  });
  const receiver = createServer((req, res) => {
    req.on("data", () => undefined);
    req.on("end", () => res.writeHead(200, { "content-type": "application/x-protobuf" }).end());
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()));
  const port = (receiver.address() as { port: number }).port;
  const served: Served = {
    apiUrl: sim.apiUrl,
    authUrl: sim.authUrl,
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    otlp: `http://127.0.0.1:${port}/v1/logs`,
    sites: sim.control.sites().map((s) => ({ id: s.site.id, name: s.site.name }) as unknown as Site),
    frozenAt,
  };
  process.stdout.write(`${JSON.stringify(served)}\n`);
  process.stdin.resume();
  process.stdin.on("end", () => process.exit(0));
}

async function child(args: string[]): Promise<{ proc: ChildProcess; served: Served }> {
  const proc = spawn(process.execPath, [import.meta.filename, "--serve", ...args], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const line = await new Promise<string>((res) => {
    createInterface({ input: proc.stdout as NodeJS.ReadableStream }).once("line", res);
  });
  return { proc, served: JSON.parse(line) as Served };
}

function peakRssMb(): number {
  return process.resourceUsage().maxRSS / 1024; // maxRSS is in kB
}

/**
 * The child (simulator and receiver, started with `childArgs`) and a log pipeline against it, with a
 * checkpoint directory of its own; `close` stops both and removes the directory.
 */
async function setup(
  childArgs: string[],
  startFrom: (served: Served) => string,
  pollInterval: string,
  maxRequestsPerSecond = 10_000,
  requestDurations = true,
  stream: "server" | "php" = "server",
  errorGroups = true,
) {
  const { proc, served } = await child(childArgs);
  const dir = await mkdtemp(join(tmpdir(), "bench-logs-"));
  const config = ConfigSchema.parse({
    api: {
      url: served.apiUrl,
      authUrl: served.authUrl,
      clientId: served.clientId,
      clientSecret: served.clientSecret,
      // The default (20/s, shared with the metric collectors) caps log reading at 20 × 200 = 4,000
      // records/s; the benchmark measures the pipeline, not that limit.
      maxRequestsPerSecond,
    },
    logs: { streams: [stream], startFrom: startFrom(served), pollInterval, checkpointDir: dir },
  });
  const registry = new Registry();
  const logger = pino({ level: "warn" });
  const api = createApiClient(apiClientOptionsFromConfig(config.api, registry, logger));
  const store = new MetricStore(METRIC_FAMILIES);
  const env = {
    OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: served.otlp,
    OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: "http/protobuf",
  };
  // As the daemon does: PHP error records grouped by site (off: the baseline of bench/errorGroups.ts).
  const groups =
    stream === "php" && errorGroups
      ? new ErrorGroupBook({
          store,
          registry,
          file: UNKEPT_ERROR_GROUPS,
          logger,
          now: Date.now,
          learnForMs: 0,
        })
      : undefined;
  groups?.updateSites(served.sites);
  const pipeline = new LogPipeline({
    config,
    api,
    registry,
    logger,
    store,
    env,
    requestDurations,
    ...(groups ? { errorGroups: groups } : {}),
  });
  // What the daemon does when it runs with the heap flags it chooses (bench/run.ts gives them to
  // this process): V8's memory saver mode while the log path is quiet, off while it drains.
  const saver = V8_FLAGS.logs.every((flag) => process.execArgv.includes(flag))
    ? new MemorySaver({ taken: () => pipeline.recordsTaken })
    : undefined;
  saver?.start();
  const shipped = async () =>
    (await registry.getSingleMetric("sitehost_exporter_log_records_shipped_total")?.get())?.values.reduce(
      (a, v) => a + v.value,
      0,
    ) ?? 0;
  const lag = async () =>
    (await registry.getSingleMetric("sitehost_exporter_log_lag_seconds")?.get())?.values[0]?.value;
  /** Log reads sent so far (every status), from the client's own request counter. */
  const logRequests = async () =>
    (await registry.getSingleMetric("sitehost_exporter_api_requests_total")?.get())?.values
      .filter((v) => String(v.labels.endpoint).includes("/logs/"))
      .reduce((a, v) => a + v.value, 0) ?? 0;
  const close = async () => {
    saver?.stop();
    await pipeline.stop();
    await api.close();
    proc.stdin?.end();
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  };
  return { served, pipeline, shipped, lag, logRequests, close };
}

async function backlog(
  order: LogOrder,
  size: number,
  seconds: number,
  sites: number,
  durations = true,
  stream: "server" | "php" = "server",
  groups = true,
): Promise<void> {
  const rate = size / seconds / sites;
  const { served, pipeline, shipped, close } = await setup(
    [String(rate), order, "snapshot", "frozen", String(sites)],
    (s) => new Date(s.frozenAt - (seconds - 1) * 1000).toISOString(),
    "1s",
    10_000,
    durations,
    stream,
    groups,
  );
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await pipeline.start();
  pipeline.updateSites(served.sites);
  let last = 0;
  let lastChange = t0;
  let peakSampled = 0;
  for (;;) {
    await sleep(200);
    const n = await shipped();
    const mem = process.memoryUsage();
    if (mem.rss / 1048576 > peakSampled && process.env.BENCH_DEBUG) {
      const mb = (n: number) => Math.round(n / 1048576);
      console.error(
        `rss ${mb(mem.rss)} heapTotal ${mb(mem.heapTotal)} heapUsed ${mb(mem.heapUsed)} external ${mb(mem.external)} arrayBuffers ${mb(mem.arrayBuffers)}`,
      );
    }
    peakSampled = Math.max(peakSampled, mem.rss / 1048576);
    if (n !== last) {
      last = n;
      lastChange = performance.now();
    }
    // Done when the whole backlog is shipped; on a loaded machine a drain may pause for seconds.
    if (n >= size || (n > 0 && performance.now() - lastChange > 30_000)) break;
    if (performance.now() - t0 > 600_000) break;
  }
  const elapsed = (lastChange - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  await close();
  const cpuMs = (cpu.user + cpu.system) / 1000;
  console.log(
    JSON.stringify({
      phase: "backlog",
      order,
      sites,
      stream,
      durations,
      groups: stream === "php" && groups,
      records: last,
      seconds: +elapsed.toFixed(2),
      recordsPerSecond: Math.round(last / elapsed),
      cpuMsPer1000: +((cpuMs / last) * 1000).toFixed(2),
      cpuCoresBusy: +(cpuMs / 1000 / elapsed).toFixed(2),
      peakRssMb: Math.round(Math.max(peakRssMb(), peakSampled)),
    }),
  );
}

async function steady(rate: number, durationS: number): Promise<void> {
  const { served, pipeline, shipped, lag, close } = await setup(
    [String(rate), "newest-first", "snapshot", "live", "1"],
    () => "now",
    "5s",
  );
  await pipeline.start();
  pipeline.updateSites(served.sites);
  await sleep(8000); // first poll (spread over up to 5 s) and warm-up
  const s0 = await shipped();
  const cpu0 = process.cpuUsage();
  const lags: number[] = [];
  for (let i = 0; i < durationS; i++) {
    await sleep(1000);
    const l = await lag();
    if (l !== undefined) lags.push(l);
  }
  const n = (await shipped()) - s0;
  const cpu = process.cpuUsage(cpu0);
  await close();
  lags.sort((a, b) => a - b);
  console.log(
    JSON.stringify({
      phase: "steady",
      ratePerSecond: rate,
      pollInterval: "5s",
      records: n,
      cpuMsPer1000: +(((cpu.user + cpu.system) / 1000 / n) * 1000).toFixed(2),
      lagSecondsP50: lags[Math.floor(lags.length / 2)],
      lagSecondsMax: lags.at(-1),
      peakRssMb: Math.round(peakRssMb()),
    }),
  );
}

/**
 * A busy stream (30 or 36 entries/s, pollInterval 5s): log reads per 1,000 shipped records. One page
 * holds 200 entries, so 5 reads per 1,000 is the floor. At 36 entries/s a read every 5 s would take
 * 180 new entries plus the high-water second again (216, two pages); the scheduler reads it every 4 s
 * instead, one page each.
 */
async function busy(rate: number, durationS: number, lateFraction: number, lateMax: number): Promise<void> {
  const late = [String(lateFraction), String(lateMax)];
  const { served, pipeline, shipped, logRequests, close } = await setup(
    [String(rate), "newest-first", "snapshot", "live", "1", ...late],
    () => "now",
    "5s",
  );
  await pipeline.start();
  pipeline.updateSites(served.sites);
  await sleep(8000);
  const s0 = await shipped();
  const r0 = await logRequests();
  await sleep(durationS * 1000);
  const n = (await shipped()) - s0;
  const reads = (await logRequests()) - r0;
  await close();
  console.log(
    JSON.stringify({
      phase: "busy",
      ratePerSecond: rate,
      lateFraction,
      lateMaxSeconds: lateMax,
      pollInterval: "5s",
      seconds: durationS,
      records: n,
      logReads: reads,
      readsPer1000Records: +((reads / n) * 1000).toFixed(2),
    }),
  );
}

/**
 * Idle streams at the default poll settings (30s doubling to 5m): log reads per stream-hour, over the
 * whole run and over its second half (once back-off has reached its ceiling).
 */
async function idle(sites: number, minutes: number): Promise<void> {
  const { served, pipeline, logRequests, close } = await setup(
    ["0", "newest-first", "snapshot", "live", String(sites)],
    () => "now",
    "30s",
    20,
  );
  await pipeline.start();
  pipeline.updateSites(served.sites);
  const half = (minutes * 60_000) / 2;
  await sleep(half);
  const rHalf = await logRequests();
  await sleep(half);
  const rEnd = await logRequests();
  await close();
  const streamHours = (ms: number) => (sites * ms) / 3_600_000;
  console.log(
    JSON.stringify({
      phase: "idle",
      streams: sites,
      minutes,
      readsPerStreamHour: +(rEnd / streamHours(2 * half)).toFixed(1),
      readsPerStreamHourSecondHalf: +((rEnd - rHalf) / streamHours(half)).toFixed(1),
    }),
  );
}

const argv = process.argv.slice(2);
if (argv[0] === "--serve") {
  await serve(
    Number(argv[1]),
    argv[2] as LogOrder,
    argv[3] as ScrollMode,
    argv[4] === "frozen",
    Number(argv[5] ?? 1),
    Number(argv[6] ?? 0),
    Number(argv[7] ?? 0),
  );
} else if (argv[0] === "busy") {
  await busy(Number(argv[1] ?? 30), Number(argv[2] ?? 120), Number(argv[3] ?? 0), Number(argv[4] ?? 0));
} else if (argv[0] === "idle") {
  await idle(Number(argv[1] ?? 200), Number(argv[2] ?? 20));
} else {
  const order = (argv[0] ?? "newest-first") as LogOrder;
  const size = Number(argv[1] ?? 1_000_000);
  // Spread over 3 hours by default (≈ 93 records/s): the overlap window then holds ≈ 93 × 120 ≈ 11,000
  // fingerprints, which every checkpoint write carries.
  const seconds = Number(argv[2] ?? 10_800);
  const flags = argv.slice(5);
  await backlog(
    order,
    size,
    seconds,
    Number(argv[4] ?? 1),
    !flags.includes("durations-off"),
    flags.includes("php") ? "php" : "server",
    !flags.includes("groups-off"),
  );
  if (argv[3] !== "no-steady") await steady(500, 20);
}
