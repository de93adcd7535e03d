/**
 * Test helper: a real Prometheus server (Debian's /usr/bin/prometheus) on a free loopback port with a
 * temporary data directory, scraping the given targets and evaluating the given rule files.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { freePort } from "./ports.js";
import { waitFor } from "./wait.js";

export const PROMETHEUS_BIN = process.env.PROMETHEUS_BIN ?? "/usr/bin/prometheus";

export interface PrometheusOptions {
  scrapeTargets: Array<{ job: string; target: string }>;
  /** Default 1s. */
  scrapeInterval?: string;
  ruleFiles?: string[];
  /** Base URL of an Alertmanager, e.g. http://127.0.0.1:9093 */
  alertmanagerUrl?: string;
  /** Default 1s. */
  evaluationInterval?: string;
  /** `--enable-feature` values, e.g. exemplar-storage. */
  features?: string[];
  /** Further jobs, as written in `scrape_configs` (service discovery, relabelling). */
  scrapeConfigs?: Array<Record<string, unknown>>;
}

export interface PromSample {
  metric: Record<string, string>;
  value: number;
}

export interface RunningPrometheus {
  url: string;
  /** Instant query; throws with Prometheus's error message when the query is invalid. */
  query(promql: string, time?: number): Promise<PromSample[]>;
  /** Polls `query` until `predicate` holds for the result; throws with the last result after `timeoutMs`. */
  waitFor(
    promql: string,
    predicate: (result: PromSample[]) => boolean,
    timeoutMs: number,
  ): Promise<PromSample[]>;
  /** Server log output so far (stderr), for failure messages. */
  logs(): string;
  close(): Promise<void>;
}

/** Keeps the last `max` characters of a child's output. */
export function captureOutput(child: ChildProcess, max = 64 * 1024): () => string {
  let buf = "";
  const add = (chunk: Buffer): void => {
    buf = (buf + chunk.toString("utf8")).slice(-max);
  };
  child.stdout?.on("data", add);
  child.stderr?.on("data", add);
  return () => buf;
}

export async function waitForReady(
  url: string,
  child: ChildProcess,
  logs: () => string,
  timeoutMs: number,
): Promise<void> {
  await waitFor(
    `${url} to answer 200`,
    async () => {
      if (child.exitCode !== null)
        throw new Error(`process exited with ${child.exitCode} before ready:\n${logs()}`);
      try {
        return (await fetch(url, { signal: AbortSignal.timeout(1000) })).ok;
      } catch {
        return false; // not listening yet
      }
    },
    { timeoutMs, intervalMs: 200, last: logs },
  );
}

export async function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

/** A started server binary: its output so far, and how to stop it (and remove what `cleanup` names). */
export interface RunningTool {
  logs(): string;
  close(): Promise<void>;
}

/**
 * Spawns `bin` with `args`, waits until `readyUrl` answers 200 (30 s at most), and gives its output and a
 * `close` that stops it and then runs `cleanup` (a temporary directory's removal); fails with the
 * output when it does not start.
 */
export async function startTool(
  bin: string,
  args: string[],
  readyUrl: string,
  cleanup: () => Promise<void>,
): Promise<RunningTool> {
  const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
  const logs = captureOutput(child);
  const close = async (): Promise<void> => {
    await stopChild(child);
    await cleanup();
  };
  try {
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", () => resolve());
      child.once("error", reject);
    });
    await waitForReady(readyUrl, child, logs, 30_000);
  } catch (err) {
    await close();
    throw err;
  }
  return { logs, close };
}

interface ApiAnswer {
  status: "success" | "error";
  error?: string;
  errorType?: string;
  data?: { resultType: string; result: unknown };
}

export async function startPrometheus(opts: PrometheusOptions): Promise<RunningPrometheus> {
  const dir = await mkdtemp(join(tmpdir(), "sitehost-prometheus-"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const config: Record<string, unknown> = {
    global: {
      scrape_interval: opts.scrapeInterval ?? "1s",
      scrape_timeout: opts.scrapeInterval ?? "1s",
      evaluation_interval: opts.evaluationInterval ?? "1s",
    },
    scrape_configs: [
      ...opts.scrapeTargets.map((t) => ({
        job_name: t.job,
        static_configs: [{ targets: [t.target] }],
      })),
      ...(opts.scrapeConfigs ?? []),
    ],
  };
  if (opts.ruleFiles?.length) config.rule_files = opts.ruleFiles;
  if (opts.alertmanagerUrl) {
    const am = new URL(opts.alertmanagerUrl);
    config.alerting = {
      alertmanagers: [{ scheme: am.protocol.replace(":", ""), static_configs: [{ targets: [am.host] }] }],
    };
  }
  const configFile = join(dir, "prometheus.yml");
  await writeFile(configFile, stringify(config));
  const { logs, close } = await startTool(
    PROMETHEUS_BIN,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--log.level=warn",
      ...(opts.features ?? []).map((f) => `--enable-feature=${f}`),
    ],
    `${url}/-/ready`,
    () => rm(dir, { recursive: true, force: true }),
  );

  const query = async (promql: string, time?: number): Promise<PromSample[]> => {
    const params = new URLSearchParams({ query: promql });
    if (time !== undefined) params.set("time", String(time));
    const res = await fetch(`${url}/api/v1/query`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: params.toString(),
    });
    const body = (await res.json()) as ApiAnswer;
    if (body.status !== "success" || !body.data) {
      throw new Error(`query ${promql} failed: ${body.errorType ?? res.status}: ${body.error ?? "no data"}`);
    }
    const { resultType, result } = body.data;
    if (resultType === "scalar") return [{ metric: {}, value: Number((result as [number, string])[1]) }];
    if (resultType !== "vector") throw new Error(`query ${promql}: unexpected result type ${resultType}`);
    return (result as Array<{ metric: Record<string, string>; value: [number, string] }>).map((r) => ({
      metric: r.metric,
      value: Number(r.value[1]),
    }));
  };

  /** The query's result once `predicate` holds for it. */
  const waitForQuery = async (
    promql: string,
    predicate: (result: PromSample[]) => boolean,
    timeoutMs: number,
  ): Promise<PromSample[]> => {
    let last: PromSample[] = [];
    return waitFor(
      promql,
      async () => {
        last = await query(promql);
        return predicate(last) && last;
      },
      { timeoutMs, intervalMs: 500, last: () => JSON.stringify(last) },
    );
  };

  return { url, query, waitFor: waitForQuery, logs, close };
}
