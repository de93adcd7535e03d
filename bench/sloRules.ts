/**
 * What each generated SLO rule asks of a real Prometheus, projected to 5,000 sites and a full error
 * budget period: every rule of `slo-rules` (the defaults) is run as an instant query with Prometheus's
 * query statistics over data backfilled with `promtool tsdb create-blocks-from openmetrics` (the raw
 * counters of the last 2 hours and the recorded 5-minute and hourly increases of the whole period, at
 * a 30 s scrape and evaluation interval, kube-prometheus-stack's defaults), at each scale given.
 *
 *   node dist/bench/sloRules.js 50 200    two scales (sites); about 10 minutes and 10 GB of temporary disk
 *
 * Per rule: the samples it reads and its evaluation time at each scale, and per evaluation and per hour
 * at 5,000 sites: samples are linear in the sites (every rule reads each site's series alone), time is
 * extrapolated along the two largest scales (it has a fixed part). Prometheus refuses a
 * query past `--query.max-samples` (50 million by default).
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigSchema } from "../src/config/schema.js";
import { durationMs } from "../src/config/duration.js";
import { sloRuleGroups } from "../src/slo/rules.js";
import { freePort } from "./daemon.js";
import { STEP_S, writeData } from "./sloRulesData.js";

const PROMETHEUS = process.env.PROMETHEUS_BIN ?? "/usr/bin/prometheus";
const PROMTOOL = process.env.PROMTOOL ?? "/usr/bin/promtool";
const TARGET_SITES = 5000;
const MAX_SAMPLES = 50_000_000;
const RUNS = 3;

interface RuleCost {
  name: string;
  group: string;
  /** Evaluations per hour: the group's interval, or a 30 s global one. */
  perHour: number;
  samples: number[];
  seconds: number[];
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

interface QueryStats {
  samples: number;
  seconds: number;
}

async function query(url: string, expr: string, time: number): Promise<QueryStats> {
  const body = new URLSearchParams({ query: expr, time: String(time), stats: "all" });
  const res = await fetch(`${url}/api/v1/query`, { method: "POST", body });
  const json = (await res.json()) as {
    status: string;
    error?: string;
    data?: { stats?: { timings: { evalTotalTime: number }; samples: { totalQueryableSamples: number } } };
  };
  if (json.status !== "success" || !json.data?.stats) throw new Error(`${expr}: ${json.error ?? res.status}`);
  return {
    samples: json.data.stats.samples.totalQueryableSamples,
    seconds: json.data.stats.timings.evalTotalTime,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function measureScale(
  sites: number,
  costs: Map<string, RuleCost>,
  exprs: Map<string, string>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "sitehost-slo-bench-"));
  const end = Math.floor(Date.now() / 1000 / 3600) * 3600 - 2 * 3600;
  try {
    let t = Date.now();
    const samples = await writeData(join(dir, "data.om"), { sites, end });
    console.log(
      `${sites} sites: ${samples.toLocaleString("en")} samples written in ${(Date.now() - t) / 1000} s`,
    );
    t = Date.now();
    execFileSync(
      PROMTOOL,
      [
        "tsdb",
        "create-blocks-from",
        "openmetrics",
        "--max-block-duration=1000h",
        "-q",
        join(dir, "data.om"),
        join(dir, "tsdb"),
      ],
      { stdio: ["ignore", "ignore", "inherit"] },
    );
    rmSync(join(dir, "data.om"));
    console.log(`  backfilled in ${(Date.now() - t) / 1000} s`);
    writeFileSync(join(dir, "prometheus.yml"), "global: {}\n");
    const port = await freePort();
    const prom = spawn(
      PROMETHEUS,
      [
        `--config.file=${join(dir, "prometheus.yml")}`,
        `--storage.tsdb.path=${join(dir, "tsdb")}`,
        "--storage.tsdb.retention.time=90d",
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: "ignore" },
    );
    const url = `http://127.0.0.1:${port}`;
    try {
      await until("Prometheus", async () => ((await fetch(`${url}/-/ready`)).ok ? true : undefined), 60_000);
      for (const [name, expr] of exprs) {
        const runs: QueryStats[] = [];
        for (let i = 0; i < RUNS; i++) runs.push(await query(url, expr, end));
        const cost = costs.get(name) as RuleCost;
        cost.samples.push(median(runs.map((r) => r.samples)));
        cost.seconds.push(median(runs.map((r) => r.seconds)));
      }
    } finally {
      prom.kill("SIGTERM");
      await new Promise((r) => prom.once("exit", r));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const scales = process.argv
    .slice(2)
    .map(Number)
    .filter((n) => n > 0);
  if (scales.length === 0) scales.push(50, 200);
  const slos = ConfigSchema.parse({}).slos;
  const costs = new Map<string, RuleCost>();
  const exprs = new Map<string, string>();
  for (const group of sloRuleGroups(slos)) {
    const perHour = 3600_000 / (group.interval ? durationMs(group.interval) : STEP_S * 1000);
    group.rules.forEach((rule, i) => {
      const name = "record" in rule ? `${rule.record}{slo="${rule.labels.slo}"}` : `${rule.alert} #${i}`;
      costs.set(name, { name, group: group.name, perHour, samples: [], seconds: [] });
      exprs.set(name, rule.expr);
    });
  }
  for (const sites of scales) await measureScale(sites, costs, exprs);

  const last = scales.length - 1;
  /** Samples grow with the sites alone: per site at the largest scale, times the target. */
  const samplesAt = (xs: number[]) => ((xs[last] as number) / (scales[last] as number)) * TARGET_SITES;
  /** Time has a fixed part: extrapolated along the two largest scales. */
  const secondsAt = (xs: number[]) => {
    if (last === 0) return ((xs[0] as number) / (scales[0] as number)) * TARGET_SITES;
    const slope =
      ((xs[last] as number) - (xs[last - 1] as number)) /
      ((scales[last] as number) - (scales[last - 1] as number));
    return Math.max(
      xs[last] as number,
      (xs[last] as number) + slope * (TARGET_SITES - (scales[last] as number)),
    );
  };
  console.log(
    `\n| rule | evaluations / h | samples at ${scales.join(" / ")} sites | eval ms at ${scales.join(" / ")} | samples per evaluation at ${TARGET_SITES} | eval ms at ${TARGET_SITES} | samples / h at ${TARGET_SITES} |`,
  );
  console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
  let total = 0;
  let worst = { name: "", samples: 0 };
  let evalSecondsPerHour = 0;
  for (const c of costs.values()) {
    const projected = samplesAt(c.samples);
    const seconds = secondsAt(c.seconds);
    total += projected * c.perHour;
    evalSecondsPerHour += seconds * c.perHour;
    if (projected > worst.samples) worst = { name: c.name, samples: projected };
    console.log(
      `| \`${c.name}\` | ${c.perHour} | ${c.samples.join(" / ")} | ${c.seconds.map((s) => (s * 1000).toFixed(1)).join(" / ")} | ${Math.round(projected).toLocaleString("en")} | ${(seconds * 1000).toFixed(0)} | ${((projected * c.perHour) / 1e9).toFixed(3)} G |`,
    );
  }
  console.log(
    `\nAt ${TARGET_SITES} sites: the largest rule reads ${Math.round(worst.samples).toLocaleString("en")} samples per evaluation (${worst.name}; the limit is ${MAX_SAMPLES.toLocaleString("en")}); all rules ${(total / 1e9).toFixed(2)} billion samples and ${evalSecondsPerHour.toFixed(0)} s of evaluation per hour.`,
  );
  if (worst.samples > MAX_SAMPLES) process.exitCode = 1;
}

await main();
