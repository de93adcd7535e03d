/**
 * Traffic as counters: every complete period counted exactly once, however the polls fall. A fake
 * traffic endpoint (built to the platform's description: an hour of one-minute periods, the newest
 * still filling and revised until it settles) holds the ground truth; the collector is polled at
 * uneven times, with skipped runs, an outage longer than a run, restarts that resume from the saved
 * state, and a gap longer than the window.
 */
import { describe, expect, it } from "vitest";
import type { MetricsResult, Site } from "../../../src/api/schemas.js";
import type { SourcedApi } from "../../../src/api/sourced.js";
import { TrafficCollector, type TrafficInput } from "../../../src/collectors/traffic.js";
import { countPeriods, TRAFFIC_SETTLE_SECONDS } from "../../../src/collectors/trafficCounts.js";
import { readTrafficAnswer } from "../../../src/collectors/trafficPeriods.js";
import type { TrafficState, TrafficStateStore } from "../../../src/collectors/trafficState.js";
import { makeSite } from "./fixtures.js";

const MINUTE = 60;
const T0 = 1_795_348_800; // 2026-11-22T12:00:00Z, epoch seconds

/** Ground truth: per-minute rates from a seeded generator; a period's values move until it is 90 s old. */
class FakeTrafficEndpoint {
  nowSec = T0;
  calls = 0;
  down = false;

  rate(start: number, cached: boolean): number {
    const x = Math.sin(start * 12.9898 + (cached ? 78.233 : 39.425)) * 43_758.5453;
    return Math.round((x - Math.floor(x)) * 20 * 1000) / 1000; // 0 to 20 requests/s, 3 decimals
  }

  /** Requests of the periods that start in [from, to), as the counters should have them. */
  truth(from: number, to: number): { true: number; false: number } {
    let t = 0;
    let f = 0;
    for (let s = from; s < to; s += MINUTE) {
      t += this.rate(s, true) * MINUTE;
      f += this.rate(s, false) * MINUTE;
    }
    return { true: t, false: f };
  }

  answer(): MetricsResult {
    this.calls += 1;
    if (this.down) throw new Error("the platform is down");
    const endAt = this.nowSec;
    const startAt = endAt - 3600;
    const periods: unknown[] = [];
    for (let ts = Math.floor(startAt / MINUTE) * MINUTE; ts <= endAt; ts += MINUTE) {
      // Young periods are still being filled and revised: partial values, differing from the final ones.
      const age = endAt - (ts + MINUTE);
      const share = age >= 90 ? 1 : Math.max(0.1, Math.min(0.95, (endAt - ts) / (MINUTE + 90)));
      const r = (cached: boolean) => Math.round(this.rate(ts, cached) * share * 1000) / 1000;
      periods.push({
        timestamp: ts,
        page_is_cached: {
          requests_persec: { true: r(true), false: r(false) },
          response_bytes_persec: { true: r(true) * 1000, false: r(false) * 1000 },
        },
      });
    }
    return { search: { startAt, endAt, resolution: MINUTE }, periods };
  }
}

class MemoryState implements TrafficStateStore {
  readonly location = "memory";
  saved: TrafficState | undefined;
  saves = 0;
  async load() {
    return this.saved && structuredClone(this.saved);
  }
  async save(state: TrafficState) {
    this.saves += 1;
    this.saved = structuredClone(state);
  }
}

function setup() {
  const endpoint = new FakeTrafficEndpoint();
  const state = new MemoryState();
  const site: Site = makeSite(1);
  const api = {
    source: "traffic",
    trafficMetrics: async () => endpoint.answer(),
  } as unknown as SourcedApi;
  const make = () =>
    new TrafficCollector({
      now: () => endpoint.nowSec * 1000,
      polling: { runEveryMs: 60_000, maxIntervalMs: 900_000 },
      state,
    });
  let collector = make();
  /** One poll as the runner makes it: fetch, commit, then the samples are published. */
  const poll = async () => {
    let input: TrafficInput;
    try {
      input = await collector.fetch(api, site, new AbortController().signal);
    } catch {
      return undefined;
    }
    await collector.commit();
    return collector.collect(site, input);
  };
  const value = (samples: ReturnType<TrafficCollector["collect"]> | undefined, cached: string) =>
    samples?.find((s) => s.name === "sitehost_site_requests_total" && s.labels.cached === cached)?.value;
  const restart = async () => {
    collector = make();
    await collector.resume();
  };
  return { endpoint, state, poll, value, restart };
}

describe("traffic counters", () => {
  it("start at zero from the newest settled period, then count each period once it settled", async () => {
    const t = setup();
    t.endpoint.nowSec = T0 + 30;
    const first = await t.poll();
    expect(t.value(first, "true")).toBe(0);
    // The newest settled period ended at least the settle delay before the answer's end.
    const startedAt = Math.floor((T0 + 30 - TRAFFIC_SETTLE_SECONDS) / MINUTE) * MINUTE;
    t.endpoint.nowSec += MINUTE;
    const second = await t.poll();
    expect(t.value(second, "true")).toBeCloseTo(t.endpoint.truth(startedAt, startedAt + MINUTE).true, 6);
  });

  it("count every period exactly once across uneven polls, skipped runs, an outage, restarts and revisions", async () => {
    const t = setup();
    t.endpoint.nowSec = T0 + 17;
    await t.poll();
    const from = Math.floor((T0 + 17 - TRAFFIC_SETTLE_SECONDS) / MINUTE) * MINUTE;
    // Polls every 40 s to 7 minutes apart (runs skipped), a 20-minute outage, two restarts.
    const steps = [40, 60, 61, 59, 420, 60, 90, 30, 300, 60, 55, 65, 60];
    for (const step of steps) {
      t.endpoint.nowSec += step;
      await t.poll();
    }
    t.endpoint.down = true;
    for (let i = 0; i < 20; i++) {
      t.endpoint.nowSec += MINUTE;
      expect(await t.poll()).toBeUndefined();
    }
    t.endpoint.down = false;
    await t.restart();
    t.endpoint.nowSec += 45;
    await t.poll();
    for (const step of [60, 60, 240]) {
      t.endpoint.nowSec += step;
      await t.poll();
    }
    await t.restart();
    t.endpoint.nowSec += 600;
    const last = await t.poll();
    const to = Math.floor((t.endpoint.nowSec - TRAFFIC_SETTLE_SECONDS) / MINUTE) * MINUTE;
    const truth = t.endpoint.truth(from, to);
    expect(t.value(last, "true")).toBeCloseTo(truth.true, 6);
    expect(t.value(last, "false")).toBeCloseTo(truth.false, 6);
    expect(t.state.saved?.missedPeriods).toBe(0);
  });

  it("a gap longer than the window counts what the answer still has and the periods that left it as missed", async () => {
    const t = setup();
    t.endpoint.nowSec = T0;
    await t.poll();
    const from = Math.floor((T0 - TRAFFIC_SETTLE_SECONDS) / MINUTE) * MINUTE;
    t.endpoint.nowSec += 90 * MINUTE; // an hour and a half without an answer
    const after = await t.poll();
    const windowStart = t.endpoint.nowSec - 3600;
    const to = Math.floor((t.endpoint.nowSec - TRAFFIC_SETTLE_SECONDS) / MINUTE) * MINUTE;
    expect(t.value(after, "true")).toBeCloseTo(t.endpoint.truth(windowStart, to).true, 6);
    expect(t.state.saved?.missedPeriods).toBe((windowStart - from) / MINUTE);
  });

  it("without saved counters a restart begins again at zero and never counts a period twice", async () => {
    const t = setup();
    t.endpoint.nowSec = T0;
    await t.poll();
    t.endpoint.nowSec += 5 * MINUTE;
    await t.poll();
    t.state.saved = undefined; // a directory that was not kept
    await t.restart();
    t.endpoint.nowSec += 5 * MINUTE;
    expect(t.value(await t.poll(), "true")).toBe(0);
  });

  it("a period that is complete but not settled is not counted yet, whatever it shows now", () => {
    const answer = readTrafficAnswer({
      search: { startAt: T0 - 3600, endAt: T0, resolution: MINUTE },
      periods: [
        { timestamp: T0 - 240, page_is_cached: { requests_persec: { true: 1, false: 0 } } },
        { timestamp: T0 - 180, page_is_cached: { requests_persec: { true: 2, false: 0 } } },
        { timestamp: T0 - 120, page_is_cached: { requests_persec: { true: 4, false: 0 } } },
        { timestamp: T0 - 60, page_is_cached: { requests_persec: { true: 8, false: 0 } } },
      ],
    });
    if (!answer) throw new Error("no answer");
    const previous = { through: T0 - 240, requests: { true: 0, false: 0 }, bytes: { true: 0, false: 0 } };
    // Periods ending by T0 - 120 are settled: the one at T0 - 240 (ends T0 - 180) and T0 - 180.
    const outcome = countPeriods(previous, answer);
    expect(outcome.counted).toBe(2);
    expect(outcome.counts?.requests.true).toBe((1 + 2) * MINUTE);
    expect(outcome.counts?.through).toBe(T0 - 120);
  });
});
