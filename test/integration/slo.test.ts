/**
 * Visitors' SLOs end to end: the daemon tails a simulator whose sites have known request times and
 * error rates (one slow, one failing at low traffic, one idle, one healthy), ships their logs to a
 * real OTLP receiver and is scraped by a real Prometheus that evaluates the rules `slo-rules` prints.
 * The histogram's percentiles match the simulator's own request times within one bucket, every record
 * carries its site's resource, the burn-rate alerts fire for the failing and the slow site and for no
 * other, and no rule is unhealthy. Prometheus negotiates OpenMetrics and stores the exemplars, which
 * name records the receiver got.
 */
import { execFile, spawnSync } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { ConfigSchema } from "../../src/config/schema.js";
import { histogramLayout } from "../../src/logs/histogramLayout.js";
import { sloRuleGroups } from "../../src/slo/rules.js";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.js";
import { SimLogs } from "../../src/simulator/logs.js";
import type { WebFault } from "../../src/simulator/options.js";
import { MAIN, startDaemonProcess, type DaemonProcess } from "../helpers/daemon.js";
import { startOtlpReceiver, type OtlpReceiver } from "../helpers/otlp-receiver.js";
import { startPrometheus, type RunningPrometheus } from "../helpers/prometheus.js";
import { evenIntervals } from "../helpers/ruleHealth.js";
import { waitFor } from "../helpers/wait.js";

const run = promisify(execFile);
const JOB = "sitehost-exporter";
const PROMTOOL = process.env.PROMTOOL ?? "/usr/bin/promtool";
/** Generated entries per second of each stream of an ordinary site. */
const RATE = 4;
const BACKLOG_SECONDS = 20 * 60;

// The generated rules, with the alerts' `for` left out so they fire within the test's minutes.
const config = {
  // Every stream read at least every 5 s (the failing site's 0.5 entries/s would wait 100 s by rate).
  logs: { ship: true, pollInterval: "1s", maxPollInterval: "5s", startFrom: `-${BACKLOG_SECONDS}s` },
  slos: {
    alerts: {
      page: {
        severity: "critical",
        windows: [
          { burnRate: 14.4, long: "1h", short: "5m" },
          { burnRate: 6, long: "6h", short: "30m" },
        ],
      },
      ticket: { severity: "warning", windows: [{ burnRate: 1, long: "3d", short: "6h" }] },
    },
  },
};

/** The upper bounds of the histogram's buckets as the daemon publishes them, +Inf last. */
const publishedBounds = () =>
  histogramLayout(ConfigSchema.parse(config)).le.map((le) => (le === "+Inf" ? Infinity : Number(le)));

let sim: RunningSimulator;
let daemon: DaemonProcess;
let receiver: OtlpReceiver;
let prom: RunningPrometheus;
let faults: WebFault[];
let startSecond: number;
const ids = { slow: 0, failing: 0, idle: 0, healthy: 0 };

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), "sitehost-slo-"));
  sim = await startSimulator({ sites: 4, seed: 21, logRatePerSite: RATE });
  const siteIds = sim.control.sites().map((s) => s.site.id);
  const [slow, failing, idle, healthy] = siteIds as [number, number, number, number];
  Object.assign(ids, { slow, failing, idle, healthy });
  startSecond = Math.floor(Date.now() / 1000) - BACKLOG_SECONDS;
  faults = [
    { siteId: slow, slow: true },
    { siteId: failing, rate: 0.5, errorRate: 0.9 },
    { siteId: idle, rate: 0 },
  ];
  sim.control.setFaults({ webFaults: faults });
  receiver = await startOtlpReceiver();

  daemon = await startDaemonProcess({
    sim,
    config,
    env: {
      OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: receiver.logsEndpoint,
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=test",
    },
  });
  const configFile = join(dir, "slo.yaml");
  await writeFile(configFile, stringify(config));
  const { stdout } = await run(process.execPath, [MAIN, "slo-rules", "--config", configFile]);
  const rulesFile = join(dir, "slo-rules.yaml");
  await writeFile(rulesFile, stdout);
  const evenRules = await evenIntervals(rulesFile, dir);
  prom = await startPrometheus({
    scrapeTargets: [{ job: JOB, target: daemon.url.replace("http://", "") }],
    ruleFiles: [evenRules],
    features: ["exemplar-storage"],
  });
}, 120_000);

afterAll(async () => {
  await prom?.close();
  await daemon?.stop();
  await receiver?.close();
  await sim?.close();
});

/**
 * The request times the simulator wrote for a site over [from, to], as any reader of its log sees
 * them: those the origin served (not edge-cache hits), which the histogram publishes by default.
 */
function truth(siteId: number, from: number, to: number): number[] {
  const data = sim.control.site(siteId);
  if (!data) throw new Error(`no site ${siteId}`);
  const logs = new SimLogs(RATE, undefined, () => faults);
  const src = {
    siteId,
    siteName: data.site.name,
    host: data.domains[0]?.domainName ?? `${data.site.name}.sites.example`,
    seed: data.seed,
  };
  const times: number[] = [];
  for (let s = from; s <= to; s++) {
    for (const e of logs.entriesAt(src, "server", s, 0)) {
      const hit = ["HIT", "TRUE"].includes(String(e.cached ?? "").toUpperCase());
      if (typeof e.request_time === "number" && !hit) times.push(e.request_time);
    }
  }
  return times.sort((a, b) => a - b);
}

describe("visitors' SLOs from the logs", () => {
  it("the histogram's percentiles are the origin's request times within one published bucket", async () => {
    const count = (id: number) =>
      `sum(sitehost_site_http_request_duration_seconds_count{job="${JOB}",site_id="${id}"})`;
    // Read to the end: the cumulative count covers the whole backlog.
    for (const id of [ids.slow, ids.healthy]) {
      const origin = truth(id, startSecond, startSecond + BACKLOG_SECONDS).length;
      await prom.waitFor(count(id), (r) => (r[0]?.value ?? 0) > origin * 0.9, 90_000);
    }
    const now = Math.floor(Date.now() / 1000);
    const bounds = publishedBounds();
    const published = (seconds: number) => bounds.findIndex((b) => seconds <= b);
    for (const id of [ids.slow, ids.healthy]) {
      const times = truth(id, startSecond, now);
      for (const q of [0.5, 0.9, 0.99]) {
        const [estimate] = await prom.query(
          `histogram_quantile(${q}, sum by (le) (sitehost_site_http_request_duration_seconds_bucket{job="${JOB}",site_id="${id}"}))`,
        );
        const exact = times[Math.floor(q * (times.length - 1))] as number;
        const distance = Math.abs(published(estimate?.value ?? NaN) - published(exact));
        expect(distance, `site ${id} p${q * 100}: ${estimate?.value} vs ${exact}`).toBeLessThanOrEqual(1);
      }
    }
  }, 120_000);

  it("the exposition with logs, objectives and every collector passes promtool check metrics", async () => {
    await prom.waitFor(
      `count(sitehost_site_slo_objective_ratio{job="${JOB}",slo="latency"})`,
      (r) => (r[0]?.value ?? 0) >= 3,
      60_000,
    );
    const body = await (await fetch(`${daemon.url}/metrics`)).text();
    for (const family of [
      "sitehost_site_http_request_duration_seconds_bucket",
      "sitehost_site_php_log_entries_total",
      "sitehost_site_slo_objective_ratio",
      "sitehost_site_audit_score",
      "sitehost_certificate_expiry_timestamp_seconds",
    ])
      expect(body, family).toContain(`${family}{`);
    const check = spawnSync(PROMTOOL, ["check", "metrics"], { input: body, encoding: "utf8" });
    expect(check.stderr + check.stdout).toBe("");
    expect(check.status).toBe(0);
  }, 90_000);

  it("every record carries its site's resource", async () => {
    const records = receiver.records.filter((r) => r.attributes["sitehost.log.stream"] === "server");
    expect(records.length).toBeGreaterThan(1000);
    const names = new Map(sim.control.sites().map((s) => [String(s.site.id), s.site.name]));
    for (const r of receiver.records) {
      const siteId = r.attributes["sitehost.site.id"] as string | undefined;
      expect(r.resource["service.namespace"]).toBe("sitehost");
      expect(r.resource["deployment.environment.name"]).toBe("test");
      if (siteId === undefined) {
        expect(r.resource["service.name"]).toBe("sitehost-account");
      } else {
        expect(r.resource["service.name"]).toBe(names.get(siteId));
        expect(r.resource["service.instance.id"]).toBe(siteId);
        expect(r.resource["sitehost.site.id"]).toBe(siteId);
        expect(r.resource["cloud.region"]).toBe(sim.control.site(Number(siteId))?.site.datacenterCode);
      }
    }
  });

  it("the burn-rate alerts fire for the failing and the slow site, for no other, and every rule is healthy", async () => {
    const firing = async () =>
      (await prom.query('ALERTS{alertstate="firing"}')).map(
        (a) => `${a.metric.alertname} ${a.metric.site_id} ${a.metric.class}`,
      );
    await prom.waitFor(
      'ALERTS{alertstate="firing"}',
      (r) =>
        r.some(
          (a) =>
            a.metric.alertname === "SitehostSiteAvailabilityBudgetBurn" &&
            a.metric.site_id === String(ids.failing),
        ) &&
        r.some(
          (a) =>
            a.metric.alertname === "SitehostSiteLatencyBudgetBurn" && a.metric.site_id === String(ids.slow),
        ),
      90_000,
    );
    const sites = new Set((await firing()).map((a) => a.split(" ")[1]));
    expect([...sites].sort()).toEqual([String(ids.failing), String(ids.slow)].sort());

    const res = await fetch(`${prom.url}/api/v1/rules`);
    const body = (await res.json()) as {
      data: { groups: Array<{ rules: Array<{ name: string; health: string; lastError?: string }> }> };
    };
    const rules = body.data.groups.flatMap((g) => g.rules);
    // Every rule slo-rules printed (the probe SLI's included, with no probe here: empty, not unhealthy).
    expect(rules.length).toBe(sloRuleGroups(ConfigSchema.parse(config).slos).flatMap((g) => g.rules).length);
    expect(rules.length).toBeGreaterThan(50);
    expect(
      rules.filter((r) => r.health !== "ok").map((r) => `${r.name}: ${r.health} ${r.lastError ?? ""}`),
    ).toEqual([]);
  }, 120_000);

  it("Prometheus stores exemplars that name shipped records: a slow bucket's and a 5xx count's", async () => {
    interface ExemplarSeries {
      seriesLabels: Record<string, string>;
      exemplars: Array<{ labels: Record<string, string>; value: string; timestamp: number }>;
    }
    const exemplars = async (query: string): Promise<ExemplarSeries[]> => {
      const params = new URLSearchParams({
        query,
        start: String(Date.now() / 1000 - 3600),
        end: String(Date.now() / 1000 + 60),
      });
      const res = await fetch(`${prom.url}/api/v1/query_exemplars?${params.toString()}`);
      const body = (await res.json()) as { status: string; error?: string; data?: ExemplarSeries[] };
      if (body.status !== "success") throw new Error(`query_exemplars ${query}: ${body.error ?? res.status}`);
      return body.data ?? [];
    };
    const slowBuckets = `sitehost_site_http_request_duration_seconds_bucket{job="${JOB}",site_id="${ids.slow}"}`;
    const failing5xx = `sitehost_site_http_responses_total{job="${JOB}",site_id="${ids.failing}",status_class="5xx"}`;
    const found = await waitFor(
      "exemplars of the slow site's buckets and the failing site's 5xx count",
      async () => {
        const [buckets, errors] = await Promise.all([exemplars(slowBuckets), exemplars(failing5xx)]);
        return buckets.length > 0 && errors.length > 0 && { buckets, errors };
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    const shipped = new Map(receiver.records.map((r) => [r.attributes["log.record.uid"] as string, r]));
    const bounds = publishedBounds();
    for (const series of found.buckets) {
      const le = series.seriesLabels.le as string;
      for (const e of series.exemplars) {
        const record = shipped.get(e.labels.log_record_uid as string);
        expect(
          record,
          `exemplar ${e.labels.log_record_uid} of le=${le} names a shipped record`,
        ).toBeDefined();
        const seconds = record?.attributes["sitehost.http.request_time"] as number;
        // The record's duration is the exemplar's value, and the bucket is the record's own.
        expect(Number(e.value)).toBeCloseTo(seconds, 6);
        const at = bounds.indexOf(le === "+Inf" ? Infinity : Number(le));
        expect(seconds).toBeLessThanOrEqual(bounds[at] as number);
        if (at > 0) expect(seconds).toBeGreaterThan(bounds[at - 1] as number);
        expect(record?.attributes["sitehost.site.id"]).toBe(String(ids.slow));
      }
    }
    for (const e of found.errors.flatMap((s) => s.exemplars)) {
      const record = shipped.get(e.labels.log_record_uid as string);
      expect(record?.attributes["sitehost.site.id"]).toBe(String(ids.failing));
      expect(Math.floor(Number(record?.attributes["http.response.status_code"]) / 100)).toBe(5);
    }
  }, 90_000);
});
