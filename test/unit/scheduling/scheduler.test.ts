import pino from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiNetworkError } from "../../../src/api/errors.js";
import type { Account } from "../../../src/api/schemas.js";
import { ConfigSchema } from "../../../src/config/schema.js";
import { Scheduler } from "../../../src/scheduling/scheduler.js";
import { makeSite } from "../collectors/fixtures.js";
import { collectionFor } from "../../helpers/collection.js";
import { fakeApi, list } from "../../helpers/fakeApi.js";

const silent = pino({ level: "silent" });
const account: Account = {
  maxSites: 10,
  capacity: { sites: { maxBillable: 8, maxStaging: 2, billable: 1, staging: 0, total: 1 } },
};

afterEach(() => {
  vi.useRealTimers();
});

describe("Scheduler start-up", () => {
  it("retries discovery with backoff, then runs every enabled collector once and becomes ready", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] });
    // 10 s past a minute: the 2 s and 4 s retries below stay clear of the next whole minute
    vi.setSystemTime(new Date("2026-03-15T12:00:10Z"));
    let listCalls = 0;
    const calls: string[] = [];
    const api = fakeApi({
      account: async () => account,
      allSites: async () => {
        listCalls += 1;
        if (listCalls <= 2) throw new ApiNetworkError("GET /sites", "ECONNREFUSED");
        return list([makeSite(1)]);
      },
      domains: async () => (calls.push("domains"), list([])),
      statistics: async () => (calls.push("statistics"), { pageViews: {} }),
      usageReport: async () => (calls.push("usage"), list([])),
      performanceReport: async () => (calls.push("performance"), {}),
      trafficMetrics: async () => (calls.push("traffic"), { periods: [] }),
      pluginAlerts: async () => (calls.push("security"), list([])),
      themeAlerts: async () => (calls.push("security"), list([])),
      backups: async () => (calls.push("backups"), list([])),
      gitHistory: async () => (calls.push("git"), list([])),
      zones: async () => (calls.push("certificates"), list([])),
    });
    const config = ConfigSchema.parse({ collectors: { backups: { enabled: false } } });
    const { runner, readiness } = collectionFor(config, api);
    // No jitter: the retry waits are the backoff's ceilings, 2 s then 4 s.
    const scheduler = new Scheduler(runner, config.collectors, silent, { random: () => 1 });
    try {
      scheduler.start();
      await vi.advanceTimersByTimeAsync(0);
      expect(listCalls).toBe(1);
      expect(readiness().ready).toBe(false);
      expect(calls).toEqual([]); // no site collector before a first discovery
      await vi.advanceTimersByTimeAsync(2000); // first retry after 2 s
      expect(listCalls).toBe(2);
      expect(calls).toEqual([]);
      await vi.advanceTimersByTimeAsync(3999); // the second waits 4 s (doubled)
      expect(listCalls).toBe(2);
      await vi.advanceTimersByTimeAsync(1);
      expect(listCalls).toBe(3);
      // one site: security asks twice (plugins, themes), the others once; certificates lists the
      // zones (none); backups is disabled
      expect([...calls].sort()).toEqual(
        [
          "certificates",
          "domains",
          "git",
          "performance",
          "security",
          "security",
          "statistics",
          "traffic",
          "usage",
        ].sort(),
      );
      expect(readiness()).toEqual({ ready: true });
    } finally {
      await scheduler.stop();
    }
  });
});
