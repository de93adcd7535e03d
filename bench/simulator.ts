/**
 * Simulator benchmark: requests per second the fake platform API
 * serves at 10,000 sites on loopback.
 *
 *   npx tsc -p tsconfig.json && npx node dist/bench/simulator.js [sites] [seconds] [concurrency] [phases]
 *
 * Defaults: 10000 sites, 5 s, 64 in flight, phases domains,metrics,walk (a comma list of those names).
 *
 * The simulator runs in a worker thread (its own event loop, as it would in
 * its own process); the load generator is undici with `concurrency` requests
 * in flight for `seconds` per phase:
 *   1. GET  /v1/sites/{id}/domains   (random site ids)
 *   2. POST /v1/sites/{id}/metrics   (start_at "1 hour ago", both metrics, page_is_cached)
 *   3. GET  /v1/sites?paginate=true&per_page=100, page 1 until nextPage is null (walked repeatedly)
 * Every response is read to the end and its status checked; a non-200 counts as an error.
 */
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { Pool } from "undici";
import { ROUTES, routePath } from "../src/routes.js";
import { startSimulator } from "../src/simulator/index.js";

interface Ready {
  apiUrl: string;
  authUrl: string;
  clientId: string;
  clientSecret: string;
}

interface PhaseResult {
  phase: string;
  requests: number;
  errors: number;
  seconds: number;
  "req/s": number;
  "p50 ms": number;
  "p99 ms": number;
  /** Simulator thread CPU per request, µs, and what one dedicated core would serve at that cost. */
  "sim CPU µs/req"?: number;
  "req/s per sim core"?: number;
}

if (!isMainThread) {
  const { sites } = workerData as { sites: number };
  const sim = await startSimulator({ sites, seed: 3, logRatePerSite: 0.2 });
  parentPort?.postMessage({
    apiUrl: sim.apiUrl,
    authUrl: sim.authUrl,
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
  } satisfies Ready);
  parentPort?.on("message", (msg: string) => {
    if (msg === "close") void sim.close().then(() => process.exit(0));
    // CPU time of the simulator's own thread, µs (independent of what else runs on the machine).
    if (msg === "cpu") {
      const u = process.threadCpuUsage();
      parentPort?.postMessage({ cpuMicros: u.user + u.system });
    }
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function phase(
  name: string,
  seconds: number,
  concurrency: number,
  one: () => Promise<boolean>,
): Promise<PhaseResult> {
  const times: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const loop = async () => {
    while (performance.now() < deadline) {
      const t = performance.now();
      const ok = await one();
      times.push(performance.now() - t);
      if (!ok) errors += 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  const elapsed = (performance.now() - started) / 1000;
  times.sort((a, b) => a - b);
  return {
    phase: name,
    requests: times.length,
    errors,
    seconds: Number(elapsed.toFixed(2)),
    "req/s": Math.round(times.length / elapsed),
    "p50 ms": Number(percentile(times, 50).toFixed(2)),
    "p99 ms": Number(percentile(times, 99).toFixed(2)),
  };
}

async function main(): Promise<void> {
  const sites = Number(process.argv[2] ?? 10_000);
  const seconds = Number(process.argv[3] ?? 5);
  const concurrency = Number(process.argv[4] ?? 64);
  const phases = new Set((process.argv[5] ?? "domains,metrics,walk").split(","));
  const startedAt = performance.now();
  const worker = new Worker(new URL(import.meta.url), { workerData: { sites } });
  const ready = await new Promise<Ready>((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  const startupMs = performance.now() - startedAt;
  const origin = new URL(ready.authUrl).origin;
  const simCpu = () =>
    new Promise<number>((resolve) => {
      worker.once("message", (m: { cpuMicros: number }) => resolve(m.cpuMicros));
      worker.postMessage("cpu");
    });
  /** Run a phase and add the simulator's CPU cost per request. */
  const measured = async (
    run: () => Promise<PhaseResult>,
    requestsOf?: () => number,
  ): Promise<PhaseResult> => {
    const before = await simCpu();
    const r = await run();
    const used = (await simCpu()) - before;
    const requests = requestsOf ? requestsOf() : r.requests;
    const perReq = used / Math.max(1, requests);
    return {
      ...r,
      requests,
      "req/s": Math.round(requests / r.seconds),
      "sim CPU µs/req": Math.round(perReq),
      "req/s per sim core": Math.round(1e6 / perReq),
    };
  };
  const pool = new Pool(origin, { connections: concurrency, pipelining: 1 });

  const tokenRes = await pool.request({
    method: "POST",
    path: ROUTES.token.template,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      grant_type: "client_credentials",
      client_id: ready.clientId,
      client_secret: ready.clientSecret,
    }),
  });
  const token = ((await tokenRes.body.json()) as { access_token: string }).access_token;
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };

  /** One full paginated walk; returns the site ids and the number of requests. */
  const walk = async (): Promise<{ ids: number[]; requests: number; ok: boolean }> => {
    const ids: number[] = [];
    let page: number | null = 1;
    let requests = 0;
    let ok = true;
    while (page !== null) {
      const res = await pool.request({
        method: "GET",
        path: `/v1${routePath("sites", {})}?paginate=true&per_page=100&page=${page}`,
        headers,
      });
      requests += 1;
      const body = (await res.body.json()) as {
        data: Array<{ id: number }>;
        page: { nextPage: number | null };
      };
      if (res.statusCode !== 200) {
        ok = false;
        break;
      }
      for (const s of body.data) ids.push(s.id);
      page = body.page.nextPage;
    }
    return { ids, requests, ok };
  };

  const first = await walk();
  if (first.ids.length !== sites) throw new Error(`walk found ${first.ids.length} sites, expected ${sites}`);
  const ids = first.ids;
  const randomId = () => ids[Math.floor(Math.random() * ids.length)] as number;

  const results: PhaseResult[] = [];
  if (phases.has("domains"))
    results.push(
      await measured(() =>
        phase(`GET /v1${ROUTES.domains.template}`, seconds, concurrency, async () => {
          const path = `/v1${routePath("domains", { id: randomId() })}`;
          const res = await pool.request({ method: ROUTES.domains.method, path, headers });
          await res.body.arrayBuffer();
          return res.statusCode === 200;
        }),
      ),
    );
  const metricsBody = JSON.stringify({
    start_at: "1 hour ago",
    metrics: ["requests_persec", "response_bytes_persec"],
    dimensions: ["page_is_cached"],
  });
  if (phases.has("metrics"))
    results.push(
      await measured(() =>
        phase(`POST /v1${ROUTES.trafficMetrics.template}`, seconds, concurrency, async () => {
          const res = await pool.request({
            method: ROUTES.trafficMetrics.method,
            path: `/v1${routePath("trafficMetrics", { id: randomId() })}`,
            headers,
            body: metricsBody,
          });
          await res.body.arrayBuffer();
          return res.statusCode === 200;
        }),
      ),
    );
  // Paginated walks: a walk is sequential by nature (nextPage), so 16 walkers run side by side. In this
  // row `requests` and `req/s` count pages; p50/p99 are the durations of whole walks.
  let walkRequests = 0;
  let walks = 0;
  let walkSeconds = 0;
  if (phases.has("walk")) {
    const row = await measured(
      () =>
        phase(
          `GET /v1${ROUTES.sites.template}?paginate=true&per_page=100 (full walks)`,
          seconds,
          Math.min(concurrency, 16),
          async () => {
            const w = await walk();
            walkRequests += w.requests;
            walks += 1;
            return w.ok;
          },
        ),
      () => walkRequests,
    );
    walkSeconds = row.seconds;
    results.push(row);
  }

  await pool.close();
  worker.postMessage("close");
  await new Promise((r) => worker.once("exit", r));

  console.log(
    `simulator benchmark: ${sites} sites, ${concurrency} concurrent requests, ${seconds} s per phase`,
  );
  console.log(`simulator start-up (fleet build + listen): ${(startupMs / 1000).toFixed(2)} s`);
  console.table(results);
  if (walks > 0)
    console.log(
      `full paginated walks of ${sites} sites: ${walks} in ${walkSeconds} s ` +
        `(${(walkSeconds / walks).toFixed(3)} s per walk under ${Math.min(concurrency, 16)} walkers, ${first.requests} pages each)`,
    );
  console.log(JSON.stringify({ sites, concurrency, seconds, startupMs: Math.round(startupMs), results }));
}

if (isMainThread) await main();
