/**
 * doctor asks each endpoint the table says a collector uses: the table must be what the collectors
 * call. Every collector runs against an API that records the endpoints asked and answers each with
 * something usable.
 */
import pino from "pino";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { EndpointName } from "../../../src/api/endpoints.js";
import { sourcedApi } from "../../../src/api/sourced.js";
import type { SitehostApi } from "../../../src/api/types.js";
import { createCollectors } from "../../../src/collectors/index.js";
import { ConfigSchema, COLLECTOR_NAMES } from "../../../src/config/schema.js";
import { SiteDiscovery } from "../../../src/discovery/discovery.js";
import { COLLECTOR_ENDPOINTS, endpointsInUse } from "../../../src/doctor/usage.js";
import { METRIC_FAMILIES } from "../../../src/metrics/families.js";
import { MetricStore } from "../../../src/metrics/store.js";
import { list } from "../../helpers/fakeApi.js";
import { makeSite } from "../collectors/fixtures.js";
import { UNKEPT_TRAFFIC_STATE } from "../../../src/collectors/trafficState.js";

const site = makeSite(7);

/** Answers that let every collector go as far as it can (a zone with an A record of the site). */
const ANSWERS: Partial<Record<EndpointName | "allSites", unknown>> = {
  allSites: list([site]),
  account: {
    maxSites: 1,
    capacity: { sites: { maxBillable: 1, maxStaging: 1, billable: 1, staging: 0, total: 1 } },
  },
  trafficMetrics: { periods: [] },
  statistics: { pageViews: {} },
  performanceReport: {},
  zones: list([{ id: 3, name: "acme.example" }]),
  zoneRecords: {
    ...list([{ id: 9, type: "A", name: "www", siteId: site.id }]),
    zone: { id: 3, name: "acme.example" },
  },
  recordSsl: { certificate_expiration_date: "2030-01-01T00:00:00Z" },
  cmsUsers: { users: [], total_user_count: 0 },
};

function recordingApi(asked: Set<string>): SitehostApi {
  return new Proxy({} as SitehostApi, {
    get(_target, prop) {
      if (prop === "then" || typeof prop !== "string") return undefined;
      return async () => {
        asked.add(prop === "allSites" ? "sites" : prop);
        return ANSWERS[prop as EndpointName] ?? list([]);
      };
    },
  });
}

describe("which endpoints each collector uses", () => {
  it.each(COLLECTOR_NAMES.filter((n) => n !== "inventory"))(
    "%s asks exactly what the table says",
    async (name) => {
      const asked = new Set<string>();
      const { performance, statistics } = ConfigSchema.parse({}).collectors;
      const collector = createCollectors({
        now: Date.now,
        concurrency: 1,
        traffic: { polling: { runEveryMs: 300_000, maxIntervalMs: 900_000 }, state: UNKEPT_TRAFFIC_STATE },
        performance,
        statistics,
      })[name];
      const api = sourcedApi(recordingApi(asked), name);
      const signal = new AbortController().signal;
      if (collector.scope === "site") await collector.fetch(api, site, signal);
      else await collector.run(api, [site], signal, Date.now());
      expect([...asked].sort()).toEqual([...COLLECTOR_ENDPOINTS[name]].sort());
    },
  );

  it("discovery (inventory) asks exactly what the table says", async () => {
    const asked = new Set<string>();
    const config = ConfigSchema.parse({});
    const discovery = new SiteDiscovery({
      sites: config.sites,
      api: recordingApi(asked),
      store: new MetricStore(METRIC_FAMILIES),
      registry: new Registry(),
      logger: pino({ level: "silent" }),
    });
    await discovery.refresh(new AbortController().signal);
    expect([...asked].sort()).toEqual([...COLLECTOR_ENDPOINTS.inventory].sort());
  });

  it("the endpoints in use follow the configuration", () => {
    const config = ConfigSchema.parse({
      collectors: { security: { enabled: false } },
      logs: { streams: ["php"] },
      webhooks: { enabled: true, token: "a-token-of-sixteen-chars" },
    });
    const inUse = endpointsInUse(config);
    expect(inUse.has("pluginAlerts")).toBe(false);
    expect(inUse.get("phpLogs")).toEqual(["logs.streams: php"]);
    expect(inUse.has("serverLogs")).toBe(false);
    expect(inUse.get("site")).toEqual(["webhooks"]);
    expect(inUse.get("sites")).toEqual(["collectors.inventory"]);
  });
});
