/**
 * The traffic collector in the runner: a run asks only the sites that are due, and its samples are
 * published only once what it counted is saved, so a published counter is never ahead of what a
 * restart resumes from.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Account, MetricsResult } from "../../../src/api/schemas.js";
import {
  trafficStateFile,
  TRAFFIC_STATE_FILE,
  type TrafficState,
  type TrafficStateStore,
} from "../../../src/collectors/trafficState.js";
import { ConfigSchema } from "../../../src/config/schema.js";
import { makeSite } from "../collectors/fixtures.js";
import { collectionFor } from "../../helpers/collection.js";
import { fakeApi, list } from "../../helpers/fakeApi.js";

const account: Account = {
  maxSites: 10,
  capacity: { sites: { maxBillable: 8, maxStaging: 2, billable: 1, staging: 0, total: 1 } },
};

/** An hour of one-minute periods ending at `endAt`; site 1 busy, site 2 without a request. */
function answer(siteId: number, endAt: number): MetricsResult {
  const periods = [];
  for (let ts = endAt - 3600; ts < endAt; ts += 60) {
    const rps = siteId === 1 ? 2 : 0;
    periods.push({ timestamp: ts, page_is_cached: { requests_persec: { true: rps, false: rps / 2 } } });
  }
  return { search: { startAt: endAt - 3600, endAt, resolution: 60 }, periods };
}

function setup(state: TrafficStateStore) {
  const clock = { ms: Date.UTC(2026, 10, 22, 12, 0, 30) };
  const asked: number[] = [];
  const api = fakeApi({
    account: async () => account,
    allSites: async () => list([makeSite(1), makeSite(2)]),
    trafficMetrics: async ({ id }) => {
      asked.push(id);
      return answer(id, Math.floor(clock.ms / 1000));
    },
  });
  const config = ConfigSchema.parse({ collectors: { traffic: { schedule: "0 * * * * *" } } });
  const { runner, store } = collectionFor(config, api, { now: () => clock.ms, trafficState: state });
  const counter = (siteId: number) =>
    store
      .render()
      .match(
        new RegExp(
          `^sitehost_site_requests_total\\{site_id="${siteId}",site="site-${siteId}",cached="true"\\} (\\S+)$`,
          "m",
        ),
      )?.[1];
  return { clock, asked, runner, store, counter };
}

class GatedState implements TrafficStateStore {
  readonly location = "memory";
  saved: TrafficState | undefined;
  fail: Error | undefined;
  private open: (() => void) | undefined;
  gate: Promise<void> | undefined;
  hold(): void {
    this.gate = new Promise((r) => (this.open = r));
  }
  release(): void {
    this.gate = undefined;
    this.open?.();
  }
  async load() {
    return this.saved;
  }
  async save(state: TrafficState) {
    if (this.gate) await this.gate;
    if (this.fail) throw this.fail;
    this.saved = structuredClone(state);
  }
}

describe("the traffic run", () => {
  it("publishes what it counted only after it was saved; a failed save publishes nothing new", async () => {
    const state = new GatedState();
    const t = setup(state);
    await t.runner.run("inventory");
    expect((await t.runner.run("traffic")).result).toBe("success");
    expect(t.counter(1)).toBe("0");
    t.clock.ms += 60_000;
    state.hold();
    const run = t.runner.run("traffic");
    await new Promise((r) => setImmediate(r));
    expect(t.counter(1)).toBe("0"); // counted, not yet saved: not published
    state.release();
    await run;
    expect(t.counter(1)).toBe(String(2 * 60));
    expect(state.saved?.sites.get(1)?.requests.true).toBe(2 * 60);

    state.fail = new Error("ENOSPC: no space left on device");
    t.clock.ms += 60_000;
    expect((await t.runner.run("traffic")).result).toBe("failure");
    expect(t.counter(1)).toBe(String(2 * 60));
    state.fail = undefined;
    t.clock.ms += 60_000;
    await t.runner.run("traffic");
    expect(t.counter(1)).toBe(String(3 * 2 * 60)); // the period of the failed run is in, once
  });

  it("asks only the sites that are due: the idle one is left out of the next runs", async () => {
    const state = new GatedState();
    const t = setup(state);
    await t.runner.run("inventory");
    await t.runner.run("traffic");
    expect(t.asked.sort()).toEqual([1, 2]);
    t.asked.length = 0;
    t.clock.ms += 60_000;
    expect(t.runner.requestsPerRun("traffic")).toBe(1);
    await t.runner.run("traffic");
    expect(t.asked).toEqual([1]);
    // Its last samples stay.
    expect(t.counter(2)).toBe("0");
  });
});

describe("the traffic state file", () => {
  it("keeps the counters of each site and the missed periods, replaced whole", async () => {
    const dir = await mkdtemp(join(tmpdir(), "traffic-state-"));
    const file = trafficStateFile(dir);
    expect(await file.load()).toBeUndefined();
    const sites = new Map([
      [7, { through: 1_795_348_800, requests: { true: 12.5, false: 3 }, bytes: { true: 1e9, false: 0 } }],
    ]);
    await file.save({ sites, missedPeriods: 4 });
    expect(await file.load()).toEqual({ sites, missedPeriods: 4 });
  });

  it("a file that cannot be trusted is an error naming it and what is wrong", async () => {
    const dir = await mkdtemp(join(tmpdir(), "traffic-state-"));
    await writeFile(
      join(dir, TRAFFIC_STATE_FILE),
      '{"version":1,"missedPeriods":0,"sites":{"7":{"through":-1}}}',
    );
    await expect(trafficStateFile(dir).load()).rejects.toThrow(/traffic\.json: sites\.7\.through/);
    await writeFile(join(dir, TRAFFIC_STATE_FILE), "{not json");
    await expect(trafficStateFile(dir).load()).rejects.toThrow(/traffic\.json: not JSON/);
  });
});
