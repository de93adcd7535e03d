/**
 * What only the exporter holding the checkpoint lock runs (or any exporter, with logs off): discovery
 * and the collectors, the log pipeline, the request plan, the webhook receiver's queue and the
 * schedules. Every part is built first, each from what was built before it; then they start in the
 * order of the list in `activate` and stop in the reverse order.
 */
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { ApiClient } from "../api/client.js";
import { wakeCollectors } from "../collectors/index.js";
import type { CollectorSet } from "../collectors/types.js";
import {
  trafficStateFile,
  UNKEPT_TRAFFIC_STATE,
  type TrafficStateStore,
} from "../collectors/trafficState.js";
import { durationMs } from "../config/duration.js";
import type { Config } from "../config/schema.js";
import { publishShardInfo, reconcileShardLayout, withdrawShardInfo } from "../ha/shardLayout.js";
import { CheckpointWriteError, type CheckpointVolume } from "../ha/volume.js";
import type { ExportHealth } from "../logs/otlp/exportHealth.js";
import { MemorySaver } from "../logs/memorySaver.js";
import { LogPipeline } from "../logs/pipeline.js";
import type { MetricStore } from "../metrics/store.js";
import { DomainBook } from "../probes/domainBook.js";
import { probeTargetGroups, type TargetGroup } from "../probes/targets.js";
import { BudgetPlanner, type StartupWork } from "../scheduling/budgetPlanner.js";
import { createCollection } from "../scheduling/collection.js";
import { objectivesInUse, SloObjectives } from "../slo/objectives.js";
import {
  collectorSources,
  firstRunWithinSeconds,
  schedulePeriodMs,
  type PlannedSource,
} from "../scheduling/plan.js";
import { MeasuredRates } from "../scheduling/measuredRates.js";
import { ReadinessPolicy, type Readiness } from "../scheduling/readiness.js";
import type { SiteCollectedListener } from "../scheduling/runs.js";
import { Scheduler } from "../scheduling/scheduler.js";
import type { ActiveStatus } from "../server/status.js";
import { ComponentGroup } from "../util/components.js";
import { SiteBooks } from "./siteBooks.js";
import type { CheckpointMemory } from "../logs/checkpointMemory.js";
import { collectorsWokenBy } from "../webhooks/collectorWakes.js";
import type { WebhookReceiver } from "../webhooks/receiver.js";

/** What every exporter has, active or standing by. */
export interface Core {
  registry: Registry;
  api: ApiClient;
  store: MetricStore;
  /** With webhooks.enabled: its route is served from the start, events are taken once active. */
  webhooks?: WebhookReceiver;
  /** The OTLP endpoint's health, shared by the log streams and the webhook queue (not for `once`). */
  exportHealth?: ExportHealth;
  /** With logs enabled: whether logs.checkpointDir takes writes (shipping pauses while it does not). */
  volume?: CheckpointVolume;
  /** Why this process may not write under logs.checkpointDir now (it does not hold the lock). */
  fence?: () => string | undefined;
  /** What the log streams last knew when the lock was lost (kept across activations). */
  checkpointMemory?: CheckpointMemory;
  /** Switch V8's memory saver mode by the log load (the entry point chose the heap flags). */
  memorySaver?: boolean;
}

export interface ActiveExporter {
  readiness(): Readiness;
  /** What the status page says of the active parts. */
  status(): ActiveStatus;
  /** What /sd/probes lists: the selected sites' domains as they are now. */
  probeTargets(): TargetGroup[];
  stop(): Promise<void>;
}

/** After a site's run: the domains kept for /sd/probes, and the log pipeline's traffic hint. */
function siteCollected(
  domains: DomainBook,
  logs: LogPipeline | undefined,
  changes: SiteCollectedListener,
): SiteCollectedListener {
  const hint = logs && trafficHint(logs);
  return (collector, site, samples) => {
    domains.record(collector, site, samples);
    hint?.(collector, site, samples);
    changes(collector, site, samples);
  };
}

/** A site's uncached requests (its origin's, as the traffic collector read them) hint at its web-server log's lines. */
function trafficHint(logs: LogPipeline): SiteCollectedListener {
  return (collector, site, samples) => {
    if (collector !== "traffic") return;
    const uncached = samples.find(
      (s) => s.name === "sitehost_site_requests_per_second" && s.labels.cached === "false",
    );
    if (uncached && uncached.value > 0) logs.hintUncachedTraffic(site.id, uncached.value);
  };
}

/** What collectors saved (the traffic counters), or a fresh start, said once, when it cannot be read. */
async function resumeCollectors(
  collectors: CollectorSet,
  state: TrafficStateStore,
  logger: Logger,
): Promise<void> {
  for (const collector of Object.values(collectors)) {
    if (collector.scope !== "site" || !collector.resume) continue;
    try {
      await collector.resume();
    } catch (err) {
      logger.error(
        { err, collector: collector.name, file: state.location },
        "saved collector state cannot be read: its counters start again from zero (a counter reset to Prometheus), and the file is replaced at its next run",
      );
    }
  }
}

/**
 * The log streams' requests per second: each stream at its current interval (which is short only for
 * streams whose reads find entries); a stream not read yet counts as idle (its first reads, sooner,
 * are start-up work).
 */
function logsPlan(logs: LogPipeline, settings: Config["logs"]): number {
  const polling = logs.polling();
  if (!polling) return logs.plannedRequestsPerSecond();
  const unread = logs.unreadStreams();
  const pollMs = durationMs(settings.pollInterval);
  const maxPollMs = Math.max(pollMs, durationMs(settings.maxPollInterval));
  return Math.max(0, polling.readsPerSecond - unread * (1000 / pollMs - 1000 / maxPollMs));
}

/** `holdsLock`: this exporter holds the checkpoint lock and writes the directory. */
export async function activate(
  config: Config,
  logger: Logger,
  core: Core,
  holdsLock: boolean,
): Promise<ActiveExporter> {
  const { registry, api, store, webhooks, exportHealth, volume, fence, checkpointMemory } = core;
  // Maintenance mode and hacked, changes and PHP error groups, by site.
  const books = new SiteBooks(
    config,
    {
      store,
      registry,
      logger,
      webhooks: webhooks !== undefined,
      platformOffsetMs: () => api.clockOffset()?.offsetMs ?? 0,
    },
    holdsLock,
  );
  const { errorGroups } = books;
  const logs = config.logs.enabled
    ? new LogPipeline({
        config,
        api,
        registry,
        logger,
        store,
        exportHealth,
        volume,
        fence,
        checkpointMemory,
        // Entries are stamped by the platform: the tailers work in its time.
        platformOffsetMs: () => api.clockOffset()?.offsetMs ?? 0,
        ...(errorGroups ? { errorGroups } : {}),
        onSiteActivity: (siteId, entry, atMs) => books.siteActivity(siteId, entry, atMs),
      })
    : undefined;
  // V8's memory saver mode while the log path is quiet, where the exporter chose the heap flags.
  const saver =
    logs && core.memorySaver
      ? new MemorySaver({
          taken: () => logs.recordsTaken,
          changed: (on, perSecond) =>
            logger.info(
              { recordsPerSecond: Math.round(perSecond) },
              on
                ? "V8 memory saver mode on: the log path is quiet, full collections give freed heap pages back"
                : "V8 memory saver mode off while a log backlog drains (CPU first)",
            ),
        })
      : undefined;
  const domains = new DomainBook();
  const trafficState = holdsLock ? trafficStateFile(config.logs.checkpointDir) : UNKEPT_TRAFFIC_STATE;
  const { discovery, runner, collectors } = createCollection(
    { sites: config.sites, collectors: config.collectors, maxConcurrency: config.api.maxConcurrency },
    {
      api,
      store,
      registry,
      logger,
      trafficState,
      onSiteCollected: siteCollected(domains, logs, books.collected),
    },
  );
  if (logs) discovery.onSites((sites) => logs.updateSites(sites));
  discovery.onSites((sites) => domains.retain(sites));
  discovery.onSites((sites) => books.updateSites(sites));
  // The sites' SLO objectives, for the rules that compare the log-based and probe SLIs with them.
  const objectives = new SloObjectives(store, config.slos, objectivesInUse(config));
  discovery.onSites((sites) => objectives.update(sites));
  const readiness = new ReadinessPolicy({
    discoveredAt: () => discovery.discoveredAt,
    withoutFirstRun: () => runner.withoutFirstRun(),
    discoveryError: () => runner.status().find((s) => s.name === discovery.name)?.lastError?.message,
    readyTimeout: config.web.readyTimeout,
    logger,
  });
  // When the start-up work was first seen done (the planner asks while it is pending).
  let startupDoneAt: number | undefined;
  const startupWork = (): StartupWork[] => {
    const work: StartupWork[] = [
      ...runner.firstRunsPending().map((c) => ({
        source: c.name,
        requests: c.requestsPerRun,
        withinSeconds: firstRunWithinSeconds(c.schedule),
      })),
      ...(logs && logs.unreadStreams() > 0
        ? [{ source: "logs", requests: logs.unreadStreams(), withinSeconds: 20 } as const]
        : []),
    ];
    if (work.length === 0 && discovery.discovered) startupDoneAt ??= Date.now();
    return work;
  };
  const measured: MeasuredRates = new MeasuredRates(registry, {
    startupDoneAt: () => startupDoneAt,
    granted: () => api.budget.grantedBySource(),
    sites: () => discovery.sites.length,
    periodMs: (source) => schedulePeriodMs(config.collectors, source),
    // Published for a source until its window has been measured (the planner is made just below).
    planned: () =>
      new Map(planner.current()?.sources.map((s: PlannedSource) => [s.source, s.requestsPerSecond])),
  });
  const planner = new BudgetPlanner(
    {
      budgetRequestsPerSecond: config.api.maxRequestsPerSecond,
      shardCount: config.sites.shard.count,
      logsMaxPollInterval: config.logs.maxPollInterval,
      traffic: config.collectors.traffic,
    },
    registry,
    logger,
    api.budget,
    {
      sites: () => discovery.sites.length,
      measured: () => measured.perSecond(),
      measuredStarting: () => measured.starting(),
      sources: (): PlannedSource[] => [
        ...collectorSources(runner.costs().filter((c) => c.enabled)),
        ...(logs ? [{ source: "logs", requestsPerSecond: logsPlan(logs, config.logs) } as const] : []),
        ...(webhooks
          ? [{ source: "webhooks", requestsPerSecond: webhooks.requestsPerSecond() } as const]
          : []),
      ],
      // The streams' first reads (one request each, mostly) within 20 s, so they go first; first runs
      // within 90 s (hourly and slower collectors: a twelfth of their period).
      startupWork,
    },
  );
  discovery.onSites(() => planner.update());
  const scheduler = new Scheduler(runner, config.collectors, logger);

  const parts = new ComponentGroup();
  await parts.start([
    logs && {
      name: "shard layout",
      // Not recorded on a full or read-only volume: done at the next start (moved sites are not tailed).
      start: () =>
        reconcileShardLayout(config.logs.checkpointDir, config.sites.shard, logger).then(
          () => undefined,
          (err: unknown) => {
            if (!(err instanceof CheckpointWriteError)) throw err;
            volume?.report(err);
          },
        ),
    },
    ...books.components(),
    { name: "measured rates", start: () => measured.start(), stop: () => measured.stop() },
    // Weights follow the start-up work as it gets done (and the sites once discovered), then settle on the plan.
    {
      name: "request plan",
      start: () => planner.start(() => !discovery.discovered),
      stop: () => planner.stop(),
    },
    logs && { name: "log pipeline", start: () => logs.start(), stop: () => logs.stop() },
    saver && { name: "memory saver", start: () => saver.start(), stop: () => saver.stop() },
    // After the log pipeline's start, which clears temporary files the queue's compaction also uses.
    webhooks && {
      name: "webhook receiver",
      start: () =>
        webhooks.activate({
          siteName: (id) => discovery.site(id)?.name,
          refreshTarget: {
            refreshSite: (id, signal) => discovery.refreshSite(id, signal, "webhooks"),
            rediscover: async () => {
              const outcome = await runner.runUnlessRunning(discovery.name);
              return outcome !== undefined && outcome.result !== "skipped";
            },
            isKnown: (id) => discovery.has(id),
            discoveryCost: () => runner.requestsPerRun(discovery.name),
          },
          // What the refreshes cost shows in the request plan as it changes, not only after a discovery.
          onRefreshRateChange: () => planner.update(),
          onEvent: (siteId, payload) => {
            logs?.siteEvent(siteId);
            wakeCollectors(collectors, collectorsWokenBy(payload.event, siteId), siteId);
            if (siteId === undefined) return;
            books.event(siteId, payload);
          },
        }),
      stop: () => webhooks.stop(),
    },
    { name: "saved counters", start: () => resumeCollectors(collectors, trafficState, logger) },
    { name: "collector schedules", start: () => scheduler.start(), stop: () => scheduler.stop() },
    {
      name: "shard info",
      start: () => publishShardInfo(registry, config.sites.shard),
      stop: () => withdrawShardInfo(registry),
    },
  ]);
  return {
    readiness: () => readiness.check(),
    status: () => {
      const plan = planner.current();
      const advice = plan && !plan.fits ? planner.adviceFor(plan) : undefined;
      return {
        sitesDiscovered: discovery.sites.length,
        collectors: runner.status(),
        ...(plan ? { plan } : {}),
        ...(advice ? { budgetAdvice: advice } : {}),
        ...(logs ? { logStalls: logs.stalls() } : {}),
        startup: startupWork(),
      };
    },
    probeTargets: () => probeTargetGroups(discovery.sites, (id) => domains.domains(id), config.probes),
    stop: () => parts.stop(),
  };
}
