/**
 * When streams are read (fake clock): an idle stream backs off to logs.maxPollInterval and costs at
 * most 15 reads an hour at the defaults; a stream that finds entries comes back by its arrival rate
 * (logs.pollInterval while its rate is unknown or high, logs.maxPollInterval for a few entries an
 * hour); hints only shorten a wait; one that stopped at the page cap goes again at once; when reads
 * cannot keep up, the most overdue stream goes first, so all fall behind alike and none waits forever.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { LogScheduler, type ScheduledStream } from "../../../src/logs/scheduler.js";
import type { ReadOutcome } from "../../../src/logs/tailer.js";

afterEach(() => vi.useRealTimers());

const clock = { now: () => Date.now() };
const FAKE: Array<"setTimeout" | "clearTimeout" | "Date"> = ["setTimeout", "clearTimeout", "Date"];
const S = 1000;
const MIN = 60 * S;

/** A stream whose reads take `takesMs` and answer `outcome()`; it records when each read started. */
function stream(
  key: string,
  outcome: () => ReadOutcome,
  takesMs = 100,
): ScheduledStream & { starts: number[] } {
  const starts: number[] = [];
  return {
    key,
    scheduleSlot: -1,
    starts,
    read: async (signal) => {
      starts.push(Date.now());
      await new Promise((resolve, reject) => {
        const timer = setTimeout(resolve, takesMs);
        signal.addEventListener("abort", () => {
          clearTimeout(timer);
          reject(signal.reason as Error);
        });
      });
      return outcome();
    },
  };
}

function scheduler(workers = 4, paused = () => false, pollMs = 30 * S) {
  return new LogScheduler({ workers, pollMs, maxPollMs: 5 * MIN, clock, random: () => 0.5, paused });
}

/** The times between a stream's read starts. */
const gapsOf = (starts: readonly number[]) => starts.slice(1).map((t, i) => t - (starts[i] as number));

describe("adaptive polling", () => {
  it("an idle stream doubles its wait up to maxPollInterval: at most 15 reads an hour", async () => {
    vi.useFakeTimers({ now: 1_000_000_000, toFake: FAKE });
    const s = scheduler();
    const idle = stream("1/php", () => ({ kind: "empty" }));
    s.add(idle);
    await vi.advanceTimersByTimeAsync(60 * MIN);
    expect(idle.starts.length).toBeGreaterThanOrEqual(12);
    expect(idle.starts.length).toBeLessThanOrEqual(15);
    // Waits: 60 s, 120 s, 240 s, then 300 s (each shortened by at most a tenth).
    const gaps = idle.starts.slice(1).map((t, i) => t - (idle.starts[i] as number));
    expect(gaps[0]).toBeGreaterThanOrEqual(54 * S);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(5 * MIN + 1 * S);
    expect(gaps.slice(-3).every((g) => g >= 4.5 * MIN)).toBe(true);
    await s.stop();
  });

  it("a stream that finds entries comes back after pollInterval; one with more waiting goes again at once", async () => {
    vi.useFakeTimers({ now: 1_000_000_000, toFake: FAKE });
    const s = scheduler();
    const busy = stream("1/server", () => ({ kind: "found", shipped: 10 }));
    let n = 0;
    const backlog = stream("2/server", () =>
      ++n <= 3 ? { kind: "more", shipped: 1000 } : { kind: "empty" },
    );
    s.add(busy);
    s.add(backlog);
    await vi.advanceTimersByTimeAsync(5 * MIN);
    const gaps = gapsOf(busy.starts);
    expect(gaps.every((g) => g >= 27 * S && g <= 30 * S + 100)).toBe(true);
    // The backlog's first four reads follow each other directly.
    expect((backlog.starts[3] as number) - (backlog.starts[0] as number)).toBeLessThanOrEqual(400);
    await s.stop();
  });

  it("a stream that found entries after idling returns to pollInterval", async () => {
    vi.useFakeTimers({ now: 1_000_000_000, toFake: FAKE });
    const s = scheduler();
    let found = false;
    const st = stream("1/php", () => (found ? { kind: "found", shipped: 1 } : { kind: "empty" }));
    s.add(st);
    await vi.advanceTimersByTimeAsync(20 * MIN); // backed off to 5 minutes
    found = true;
    await vi.advanceTimersByTimeAsync(6 * MIN);
    const last = st.starts.slice(-3);
    expect((last[2] as number) - (last[1] as number)).toBeLessThanOrEqual(30 * S + 100);
    await s.stop();
  });

  it("a nudge brings a backed-off stream back within pollInterval", async () => {
    vi.useFakeTimers({ now: 1_000_000_000, toFake: FAKE });
    const s = scheduler();
    const st = stream("1/server", () => ({ kind: "empty" }));
    s.add(st);
    await vi.advanceTimersByTimeAsync(20 * MIN);
    const before = st.starts.length;
    const lastRead = st.starts.at(-1) as number;
    s.nudge(st);
    await vi.advanceTimersByTimeAsync(Math.max(0, lastRead + 30 * S - Date.now()) + 200);
    expect(st.starts.length).toBe(before + 1);
  });

  it("a stream whose reads find nothing backs off as an idle one, whatever the traffic hints say", async () => {
    vi.useFakeTimers({ now: 1_000_000_000, toFake: FAKE });
    const s = scheduler();
    const st = stream("1/server", () => ({ kind: "empty" }));
    s.add(st);
    // The site serves traffic (all from the edge cache): a hint every minute for an hour.
    for (let minute = 0; minute < 60; minute++) {
      await vi.advanceTimersByTimeAsync(MIN);
      s.nudge(st);
    }
    // An idle stream's 15 reads an hour, and the one early read the first hint bought.
    expect(st.starts.length).toBeLessThanOrEqual(16);
    await s.stop();
  });

  it("a hint counts again after a read found entries; a hinted read that found little mutes hints for an hour", async () => {
    vi.useFakeTimers({ now: 1_000_000_000, toFake: FAKE });
    const s = scheduler();
    // A quiet stream (read every 5 minutes by its rate) whose reads find what `next` says, once.
    const pace = { ratePerSecond: 7 / 3600, rereadMs: 1000, pageSize: 200 };
    const quiet: ReadOutcome = { kind: "empty", pace };
    let next: ReadOutcome = quiet;
    const st = stream("1/server", () => {
      const outcome = next;
      next = quiet;
      return outcome;
    });
    s.add(st);
    await vi.advanceTimersByTimeAsync(20 * MIN);
    /** Nudge as a surge of uncached requests would; whether a read came before its regular time. */
    const honoured = async (): Promise<boolean> => {
      const before = st.starts.length;
      const lastRead = st.starts.at(-1) as number;
      s.nudge(st, 30 * S);
      await vi.advanceTimersByTimeAsync(Math.max(0, lastRead + 30 * S - Date.now()) + 200);
      return st.starts.length > before;
    };
    // The hinted read finds a quarter page: the hint was right, and the next one counts.
    next = { kind: "found", shipped: 60, pace };
    expect(await honoured()).toBe(true);
    expect(await honoured()).toBe(true); // this one finds nothing: hints muted for an hour
    next = { kind: "found", shipped: 5, pace };
    await vi.advanceTimersByTimeAsync(6 * MIN); // a regular read finds entries
    expect(await honoured()).toBe(false); // still within the hour
    await vi.advanceTimersByTimeAsync(60 * MIN);
    next = { kind: "found", shipped: 5, pace };
    await vi.advanceTimersByTimeAsync(6 * MIN);
    expect(await honoured()).toBe(true);
    await s.stop();
  });

  it("a busy stream is read at the interval that fills its pages; the plan sees it", async () => {
    vi.useFakeTimers({ now: 1_000_000_000, toFake: FAKE });
    const s = scheduler(2, undefined, 5 * S);
    const busy = stream("1/server", () => ({
      kind: "found",
      shipped: 144,
      pace: { ratePerSecond: 36, rereadMs: 1000, pageSize: 200 },
    }));
    const idle = stream("2/server", () => ({ kind: "empty" }));
    s.add(busy);
    s.add(idle);
    await vi.advanceTimersByTimeAsync(3 * MIN);
    const gaps = gapsOf(busy.starts);
    // 4 s (one page of 36 × 5 + 1 entries), shortened by the spread of a twenty-fifth (here half of
    // it), plus the time the read takes.
    expect(gaps, String(gaps)).toSatisfy((all: number[]) => all.every((g) => g >= 3.95 * S && g <= 4.1 * S));
    const plan = s.polling();
    expect(plan.streams).toBe(2);
    expect(plan.atPollInterval).toBe(1);
    // The plan: the busy stream's reads as they came, and the idle one at its next wait (twice its
    // last gap: it found nothing again), shortened by the spread.
    const busyGap = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    const idleGap = (idle.starts.at(-1) as number) - (idle.starts.at(-2) as number);
    const idlePlanned = plan.readsPerSecond - S / busyGap;
    expect(idlePlanned).toBeGreaterThan(S / (2 * idleGap));
    expect(idlePlanned).toBeLessThan(S / (1.8 * idleGap));
    await s.stop();
  });

  it("the plan counts the time reads take: a stream whose reads last 3 s is read every 7.9 s, not 5", async () => {
    vi.useFakeTimers({ now: 1_000_000_000, toFake: FAKE });
    const s = scheduler(2, undefined, 5 * S);
    const slow = stream("1/server", () => ({ kind: "found", shipped: 10 }), 3 * S);
    s.add(slow);
    await vi.advanceTimersByTimeAsync(2 * MIN);
    const gaps = gapsOf(slow.starts);
    const observed = (S * gaps.length) / gaps.reduce((a, b) => a + b, 0);
    expect(observed).toBeCloseTo(1 / 7.9, 3);
    expect(s.polling().readsPerSecond / observed).toBeGreaterThan(0.95);
    expect(s.polling().readsPerSecond / observed).toBeLessThan(1.05);
    await s.stop();
  });

  it("a failing stream backs off, and recovers", async () => {
    vi.useFakeTimers({ now: 1_000_000_000, toFake: FAKE });
    const errors: unknown[] = [];
    const s = new LogScheduler({
      workers: 2,
      pollMs: 30 * S,
      maxPollMs: 5 * MIN,
      clock,
      random: () => 0.5,
      paused: () => false,
      onError: (_k, err) => errors.push(err),
    });
    let fail = true;
    const st: ScheduledStream & { starts: number[] } = {
      key: "1/php",
      scheduleSlot: -1,
      starts: [],
      read: async () => {
        st.starts.push(Date.now());
        if (fail) throw new Error("HTTP 503");
        return { kind: "found", shipped: 1 };
      },
    };
    s.add(st);
    await vi.advanceTimersByTimeAsync(2 * MIN);
    const gaps = st.starts.slice(1).map((t, i) => t - (st.starts[i] as number));
    expect(gaps.length).toBeGreaterThan(2);
    expect(gaps.at(-1) as number).toBeGreaterThan(gaps[0] as number);
    expect(errors.length).toBe(st.starts.length);
    fail = false;
    await vi.advanceTimersByTimeAsync(10 * MIN);
    expect(st.starts.length).toBeGreaterThan(gaps.length + 10);
    await s.stop();
  });
});

describe("polling by arrival rate", () => {
  const trickle = (rate: number) => ({ ratePerSecond: rate, rereadMs: 1000, pageSize: 200 });

  it("a stream with a few entries an hour is read every maxPollInterval, not pulled back by each entry", async () => {
    vi.useFakeTimers({ now: 1_000_000_000, toFake: FAKE });
    const s = scheduler();
    // About 7 entries an hour: every read at 5 minutes finds one with a chance of about 0.6.
    let n = 0;
    const st = stream("1/php", (): ReadOutcome =>
      ++n % 5 < 3
        ? { kind: "found", shipped: 1, pace: trickle(7 / 3600) }
        : { kind: "empty", pace: trickle(7 / 3600) },
    );
    s.add(st);
    await vi.advanceTimersByTimeAsync(60 * MIN);
    // One an hour more than 12 for the first read; before, each entry pulled it back to 30 s.
    expect(st.starts.length).toBeLessThanOrEqual(13);
    expect(Math.min(...gapsOf(st.starts))).toBeGreaterThanOrEqual(4.5 * MIN);
    await s.stop();
  });

  it("a stream between trickle and busy is read when a quarter page has arrived", async () => {
    vi.useFakeTimers({ now: 1_000_000_000, toFake: FAKE });
    const s = scheduler();
    const st = stream("1/php", () => ({ kind: "found", shipped: 50, pace: trickle(0.5) }));
    s.add(st);
    await vi.advanceTimersByTimeAsync(20 * MIN);
    // 100 s, shortened by the spread (here by half of a twenty-fifth).
    expect(gapsOf(st.starts).every((g) => g >= 98 * S && g <= 98 * S + 200)).toBe(true);
    await s.stop();
  });

  it("a stream that wakes up (its reads find many entries) is back at pollInterval after one read", async () => {
    vi.useFakeTimers({ now: 1_000_000_000, toFake: FAKE });
    const s = scheduler();
    let rate = 7 / 3600;
    const st = stream("1/php", () => ({
      kind: "found",
      shipped: Math.ceil(rate * 300),
      pace: trickle(rate),
    }));
    s.add(st);
    await vi.advanceTimersByTimeAsync(20 * MIN);
    rate = 3; // errors pour in
    const reads = st.starts.length;
    await vi.advanceTimersByTimeAsync(5 * MIN + 31 * S);
    const gaps = gapsOf(st.starts.slice(reads));
    expect(gaps.length).toBeGreaterThanOrEqual(1);
    expect(gaps.every((g) => g <= 30 * S + 200)).toBe(true);
    await s.stop();
  });

  it("a traffic hint brings a stream forward only when its rate would read the stream twice as often", async () => {
    vi.useFakeTimers({ now: 1_000_000_000, toFake: FAKE });
    const s = scheduler();
    const st = stream("1/server", () => ({ kind: "found", shipped: 1, pace: trickle(7 / 3600) }));
    s.add(st);
    await vi.advanceTimersByTimeAsync(10 * MIN); // at 5 minutes
    const lastRead = st.starts.at(-1) as number;
    s.nudge(st, 4 * MIN); // a few uncached requests: no change worth a read
    await vi.advanceTimersByTimeAsync(Math.max(0, lastRead + 31 * S - Date.now()));
    expect(st.starts.at(-1)).toBe(lastRead);
    s.nudge(st, 30 * S); // a surge of uncached requests
    await vi.advanceTimersByTimeAsync(1 * S);
    expect(st.starts.length).toBeGreaterThan(1);
    expect((st.starts.at(-1) as number) - lastRead).toBeLessThanOrEqual(31 * S + 200);
    await s.stop();
  });

  it("a woken stream is read within pollInterval and once more shortly after; otherwise at its own longest interval", async () => {
    vi.useFakeTimers({ now: 1_000_000_000, toFake: FAKE });
    const s = scheduler();
    const activity = { ...stream("1/activity", () => ({ kind: "empty" })), maxPollMs: 30 * MIN };
    s.add(activity);
    await vi.advanceTimersByTimeAsync(3 * 60 * MIN);
    // Backed off to its safety poll: at most two reads in the last hour.
    const lastHour = activity.starts.filter((t) => t > Date.now() - 60 * MIN);
    expect(lastHour.length).toBeLessThanOrEqual(2);
    const before = activity.starts.length;
    const wokenAt = Date.now();
    const lastRead = activity.starts.at(-1) as number;
    s.wake(activity); // a webhook event for the site
    await vi.advanceTimersByTimeAsync(Math.max(0, lastRead + 30 * S - wokenAt) + 200);
    expect(activity.starts.length).toBe(before + 1);
    await vi.advanceTimersByTimeAsync(60 * S + 200);
    expect(activity.starts.length).toBe(before + 2);
    await vi.advanceTimersByTimeAsync(20 * MIN);
    expect(activity.starts.length).toBe(before + 2);
    await s.stop();
  });

  it("an event during a read is caught by the read after it, shortly after", async () => {
    vi.useFakeTimers({ now: 1_000_000_000, toFake: FAKE });
    const s = scheduler();
    const activity = { ...stream("1/activity", () => ({ kind: "empty" }), 2 * S), maxPollMs: 30 * MIN };
    s.add(activity);
    await vi.advanceTimersByTimeAsync(60 * MIN);
    while (s.reading === 0) await vi.advanceTimersByTimeAsync(S);
    const during = activity.starts.length;
    s.wake(activity);
    await vi.advanceTimersByTimeAsync(2 * S + 60 * S + 200);
    expect(activity.starts.length).toBe(during + 1);
    await s.stop();
  });
});

describe("sharing the workers", () => {
  it("when reads cannot keep up, every stream falls behind alike; none waits forever", async () => {
    vi.useFakeTimers({ now: 1_000_000_000, toFake: FAKE });
    // 2 workers, reads of 1 s, 200 busy streams wanting a read every 30 s: capacity 2 reads/s, demand 6.7/s.
    const s = scheduler(2);
    const streams = Array.from({ length: 200 }, (_, i) =>
      stream(`${i}/server`, () => ({ kind: "found", shipped: 1 }), 1000),
    );
    for (const st of streams) s.add(st);
    await vi.advanceTimersByTimeAsync(20 * MIN);
    const counts = streams.map((st) => st.starts.length);
    // 2 reads/s for 1,200 s = 2,400 reads over 200 streams: 12 each, give or take one.
    expect(Math.min(...counts)).toBeGreaterThanOrEqual(11);
    expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
    await s.stop();
  });

  it("within capacity, no stream goes longer than maxPollInterval plus 30 s without a read", async () => {
    vi.useFakeTimers({ now: 1_000_000_000, toFake: FAKE });
    const s = scheduler(16);
    const streams = Array.from({ length: 3000 }, (_, i) =>
      stream(`${i}/php`, () => (i % 50 === 0 ? { kind: "found", shipped: 3 } : { kind: "empty" }), 150),
    );
    for (const st of streams) s.add(st, Date.now() + (i(st) % 5000));
    await vi.advanceTimersByTimeAsync(30 * MIN);
    let worst = 0;
    for (const st of streams) {
      const times = [...st.starts, Date.now()];
      for (let k = 1; k < times.length; k++)
        worst = Math.max(worst, (times[k] as number) - (times[k - 1] as number));
    }
    expect(worst).toBeLessThanOrEqual(5 * MIN + 30 * S);
    await s.stop();
  });

  it("a removed stream is never read again: its read in progress is aborted, a waiting one never starts", async () => {
    vi.useFakeTimers({ now: 1_000_000_000, toFake: FAKE });
    const s = scheduler();
    const reading = stream("1/php", () => ({ kind: "found", shipped: 1 }), 10 * S);
    const waiting = stream("2/php", () => ({ kind: "found", shipped: 1 }));
    s.add(reading);
    s.add(waiting);
    await vi.advanceTimersByTimeAsync(1 * S);
    expect([reading.starts.length, waiting.starts.length]).toEqual([1, 1]);
    // One is in the middle of a read, the other waits for its next one.
    const removed = Promise.all([s.remove(reading), s.remove(waiting)]);
    await vi.advanceTimersByTimeAsync(0);
    await removed;
    await vi.advanceTimersByTimeAsync(10 * MIN);
    expect([reading.starts.length, waiting.starts.length]).toEqual([1, 1]);
    expect(s.size).toBe(0);
    await s.stop();
  });

  it("a stream added in a removed stream's place keeps its own schedule, not the removed one's", async () => {
    vi.useFakeTimers({ now: 1_000_000_000, toFake: FAKE });
    const s = scheduler();
    const now = Date.now();
    // Due before the removed stream would have been: its entry stays under this one's in the queue.
    const first = stream("0/php", () => ({ kind: "empty" }));
    const gone = stream("1/php", () => ({ kind: "empty" }));
    const reading = stream("2/php", () => ({ kind: "empty" }), 10 * S);
    s.add(first, now + 20 * S);
    s.add(gone, now + 30 * S);
    s.add(reading);
    await vi.advanceTimersByTimeAsync(S);
    // Removed while not read, and while read: both places are taken by later streams due much later.
    await s.remove(gone);
    const removing = s.remove(reading);
    await vi.advanceTimersByTimeAsync(10 * S);
    await removing;
    const later = [stream("3/php", () => ({ kind: "empty" })), stream("4/php", () => ({ kind: "empty" }))];
    for (const st of later) s.add(st, now + 5 * MIN);
    await vi.advanceTimersByTimeAsync(4 * MIN);
    expect([gone.starts, ...later.map((st) => st.starts)]).toEqual([[], [], []]);
    expect(s.dueAt(later[0] as ScheduledStream)).toBe(now + 5 * MIN);
    await vi.advanceTimersByTimeAsync(2 * MIN);
    expect(later.map((st) => st.starts[0])).toEqual([now + 5 * MIN, now + 5 * MIN]);
    expect(reading.starts).toHaveLength(1);
    await s.stop();
  });

  it("starts nothing while paused (the collector is down)", async () => {
    vi.useFakeTimers({ now: 1_000_000_000, toFake: FAKE });
    let paused = true;
    const s = scheduler(4, () => paused);
    const st = stream("1/php", () => ({ kind: "found", shipped: 1 }));
    s.add(st);
    await vi.advanceTimersByTimeAsync(MIN);
    expect(st.starts).toEqual([]);
    paused = false;
    await vi.advanceTimersByTimeAsync(2 * S);
    expect(st.starts).toHaveLength(1);
    await s.stop();
  });
});

function i(st: ScheduledStream): number {
  return Number(st.key.split("/")[0]);
}
