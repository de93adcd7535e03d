/** Adaptive traffic polling: who is asked at which run, and what the plan expects of it at steady state. */
import { describe, expect, it } from "vitest";
import { TrafficPolling } from "../../../src/collectors/trafficPolling.js";
import { makeSite } from "./fixtures.js";

const RUN = 300_000; // the default schedule: every 5 minutes
const MAX = 900_000; // collectors.traffic.maxInterval: 15 minutes

/** The runs (0, 1, 2, ...) at which the site is asked over `runs` runs, given whether each answer was busy. */
function askedAt(
  polling: TrafficPolling,
  site: ReturnType<typeof makeSite>,
  runs: number,
  busy: (run: number) => boolean,
) {
  const asked: number[] = [];
  for (let run = 0; run < runs; run++) {
    const now = run * RUN;
    if (!polling.due(site.id, now)) continue;
    asked.push(run);
    polling.answered(site, now + 2_000, busy(run), 3600);
  }
  return asked;
}

describe("adaptive traffic polling", () => {
  it("asks a busy live site at every run", () => {
    const polling = new TrafficPolling({ runEveryMs: RUN, maxIntervalMs: MAX });
    expect(askedAt(polling, makeSite(1), 12, () => true)).toEqual([...Array(12).keys()]);
  });

  it("backs an idle live site off, twice as long each time up to the ceiling, and comes back at once when busy", () => {
    const polling = new TrafficPolling({ runEveryMs: RUN, maxIntervalMs: MAX });
    const site = makeSite(1);
    const asked = askedAt(polling, site, 30, (run) => run >= 20);
    const idle = asked.filter((r) => r < 20);
    const gaps = idle.slice(1).map((r, i) => r - (idle[i] as number));
    // The first wait is two runs (10 minutes, less the site's spread), then three (the 15-minute ceiling).
    expect(gaps[0]).toBe(2);
    expect(gaps.every((g) => g >= 2 && g <= 3)).toBe(true);
    expect(idle.length).toBeLessThanOrEqual(8); // at every run it would be 20
    // The first answer that shows requests brings it back to every run.
    const back = asked.find((r) => r >= 20) as number;
    expect(back - 20).toBeLessThanOrEqual(3);
    expect(asked.filter((r) => r >= back)).toEqual([...Array(30 - back).keys()].map((i) => back + i));
  });

  it("asks staging, sandbox and kit sites at the ceiling even when they are busy", () => {
    const polling = new TrafficPolling({ runEveryMs: 60_000, maxIntervalMs: MAX });
    const staging = makeSite(7, { staging: true });
    const asked: number[] = [];
    for (let run = 0; run < 60; run++) {
      if (!polling.due(staging.id, run * 60_000)) continue;
      asked.push(run);
      polling.answered(staging, run * 60_000, true, 3600);
    }
    // 15 minutes, shortened by up to a fifth for this site: four or five asks an hour, never more than 15 apart.
    expect(asked.length).toBeGreaterThanOrEqual(4);
    expect(asked.length).toBeLessThanOrEqual(5);
    expect(Math.max(...asked.slice(1).map((r, i) => r - (asked[i] as number)))).toBeLessThanOrEqual(15);
  });

  it("never waits beyond what the window covers, whatever the ceiling", () => {
    const polling = new TrafficPolling({ runEveryMs: 60_000, maxIntervalMs: 45 * 60_000 });
    const kit = makeSite(9, { kit: true });
    polling.answered(kit, 0, false, 1800); // an answer that covers half an hour
    // 30 minutes less the settle delay (2) and two runs (2): due again within 26 minutes.
    expect(polling.due(kit.id, 26 * 60_000)).toBe(true);
  });

  it("plans busy sites at every run and the others at their waits", () => {
    const polling = new TrafficPolling({ runEveryMs: RUN, maxIntervalMs: MAX });
    const busy = makeSite(1);
    const idle = makeSite(2, { staging: true });
    const fresh = makeSite(3);
    polling.answered(busy, 0, true, 3600);
    polling.answered(idle, 0, false, 3600);
    const perRun = polling.requestsPerRun([busy, idle, fresh]);
    // busy 1 + fresh 1 + staging between 1/3 (15 minutes) and 5/12 (12 minutes).
    expect(perRun).toBeGreaterThanOrEqual(2 + 1 / 3);
    expect(perRun).toBeLessThanOrEqual(2 + 5 / 12);
  });
});
