/**
 * What each collector says its next run costs is what the request plan and the budget's shares are
 * built from. Every collector runs against the simulator through the real API client, and the
 * requests it made (places taken in the request budget, by source) must be what it declared before
 * the run. Discovery, the account-level collector (certificates) and access declare from what their
 * last run found (the sites, the zones and records, each site's pages of users), so they are held to
 * it from their second run on.
 */
import pino from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BudgetSource } from "../../../src/api/budget.js";
import { createApiClient, type ApiClient } from "../../../src/api/client.js";
import { COLLECTOR_NAMES, ConfigSchema } from "../../../src/config/schema.js";
import { startSimulator, type RunningSimulator } from "../../../src/simulator/index.js";
import { collectionFor } from "../../helpers/collection.js";

/** More than one page of the site list (100 a page). */
const SITES = 101;

let sim: RunningSimulator;
let api: ApiClient;
const made = new Map<BudgetSource, number>();

beforeAll(async () => {
  sim = await startSimulator({ sites: SITES, seed: 7 });
  api = createApiClient({
    apiUrl: sim.apiUrl,
    authUrl: sim.authUrl,
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    timeoutMs: 10_000,
    maxResponseBytes: 32 * 1024 * 1024,
    maxConcurrency: 8,
    maxRequestsPerSecond: 10_000,
    maxRetries: 0,
    maxRetryAfterMs: 1_000,
    tokenRefreshMarginMs: 60_000,
    registry: new Registry(),
    logger: pino({ level: "silent" }),
  });
  const acquire = api.budget.acquire.bind(api.budget);
  api.budget.acquire = (source, signal) => {
    made.set(source, (made.get(source) ?? 0) + 1);
    return acquire(source, signal);
  };
});

afterAll(async () => {
  await api.close();
  await sim.close();
});

describe("declared requests per run", () => {
  it("are the requests every collector makes, run after run", async () => {
    const { runner } = collectionFor(ConfigSchema.parse({}), api);
    const runs: Array<{ collector: string; run: number; declared: number; made: number }> = [];
    for (let run = 1; run <= 2; run++) {
      for (const name of COLLECTOR_NAMES) {
        const declared = runner.requestsPerRun(name);
        made.clear();
        const outcome = await runner.run(name);
        expect(outcome.result, `${name}: ${String(outcome.error)}`).not.toBe("failure");
        runs.push({ collector: name, run, declared, made: made.get(name) ?? 0 });
      }
      expect(runner.sites).toHaveLength(SITES);
    }
    const held = runs.filter(
      (r) => r.run > 1 || !["inventory", "certificates", "access"].includes(r.collector),
    );
    expect(held.filter((r) => r.made !== r.declared)).toEqual([]);
    // Every collector asked, and asked as itself.
    for (const name of COLLECTOR_NAMES)
      expect(runs.find((r) => r.collector === name)?.made).toBeGreaterThan(0);
  });
});
