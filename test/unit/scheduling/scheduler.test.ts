import pino from "pino";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiNetworkError } from "../../../src/api/errors.js";
import type { Account } from "../../../src/api/schemas.js";
import type { ListResult, SitehostApi } from "../../../src/api/types.js";
import { ConfigSchema } from "../../../src/config/schema.js";
import { METRIC_FAMILIES } from "../../../src/metrics/families.js";
import { MetricStore } from "../../../src/metrics/store.js";
import { CollectorRunner } from "../../../src/scheduling/runner.js";
import { Scheduler } from "../../../src/scheduling/scheduler.js";
import { makeSite } from "../collectors/fixtures.js";

const silent = pino({ level: "silent" });
const list = <T>(items: T[]): ListResult<T> => ({ items, rejected: [] });
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
    const api = {
      getAccount: async () => account,
      listSites: async () => {
        listCalls += 1;
        if (listCalls <= 2) throw new ApiNetworkError("GET /sites", "ECONNREFUSED");
        return list([makeSite(1)]);
      },
      getDomains: async () => (calls.push("domains"), list([])),
      getStatistics: async () => (calls.push("statistics"), { pageViews: {} }),
      getUsageReport: async () => (calls.push("usage"), list([])),
      getLatestPerformanceReport: async () => (calls.push("performance"), {}),
      getTrafficMetrics: async () => (calls.push("traffic"), { periods: [] }),
      getSecurityAlerts: async () => (calls.push("security"), list([])),
      getBackups: async () => (calls.push("backups"), list([])),
      getSite: () => Promise.reject(new Error("unused")),
      getLogPage: () => Promise.reject(new Error("unused")),
      close: async () => {},
    } satisfies SitehostApi;
    const config = ConfigSchema.parse({ collectors: { backups: { enabled: false } } });
    const runner = new CollectorRunner({
      config,
      api,
      store: new MetricStore(METRIC_FAMILIES),
      registry: new Registry(),
      logger: silent,
    });
    const scheduler = new Scheduler(runner, config, silent);
    try {
      scheduler.start();
      await vi.advanceTimersByTimeAsync(0);
      expect(listCalls).toBe(1);
      expect(runner.readiness().ready).toBe(false);
      expect(calls).toEqual([]); // no site collector before a first discovery
      await vi.advanceTimersByTimeAsync(2000); // first retry after 2 s
      expect(listCalls).toBe(2);
      expect(calls).toEqual([]);
      await vi.advanceTimersByTimeAsync(3999); // the second waits 4 s (doubled)
      expect(listCalls).toBe(2);
      await vi.advanceTimersByTimeAsync(1);
      expect(listCalls).toBe(3);
      // one site: security asks twice (plugins, themes), the others once; backups is disabled
      expect([...calls].sort()).toEqual(
        ["domains", "performance", "security", "security", "statistics", "traffic", "usage"].sort(),
      );
      expect(runner.readiness()).toEqual({ ready: true });
    } finally {
      await scheduler.stop();
    }
  });
});
