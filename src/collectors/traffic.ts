import type { MetricsResult, Site } from "../api/schemas.js";
import type { SourcedApi } from "../api/sourced.js";
import type { MetricName } from "../metrics/families.js";
import type { Sample } from "../metrics/sample.js";
import { sampleFor, type SiteRef } from "../metrics/siteSample.js";
import {
  CACHE_STATES,
  periodRates,
  readTrafficAnswer,
  TRAFFIC_METRICS,
  type TrafficAnswer,
  type TrafficMetric,
} from "./trafficPeriods.js";
import { countPeriods, type SiteTrafficCounts } from "./trafficCounts.js";
import { TrafficPolling } from "./trafficPolling.js";
import {
  refusesStartAt,
  START_AT_FORM_NAMES,
  StartAtChoice,
  trafficQuery,
  type StartAtForm,
} from "./trafficStartAt.js";
import type { SiteCollector, TrafficEnv } from "./types.js";

export const TRAFFIC_PERIODS_MISSED = "sitehost_exporter_traffic_periods_missed_total";

export const TRAFFIC_START_AT_FORM: MetricName = "sitehost_exporter_traffic_start_at_form";

const GAUGES: Readonly<Record<TrafficMetric, MetricName>> = {
  requests_persec: "sitehost_site_requests_per_second",
  response_bytes_persec: "sitehost_site_response_bytes_per_second",
};

/** The per-second gauges: the rates of the newest complete period. */
export function collectTraffic(site: SiteRef, result: MetricsResult): Sample[] {
  return trafficGauges(site, readTrafficAnswer(result));
}

export function trafficGauges(site: SiteRef, answer: TrafficAnswer | undefined): Sample[] {
  const period = answer?.complete[answer.complete.length - 1];
  if (!period) return [];
  const out: Sample[] = [];
  const rates = periodRates(period);
  for (const metric of TRAFFIC_METRICS) {
    for (const cached of CACHE_STATES) {
      const value = rates[metric][cached];
      if (value !== undefined) out.push(sampleFor(site, GAUGES[metric], { cached }, value));
    }
  }
  return out;
}

const COUNTERS: Readonly<Record<"requests" | "bytes", MetricName>> = {
  requests: "sitehost_site_requests_total",
  bytes: "sitehost_site_response_bytes_total",
};

/** The counters of one site: both cache statuses, from zero, once counting has begun. */
export function trafficCounters(site: SiteRef, counts: SiteTrafficCounts | undefined): Sample[] {
  if (!counts) return [];
  const out: Sample[] = [];
  for (const total of ["requests", "bytes"] as const) {
    for (const cached of ["true", "false"] as const) {
      out.push(sampleFor(site, COUNTERS[total], { cached }, counts[total][cached]));
    }
  }
  return out;
}

export interface TrafficInput {
  answer: TrafficAnswer | undefined;
  counts: SiteTrafficCounts | undefined;
}

/**
 * The `traffic` collector: one request per site asked (adaptive polling decides which), the
 * per-second gauges of the newest complete period, and the counters of every settled period once
 * (trafficCounts.ts), kept across restarts (trafficState.ts): the runner publishes a run's samples
 * only after `commit` saved what it counted.
 */
export class TrafficCollector implements SiteCollector<TrafficInput> {
  readonly scope = "site";
  readonly name = "traffic";
  readonly requestsPerSite = 1;
  private readonly polling: TrafficPolling;
  private sites = new Map<number, SiteTrafficCounts>();
  private missedPeriods = 0;
  private changed = false;
  private readonly startAt = new StartAtChoice();

  constructor(private readonly env: TrafficEnv) {
    this.polling = new TrafficPolling(env.polling);
  }

  /** Resume from the saved counters. */
  async resume(): Promise<void> {
    const saved = await this.env.state.load();
    if (!saved) return;
    this.sites = saved.sites;
    this.missedPeriods = saved.missedPeriods;
  }

  due(site: Site, nowMs: number): boolean {
    return this.polling.due(site.id, nowMs);
  }

  /** The sites due at the next run. */
  requestsPerRun(sites: readonly Site[]): number {
    const now = this.env.now();
    return sites.filter((s) => this.polling.due(s.id, now)).length;
  }

  /** At steady state: busy live sites at every run, the others as adaptive polling spaces them. */
  plannedRequestsPerRun(sites: readonly Site[]): number {
    return this.polling.requestsPerRun(sites);
  }

  async fetch(api: SourcedApi, site: Site, signal: AbortSignal): Promise<TrafficInput> {
    const result = await this.ask(api, site, signal);
    const answer = readTrafficAnswer(result);
    if (!answer) return { answer, counts: this.sites.get(site.id) };
    const outcome = countPeriods(this.sites.get(site.id), answer);
    if (outcome.counts && (outcome.counted > 0 || !this.sites.has(site.id))) {
      this.sites.set(site.id, outcome.counts);
      this.changed = true;
    }
    if (outcome.missed > 0) {
      this.missedPeriods += outcome.missed;
      this.changed = true;
    }
    const window = answer.windowStart === undefined ? undefined : answer.end - answer.windowStart;
    this.polling.answered(site, this.env.now(), outcome.busy, window);
    return { answer, counts: outcome.counts };
  }

  /** One request in the form in use; when refused, the others in turn for the same site (fails safe). */
  private async ask(api: SourcedApi, site: Site, signal: AbortSignal): Promise<MetricsResult> {
    const request = (form: StartAtForm) =>
      api.trafficMetrics({ id: site.id, query: trafficQuery(form, this.env.now()) }, { signal });
    const first = this.startAt.current;
    try {
      return await request(first);
    } catch (err) {
      if (!refusesStartAt(err)) throw err;
      for (const form of this.startAt.after(first)) {
        try {
          const result = await request(form);
          this.startAt.use(form, first);
          return result;
        } catch (other) {
          if (!refusesStartAt(other)) throw other;
        }
      }
      throw err; // every form refused: the site's, not the form's
    }
  }

  collect(site: Site, input: TrafficInput): Sample[] {
    return [...trafficGauges(site, input.answer), ...trafficCounters(site, input.counts)];
  }

  /** Save what the run counted (before its samples are published). */
  async commit(): Promise<void> {
    if (!this.changed) return;
    this.changed = false;
    try {
      await this.env.state.save({ sites: this.sites, missedPeriods: this.missedPeriods });
    } catch (err) {
      this.changed = true;
      throw err;
    }
  }

  /** Forget sites no longer selected; the periods missed since counting began. */
  summary(sites: readonly Site[]): Sample[] {
    const selected = new Set(sites.map((s) => s.id));
    this.polling.retain(selected);
    for (const id of this.sites.keys()) {
      if (!selected.has(id)) {
        this.sites.delete(id);
        this.changed = true;
      }
    }
    return [
      { name: TRAFFIC_PERIODS_MISSED, labels: {}, value: this.missedPeriods },
      ...START_AT_FORM_NAMES.map((form) => ({
        name: TRAFFIC_START_AT_FORM,
        labels: { form },
        value: form === this.startAt.current ? 1 : 0,
      })),
    ];
  }
}
