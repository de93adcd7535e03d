/**
 * A busy stream (36 lines/s, pollInterval 5s, whole-second times) read at the intervals the scheduler
 * chooses (pace.ts, with its spread of a tenth at its middle): requests per 1,000 records, and every
 * line shipped exactly once, identical lines in one second included.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { paceMs } from "../../../src/logs/pace.js";
import { makeTailer } from "./fakes.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "busy-stream-test-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const RATE = 36;
const POLL_MS = 5_000;
/** The scheduler shortens each wait by up to a tenth; at the middle of that range. */
const SPREAD = 0.95;

describe("a busy stream", () => {
  it("36 lines/s at pollInterval 5s: at most 8 log requests per 1,000 records, nothing lost or doubled", async () => {
    let now = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
    const clock = { now: () => now, sleep: async () => undefined };
    const rig = makeTailer(dir, { clock, startFromMs: () => now });
    rig.api.pageSize = 200;
    const written: string[] = [];
    let second = now / 1000;
    /** Every second's lines are visible from its start; in every seventh second three are identical. */
    const writeUpTo = (ms: number) => {
      for (; second * 1000 <= ms; second++) {
        for (let k = 0; k < RATE; k++) {
          const url = second % 7 === 0 && k < 3 ? `/same/${second}` : `/p/${second}/${k}`;
          rig.api.append({ timestamp: second, request_type: "GET", request_url: url, status: 200 });
          written.push(url);
        }
      }
    };
    const end = now + 10 * 60_000;
    let requestsWhileBusy = 0;
    let shippedWhileBusy = 0;
    while (now < end) {
      writeUpTo(now);
      const before = rig.api.requests.length;
      const outcome = await rig.tailer.read(new AbortController().signal);
      if (outcome.kind === "found") shippedWhileBusy += outcome.shipped;
      requestsWhileBusy += rig.api.requests.length - before;
      const interval = outcome.kind === "found" && outcome.pace ? paceMs(outcome.pace, POLL_MS) : POLL_MS;
      now += Math.floor(interval * SPREAD);
    }
    // Writing stops; the reads after it catch up with the last seconds.
    for (let i = 0; i < 2; i++) {
      now += POLL_MS;
      await rig.tailer.read(new AbortController().signal);
    }
    expect([...rig.sink.paths()].sort()).toEqual([...written].sort());
    expect(new Set(rig.sink.accepted.map((r) => r.attributes.uid)).size).toBe(written.length);
    expect((requestsWhileBusy / shippedWhileBusy) * 1000).toBeLessThanOrEqual(8);
  });
});
