/**
 * What a site costs in API requests: the daemon (a child process, default schedules unless told) runs
 * against the simulator for `minutes`; requests are counted at the simulator by route and charged to
 * the collector (or the log streams) that makes them. Traffic and logs, whose polling adapts, are
 * measured over the last `window` minutes (after adaptive polling has settled), git too (it rests sites
 * without a history); every other collector
 * costs what its runs cost at the simulator (requests per run) times its schedule's runs per hour.
 * Beside each figure: what the daemon plans and what it measures itself
 * (sitehost_exporter_api_requests_per_site_hour).
 *
 *   node dist/bench/requests.js [sites=200] [minutes=40] [window=15] [trafficSchedule] [logRate] [events] [fast]
 *     logRate given: logs on, each stream written at that many entries per second
 *     events given: webhooks on; that many events per site-hour (an SSH command on a random site,
 *     each an activity entry and a webhook event), so activity logs are read on events
 *     fast: the collectors that back off for unchanged sites run ten times faster (schedules and
 *     maxInterval; git 7.5 times), so their steady state is reached within the run; they are
 *     measured over the window and their counts divided by that speed-up
 */
import type { BudgetSource } from "../src/api/budget.js";
import { ROUTES, type RouteName } from "../src/routes.js";
import {
  BACKING_OFF_COLLECTORS,
  DEFAULT_MAX_INTERVALS,
  DEFAULT_SCHEDULES,
  type BackingOffCollector,
  type CollectorName,
} from "../src/config/schema.js";
import { parseDuration } from "../src/config/duration.js";
import { siteKind } from "../src/discovery/kind.js";
import { runsPerSecond } from "../src/scheduling/plan.js";
import { type RunningSimulator, startSimulator } from "../src/simulator/index.js";
import { sleep } from "../src/util/time.js";
import { label, scrape, startBenchDaemon, values } from "./daemon.js";
import { quantile, startDelayReceiver } from "./otlpDelay.js";

/** Who makes each request. */
const SOURCE_OF: Record<RouteName, BudgetSource | "auth"> = {
  token: "auth",
  revoke: "auth",
  account: "inventory",
  sites: "inventory",
  site: "inventory",
  phpVersions: "inventory",
  gitConfig: "git",
  cmsUsers: "access",
  statistics: "statistics",
  usageReport: "usage",
  performanceReport: "performance",
  trafficMetrics: "traffic",
  pluginAlerts: "security",
  themeAlerts: "security",
  domains: "domains",
  backups: "backups",
  ondemandBackups: "backups",
  restores: "backups",
  gitHistory: "git",
  zones: "certificates",
  zoneRecords: "certificates",
  recordSsl: "certificates",
  phpLogs: "logs",
  serverLogs: "logs",
  siteActivity: "logs",
  accountActivity: "logs",
};
/**
 * Measured over the window: their cost per run moves with what the sites do (git rests the sites
 * that have no git history: its first run asks every site, later ones fewer).
 */
const ADAPTIVE = new Set<string>(["traffic", "logs", "auth", "git"]);

/** `fast`: the backing-off collectors' schedules ten times faster (git 15 → 2 minutes), maxInterval too. */
const FAST: Record<BackingOffCollector, { schedule: string; speedUp: number }> = {
  domains: { schedule: "0 * * * * *", speedUp: 10 },
  security: { schedule: "0 */3 * * * *", speedUp: 10 },
  backups: { schedule: "0 */6 * * * *", speedUp: 10 },
  certificates: { schedule: "30 */6 * * * *", speedUp: 10 },
  git: { schedule: "0 */2 * * * *", speedUp: 7.5 },
  access: { schedule: "30 */3 * * * *", speedUp: 10 },
};

function fastCollectors(): Record<string, { schedule: string; maxInterval: string }> {
  return Object.fromEntries(
    BACKING_OFF_COLLECTORS.map((name) => {
      const { schedule, speedUp } = FAST[name];
      const maxSeconds = (parseDuration(DEFAULT_MAX_INTERVALS[name]) as number) / 1000 / speedUp;
      return [name, { schedule, maxInterval: `${Math.round(maxSeconds)}s` }];
    }),
  );
}

type Counts = Map<string, number>;

function bySource(requests: Record<string, number>): Counts {
  const out: Counts = new Map();
  for (const [key, n] of Object.entries(requests)) {
    const [method = "", template = ""] = key.split(" ");
    const name = (Object.keys(ROUTES) as RouteName[]).find(
      (r) => ROUTES[r].method === method && ROUTES[r].template === template,
    );
    const source = name ? SOURCE_OF[name] : "other";
    out.set(source, (out.get(source) ?? 0) + n);
  }
  return out;
}

function runsOf(text: string): Counts {
  const out: Counts = new Map();
  for (const r of values(text, "sitehost_exporter_collector_runs_total")) {
    const c = label(r.labels, "collector") ?? "";
    out.set(c, (out.get(c) ?? 0) + r.value);
  }
  return out;
}

const minus = (a: Counts, b: Counts): Counts =>
  new Map([...a].map(([k, v]) => [k, v - (b.get(k) ?? 0)] as const));
const round = (n: number) => Math.round(n * 100) / 100;

const WEBHOOK_TOKEN = "bench-webhook-token";

/** Webhooks to the daemon, and an SSH command on a random site at `perSiteHour` per site. */
function sendEvents(sim: RunningSimulator, daemonUrl: string, perSiteHour: number): { stop(): void } {
  sim.control.setWebhookUrl(`${daemonUrl}/webhook?token=${WEBHOOK_TOKEN}`);
  if (!(perSiteHour > 0)) return { stop: () => undefined };
  const ids = sim.control.sites().map((s) => s.site.id);
  const everyMs = 3_600_000 / (perSiteHour * ids.length);
  let n = 0;
  const timer = setInterval(() => {
    const id = ids[(n++ * 7919) % ids.length] as number;
    sim.control.runSshCommand(id, "wp cache flush");
  }, everyMs);
  return { stop: () => clearInterval(timer) };
}

async function main(): Promise<void> {
  const [sitesArg, minutesArg, windowArg, trafficSchedule, logRateArg, eventsArg, fastArg] =
    process.argv.slice(2);
  const eventsPerSiteHour = eventsArg === undefined || eventsArg === "none" ? undefined : Number(eventsArg);
  const fast = fastArg === "fast";
  const sites = Number(sitesArg ?? 200);
  const minutes = Number(minutesArg ?? 40);
  const windowMin = Math.min(minutes, Number(windowArg ?? 15));
  const logRate = logRateArg === undefined || logRateArg === "none" ? undefined : Number(logRateArg);
  const sim = await startSimulator({
    sites,
    seed: 7,
    ...(logRate === undefined ? {} : { logRatePerSite: logRate }),
  });
  const schedules: Record<CollectorName, string> = {
    ...DEFAULT_SCHEDULES,
    ...(trafficSchedule && trafficSchedule !== "default" ? { traffic: trafficSchedule } : {}),
  };
  // With logs on, records go to a receiver that times each one from its entry's time.
  const receiver = logRate === undefined ? undefined : await startDelayReceiver();
  const d = await startBenchDaemon(sim, {
    api: { maxRequestsPerSecond: 1000, maxConcurrency: 16 },
    ...(receiver
      ? {
          env: {
            OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: receiver.endpoint,
            OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: "http/json",
          },
        }
      : {}),
    config: {
      logs: { enabled: logRate !== undefined, ship: receiver !== undefined },
      collectors: { traffic: { schedule: schedules.traffic }, ...(fast ? fastCollectors() : {}) },
      ...(eventsPerSiteHour === undefined ? {} : { webhooks: { enabled: true, token: WEBHOOK_TOKEN } }),
    },
  });
  const events = eventsPerSiteHour === undefined ? undefined : sendEvents(sim, d.url, eventsPerSiteHour);
  const at = (min: number) => d.started + min * 60_000;
  while (performance.now() < at(minutes - windowMin)) await sleep(5_000);
  const windowStart = { requests: bySource(sim.control.stats().requests), runs: runsOf(await scrape(d.url)) };
  receiver?.measure();
  const windowStartedAt = performance.now();
  while (performance.now() < at(minutes)) await sleep(5_000);
  const text = await scrape(d.url);
  const end = { requests: bySource(sim.control.stats().requests), runs: runsOf(text) };
  const windowHours = (performance.now() - windowStartedAt) / 3_600_000;
  const inWindow = {
    requests: minus(end.requests, windowStart.requests),
    runs: minus(end.runs, windowStart.runs),
  };
  const kinds = new Map<string, number>();
  for (const s of sim.control.sites()) {
    const kind = siteKind(s.site);
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  events?.stop();
  await d.stop();
  await sim.close();
  await receiver?.close();
  const delivery = receiver && {
    records: receiver.records,
    doubled: receiver.doubled,
    delaySeconds: Object.fromEntries(
      [...receiver.delays].map(([stream, list]) => [
        stream,
        { records: list.length, p50: round(quantile(list, 0.5)), p95: round(quantile(list, 0.95)) },
      ]),
    ),
  };

  const gauge = (name: string) =>
    new Map(values(text, name).map((r) => [label(r.labels, "source") ?? "", r.value] as const));
  const planned = gauge("sitehost_exporter_api_planned_requests_per_second");
  const measuredByDaemon = gauge("sitehost_exporter_api_requests_per_site_hour");
  const rows: Record<string, Record<string, number | string>> = {};
  let total = 0;
  for (const [source, requests] of end.requests) {
    let perSiteHour: number;
    let how: string;
    const c = source as CollectorName;
    const speedUp = fast && c in FAST ? FAST[c as BackingOffCollector].speedUp : undefined;
    if (speedUp !== undefined) {
      perSiteHour = (inWindow.requests.get(source) ?? 0) / (windowHours * sites * speedUp);
      how = `over the last ${windowMin} min, ${speedUp} times faster`;
    } else if (ADAPTIVE.has(source) || !(c in schedules)) {
      perSiteHour = inWindow.requests.get(source) ?? 0;
      perSiteHour /= windowHours * sites;
      how = `over the last ${windowMin} min`;
    } else {
      // Runs in the window when there were two or more; else every run since the start.
      const windowRuns = inWindow.runs.get(source) ?? 0;
      const [n, runs] =
        windowRuns >= 2
          ? [inWindow.requests.get(source) ?? 0, windowRuns]
          : [requests, end.runs.get(source) ?? 0];
      perSiteHour = runs > 0 ? ((n / runs) * runsPerSecond(schedules[c]) * 3600) / sites : NaN;
      how = `${round(n / Math.max(runs, 1))} per run × ${round(runsPerSecond(schedules[c]) * 3600)} runs/h`;
    }
    if (Number.isFinite(perSiteHour)) total += perSiteHour;
    rows[source] = {
      perSiteHour: round(perSiteHour),
      how,
      planned: round(((planned.get(source) ?? 0) * 3600) / sites / (speedUp ?? 1)),
      measuredByDaemon:
        speedUp === undefined
          ? (measuredByDaemon.get(source) ?? "-")
          : round((measuredByDaemon.get(source) ?? NaN) / speedUp),
    };
  }
  console.log(
    JSON.stringify({
      phase: "requests",
      sites,
      kinds: Object.fromEntries(kinds),
      minutes,
      windowMinutes: windowMin,
      trafficSchedule: schedules.traffic,
      backingOff: fast ? "ten times faster, counts divided back" : "default schedules",
      logs: logRate === undefined ? "off" : `${logRate} entries/s per stream`,
      webhooks: eventsPerSiteHour === undefined ? "off" : `${eventsPerSiteHour} events per site-hour`,
      requestsPerSiteHour: round(total),
      bySource: rows,
      ...(delivery ? { delivery } : {}),
    }),
  );
}

await main();
process.exit(0);
