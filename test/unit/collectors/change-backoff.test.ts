/** Backing off for unchanged answers: at which runs a key is asked, and what the plan expects of it. */
import { describe, expect, it } from "vitest";
import { ChangeBackoff } from "../../../src/collectors/changeBackoff.js";

const RUN = 600_000; // the domains schedule: every 10 minutes
const HOUR = 3_600_000;

/** The runs (0, 1, 2, ...) at which `key` is asked over `runs` runs, given its answer at each. */
function askedAt(backoff: ChangeBackoff, key: number, runs: number, answer: (run: number) => unknown) {
  const asked: number[] = [];
  for (let run = 0; run < runs; run++) {
    const now = run * RUN;
    if (!backoff.due(key, now)) continue;
    asked.push(run);
    backoff.answered(key, answer(run), now + 3_000); // answers come a little after the run starts
  }
  return asked;
}

const gaps = (runs: number[]) => runs.slice(1).map((r, i) => r - (runs[i] as number));

describe("backing off for unchanged answers", () => {
  it("asks at every run while the answers change (the first answer counts as unchanged: two runs)", () => {
    const backoff = new ChangeBackoff({ runEveryMs: RUN, maxIntervalMs: HOUR });
    expect(askedAt(backoff, 1, 12, (run) => ({ version: run }))).toEqual([0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });

  it("waits twice as long after each unchanged answer, up to maxInterval, less at most a fifth", () => {
    for (const key of [1, 2, 3, 17, 404]) {
      const backoff = new ChangeBackoff({ runEveryMs: RUN, maxIntervalMs: HOUR });
      const asked = askedAt(backoff, key, 60, () => ({ healthy: true }));
      const waits = gaps(asked);
      // The first answer waits 2 runs, then 4 runs (less the spread), then the hour.
      expect(waits[0]).toBe(2);
      expect(waits[1]).toBeGreaterThanOrEqual(3);
      expect(waits[1]).toBeLessThanOrEqual(4);
      for (const w of waits.slice(2)) {
        expect(w).toBeGreaterThanOrEqual(5); // an hour less a fifth: 48 minutes, the run nearest
        expect(w).toBeLessThanOrEqual(6);
      }
      expect(asked.length).toBeLessThan(15); // 60 runs: about ten hours at every run, 60 requests
    }
  });

  it("comes back to every run at the first changed answer", () => {
    const backoff = new ChangeBackoff({ runEveryMs: RUN, maxIntervalMs: HOUR });
    const asked = askedAt(backoff, 1, 40, (run) => ({ healthy: run < 20 }));
    const afterChange = asked.filter((r) => r >= 20);
    // The change is seen at the first read at or after run 20, the next read comes one run later.
    expect((afterChange[0] as number) - 20).toBeLessThanOrEqual(6);
    expect(afterChange[1]).toBe((afterChange[0] as number) + 1);
  });

  it("a wake asks at the next run; an unchanged answer then waits as long as before", () => {
    const backoff = new ChangeBackoff({ runEveryMs: RUN, maxIntervalMs: HOUR });
    askedAt(backoff, 1, 30, () => "same"); // backed off to the hour
    expect(backoff.due(1, 30 * RUN)).toBe(false);
    backoff.wake(1);
    expect(backoff.due(1, 30 * RUN)).toBe(true);
    backoff.answered(1, "same", 30 * RUN);
    expect(backoff.due(1, 31 * RUN)).toBe(false);
    backoff.wakeAll();
    expect(backoff.due(1, 31 * RUN)).toBe(true);
  });

  it("a maxInterval at or under the schedule's interval asks at every run, even on one clock", () => {
    const backoff = new ChangeBackoff({ runEveryMs: RUN, maxIntervalMs: 1_000 });
    for (let i = 0; i < 5; i++) {
      expect(backoff.due(1, 0)).toBe(true);
      backoff.answered(1, "same", 0);
    }
    expect(backoff.share(1)).toBe(1);
  });

  it("plans each key at its share of the runs, a new one at every run", () => {
    const backoff = new ChangeBackoff({ runEveryMs: RUN, maxIntervalMs: HOUR });
    expect(backoff.share(1)).toBe(1);
    askedAt(backoff, 1, 60, () => "same");
    expect(backoff.share(1)).toBeCloseTo(RUN / HOUR, 5);
    backoff.answered(1, "other", 60 * RUN);
    expect(backoff.share(1)).toBe(1);
  });

  it("spreads keys that back off together over the runs", () => {
    const backoff = new ChangeBackoff({ runEveryMs: RUN, maxIntervalMs: 4 * HOUR });
    const perRun = new Map<number, number>();
    for (let key = 1; key <= 500; key++) {
      for (const run of askedAt(backoff, key, 100, () => "same").filter((r) => r >= 50))
        perRun.set(run, (perRun.get(run) ?? 0) + 1);
    }
    // At 4 hours (24 runs), 500 keys ask about 21 a run; never all at one run.
    expect(Math.max(...perRun.values())).toBeLessThan(100);
  });

  it("forgets keys no longer asked about", () => {
    const backoff = new ChangeBackoff({ runEveryMs: RUN, maxIntervalMs: HOUR });
    askedAt(backoff, 1, 30, () => "same");
    backoff.retain((key) => key !== 1);
    expect(backoff.due(1, 30 * RUN)).toBe(true);
  });
});
