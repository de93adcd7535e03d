/**
 * How soon the first complete picture is there: the daemon (default schedules and budget, logs on, a
 * few entries an hour per stream) starts against a simulator of `sites` sites; the bench watches when
 * each collector's first run succeeded, when `/-/ready` answered 200, what the status page expected
 * (`budget.firstPicture`) and how many requests the simulator had answered, by source, until then.
 *
 *   node dist/bench/firstPicture.js [sites=1000] [capMinutes=20] [budget=20]
 */
import { COLLECTOR_NAMES } from "../src/config/schema.js";
import { startSimulator } from "../src/simulator/index.js";
import { sleep } from "../src/util/time.js";
import { label, scrape, startBenchDaemon, values } from "./daemon.js";

const seconds = (ms: number) => Math.round(ms / 100) / 10;

async function expected(url: string): Promise<unknown> {
  try {
    const status = (await (await fetch(`${url}/-/status`)).json()) as { budget?: { firstPicture?: unknown } };
    return status.budget?.firstPicture;
  } catch {
    return undefined;
  }
}

async function main(): Promise<void> {
  const [sitesArg, capArg, budgetArg] = process.argv.slice(2);
  const sites = Number(sitesArg ?? 1000);
  const capMs = Number(capArg ?? 20) * 60_000;
  const budget = Number(budgetArg ?? 20);
  const sim = await startSimulator({ sites, seed: 7, logRatePerSite: 0.00194 });
  const d = await startBenchDaemon(sim, {
    api: { maxRequestsPerSecond: budget },
    config: { logs: { enabled: true, ship: false } },
  });
  const firstRun = new Map<string, number>();
  const requestsAt = new Map<string, number>();
  let readyAt: number | undefined;
  let estimate: unknown;
  const total = () => Object.values(sim.control.stats().requests).reduce((a, b) => a + b, 0);
  while (performance.now() - d.started < capMs && firstRun.size < COLLECTOR_NAMES.length) {
    await sleep(1_000);
    const since = performance.now() - d.started;
    let text: string;
    try {
      text = await scrape(d.url);
    } catch {
      continue; // not listening yet
    }
    for (const r of values(text, "sitehost_exporter_collector_last_success_timestamp_seconds")) {
      const name = label(r.labels, "collector") ?? "";
      if (r.value > 0 && !firstRun.has(name)) {
        firstRun.set(name, since);
        requestsAt.set(name, total());
      }
    }
    estimate ??= await expected(d.url);
    if (readyAt === undefined && (await fetch(`${d.url}/-/ready`).catch(() => undefined))?.status === 200)
      readyAt = since;
  }
  const allDone = firstRun.size === COLLECTOR_NAMES.length ? Math.max(...firstRun.values()) : undefined;
  await d.stop();
  await sim.close();
  console.log(
    JSON.stringify({
      phase: "firstPicture",
      sites,
      budgetRequestsPerSecond: budget,
      firstRunSeconds: Object.fromEntries([...firstRun].map(([k, v]) => [k, seconds(v)])),
      requestsByThen: Object.fromEntries(requestsAt),
      allFirstRunsSeconds: allDone === undefined ? "not within the cap" : seconds(allDone),
      readySeconds: readyAt === undefined ? "-" : seconds(readyAt),
      statusExpected: estimate,
    }),
  );
}

await main();
process.exit(0);
