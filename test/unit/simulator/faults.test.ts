/**
 * Issue #3: fault knobs (request budget → 429 + Retry-After, errorRate → 500, malformedRate → records the
 * client's schemas reject, failingSiteId → 500 for that site only, latency) and the control endpoints
 * over HTTP.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  DomainSchema,
  PhpLogEntrySchema,
  ServerLogEntrySchema,
  SiteSchema,
  UsageReportEntrySchema,
  BackupEntrySchema,
  SecurityAlertItemSchema,
} from "../../../src/api/schemas.js";
import { dataOf, startTestSim, T0, type TestSim } from "./helpers.js";

const INTERNAL = "An internal error occurred while processing your request. Please try again.";

let t: TestSim | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe("fault knobs", () => {
  it("request budget: over it, 429 with Retry-After in seconds until the window ends", async () => {
    t = await startTestSim({ sites: 3 });
    const id = t.sim.control.sites()[0]?.site.id as number;
    // 3 requests per 10 s window, starting now (T0).
    t.sim.control.setFaults({ requestBudget: { requests: 3, windowSeconds: 10 } });
    for (let i = 0; i < 3; i++) expect((await t.get(`/sites/${id}/domains`)).status).toBe(200);
    const limited = await t.get(`/sites/${id}/domains`);
    expect(limited.status).toBe(429);
    // The window started at T0 and lasts 10 s: Retry-After = 10.
    expect(limited.headers.get("retry-after")).toBe("10");
    expect(limited.body).toMatchObject({ message: expect.any(String), data: null });
    t.clock.ms = T0 + 4_000; // 6 s left
    expect((await t.get("/account")).headers.get("retry-after")).toBe("6");
    t.clock.ms = T0 + 10_000; // a new window
    expect((await t.get(`/sites/${id}/domains`)).status).toBe(200);
    const stats = t.sim.control.stats();
    expect(stats.requests["GET /sites/{site_id}/domains 429"]).toBe(1);
    expect(stats.requests["GET /account 429"]).toBe(1);
    expect(stats.requestsDuringRetryAfter).toBeGreaterThanOrEqual(1);
  });

  it("request budget: the window starts when the budget is set", async () => {
    t = await startTestSim({ sites: 2 });
    t.clock.ms = T0 + 7_000;
    t.sim.control.setFaults({ requestBudget: { requests: 1, windowSeconds: 10 } });
    expect((await t.get("/account")).status).toBe(200);
    // Window T0+7 s .. T0+17 s: 10 s left, not the 3 s a window counted from start-up would leave.
    expect((await t.get("/account")).headers.get("retry-after")).toBe("10");
    t.sim.control.setFaults({ requestBudget: null });
    expect((await t.get("/account")).status).toBe(200);
  });

  it("errorRate 1 answers every API request 500 with the generic message; 0 answers none", async () => {
    t = await startTestSim({ sites: 3 });
    const id = t.sim.control.sites()[0]?.site.id as number;
    t.sim.control.setFaults({ errorRate: 1 });
    for (const path of ["/account", "/sites", `/sites/${id}/domains`]) {
      const r = await t.get(path);
      expect(r.status).toBe(500);
      expect(r.body).toMatchObject({ message: INTERNAL, data: null });
    }
    t.sim.control.setFaults({ errorRate: 0 });
    expect((await t.get(`/sites/${id}/domains`)).status).toBe(200);
  });

  it("errorRate 0.5 fails some requests and not others", async () => {
    t = await startTestSim({ sites: 3, errorRate: 0.5 });
    const statuses = new Set<number>();
    for (let i = 0; i < 40; i++) statuses.add((await t.get("/account")).status);
    expect([...statuses].sort()).toEqual([200, 500]);
  });

  it("malformedRate 1: every record fails the client's schemas; 0: none does", async () => {
    t = await startTestSim({ sites: 10, logRatePerSite: 0.5 });
    const ids = t.sim.control.sites().map((s) => s.site.id);
    const id = ids[0] as number;
    const lists = async () => ({
      sites: dataOf(await t!.get("/sites")) as unknown[],
      domains: dataOf(await t!.get(`/sites/${id}/domains`)) as unknown[],
      usage: dataOf(await t!.get(`/sites/${id}/reports/usage`)) as unknown[],
      backups: dataOf(await t!.get(`/sites/${id}/backups`)) as unknown[],
      plugins: Object.values(
        dataOf(await t!.get(`/sites/${ids[1]}/security-alerts/plugins`)) as Record<string, unknown[]>,
      ).flat(),
      php: ((await t!.get(`/sites/${id}/logs/php`)).body as { logs: unknown[] }).logs,
      server: ((await t!.get(`/sites/${id}/logs/server`)).body as { logs: unknown[] }).logs,
    });
    const schemas = {
      sites: SiteSchema,
      domains: DomainSchema,
      usage: UsageReportEntrySchema,
      backups: BackupEntrySchema,
      plugins: SecurityAlertItemSchema,
      php: PhpLogEntrySchema,
      server: ServerLogEntrySchema,
    };
    t.sim.control.setFaults({ malformedRate: 1 });
    const bad = await lists();
    for (const [k, records] of Object.entries(bad)) {
      expect(records.length, k).toBeGreaterThan(0);
      for (const r of records)
        expect(
          schemas[k as keyof typeof schemas].safeParse(r).success,
          `${k} ${JSON.stringify(r).slice(0, 80)}`,
        ).toBe(false);
    }
    t.sim.control.setFaults({ malformedRate: 0 });
    const good = await lists();
    for (const [k, records] of Object.entries(good))
      for (const r of records) expect(schemas[k as keyof typeof schemas].safeParse(r).success, k).toBe(true);
  });

  it("malformedRate 0.5 breaks some records of a list, not the response", async () => {
    t = await startTestSim({ sites: 30, malformedRate: 0.5 });
    const r = await t.get("/sites");
    expect(r.status).toBe(200);
    const results = (dataOf(r) as unknown[]).map((s) => SiteSchema.safeParse(s).success);
    expect(results).toHaveLength(30);
    expect(results).toContain(true);
    expect(results).toContain(false);
  });

  it("failingSiteId: 500 for that site's endpoints only", async () => {
    t = await startTestSim({ sites: 3 });
    const [bad, good] = t.sim.control.sites().map((s) => s.site.id) as [number, number];
    t.sim.control.setFaults({ failingSiteId: bad });
    for (const path of ["", "/domains", "/statistics", "/backups", "/logs/php"]) {
      expect((await t.get(`/sites/${bad}${path}`)).status, path).toBe(500);
      expect((await t.get(`/sites/${good}${path}`)).status, path).toBe(200);
    }
    expect((await t.post(`/sites/${bad}/metrics`, { start_at: "1 hour ago" })).status).toBe(500);
    expect((await t.get("/sites")).status).toBe(200);
  });

  it("latency holds each request for the configured time before answering", async () => {
    t = await startTestSim({ sites: 2 });
    t.sim.control.setFaults({ latencyMs: 400 });
    const before = t.sim.control.stats().totalRequests;
    let settled = false;
    const started = performance.now();
    const pending = t.get("/account").then((r) => ((settled = true), r));
    // Wait until the simulator has received it; it must still be unanswered then.
    while (t.sim.control.stats().totalRequests === before) await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    expect(t.sim.control.stats().maxInFlight).toBe(1);
    const r = await pending;
    expect(r.status).toBe(200);
    // A lower bound only (timers never fire early by more than a millisecond).
    expect(performance.now() - started).toBeGreaterThanOrEqual(395);
  });

  it("token lifetime knob: tokens issued after the change carry it", async () => {
    t = await startTestSim({ sites: 2 });
    t.sim.control.setFaults({ tokenLifetimeSeconds: 30 });
    const token = await t.newToken();
    t.clock.ms = T0 + 31_000;
    expect((await t.get("/account", token)).status).toBe(401);
  });
});

describe("control endpoints over HTTP", () => {
  it("GET /_simulator/stats counts requests by route template and status", async () => {
    t = await startTestSim({ sites: 3 });
    const id = t.sim.control.sites()[0]?.site.id as number;
    await t.control("POST", "/_simulator/stats/reset");
    await t.get(`/sites/${id}/domains`);
    await t.get(`/sites/${id}/domains`);
    await t.get("/sites/1/domains");
    await t.get("/account", null);
    const stats = (await t.control("GET", "/_simulator/stats")).body as {
      requests: Record<string, number>;
      totalRequests: number;
    };
    expect(stats.requests).toEqual({
      "GET /sites/{site_id}/domains 200": 2,
      "GET /sites/{site_id}/domains 404": 1,
      "GET /account 401": 1,
    });
    expect(stats.totalRequests).toBe(4);
  });

  it("POST /_simulator/faults sets knobs, refuses unknown or invalid ones", async () => {
    t = await startTestSim({ sites: 3 });
    const set = await t.control("POST", "/_simulator/faults", { errorRate: 1 });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ errorRate: 1 });
    expect((await t.get("/account")).status).toBe(500);
    expect((await t.control("GET", "/_simulator/faults")).body).toMatchObject({ errorRate: 1, latencyMs: 0 });
    const unknown = await t.control("POST", "/_simulator/faults", { errorRatio: 1 });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ errors: ["unknown fault errorRatio"] });
    expect((await t.control("POST", "/_simulator/faults", { errorRate: 2 })).status).toBe(400);
    await t.control("POST", "/_simulator/faults", {
      errorRate: 0,
      requestBudget: { requests: 1, windowSeconds: 5 },
    });
    expect((await t.get("/account")).status).toBe(200);
    const limited = await t.get("/account");
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("5");
  });

  it("POST /_simulator/sites/{id}/disable and enable change the site's state", async () => {
    t = await startTestSim({ sites: 3 });
    const id = t.sim.control.sites()[0]?.site.id as number;
    expect((await t.control("POST", `/_simulator/sites/${id}/disable`)).status).toBe(200);
    expect(dataOf(await t.get(`/sites/${id}`))).toMatchObject({ state: "disabled" });
    expect((await t.control("POST", `/_simulator/sites/${id}/enable`)).status).toBe(200);
    expect(dataOf(await t.get(`/sites/${id}`))).toMatchObject({ state: "live" });
    expect((await t.control("POST", "/_simulator/sites/1/disable")).status).toBe(404);
  });

  it("POST /_simulator/sites adds a site, /delete removes it", async () => {
    t = await startTestSim({ sites: 3 });
    const added = await t.control("POST", "/_simulator/sites");
    expect(added.status).toBe(201);
    const id = (added.body as { id: number }).id;
    expect((dataOf(await t.get("/sites")) as unknown[]).length).toBe(4);
    expect((await t.get(`/sites/${id}/domains`)).status).toBe(200);
    await t.control("POST", `/_simulator/sites/${id}/delete`);
    expect((await t.get(`/sites/${id}`)).status).toBe(404);
    expect((dataOf(await t.get("/sites")) as unknown[]).length).toBe(3);
  });

  it("POST /_simulator/sites/{id}/logs/{stream} appends an entry the next scroll returns", async () => {
    t = await startTestSim({ sites: 2, logRatePerSite: 0.01 });
    const id = t.sim.control.sites()[0]?.site.id as number;
    const r = await t.control("POST", `/_simulator/sites/${id}/logs/php`, {
      message: "appended over HTTP",
      severity: "Fatal error",
    });
    expect(r.status).toBe(201);
    const page = (await t.get(`/sites/${id}/logs/php`)).body as { logs: Array<Record<string, unknown>> };
    expect(page.logs[0]).toMatchObject({
      message: "appended over HTTP",
      severity: "Fatal error",
      hosted_site_id: id,
    });
  });

  it("POST /_simulator/logs switches the paging behaviour", async () => {
    t = await startTestSim({ sites: 2, logRatePerSite: 0.01 });
    const id = t.sim.control.sites()[0]?.site.id as number;
    const r = await t.control("POST", "/_simulator/logs", { order: "oldest-first", mode: "cursor" });
    expect(r.body).toEqual({ rate: 0.01, order: "oldest-first", mode: "cursor" });
    const page = (await t.get(`/sites/${id}/logs/php`)).body as { logs: Array<{ timestamp: string }> };
    // Oldest first: the first entry is from the first hours of the 7 days (T0 - 604800 s = 2026-11-15T12:00Z).
    expect(page.logs[0]?.timestamp.slice(0, 10)).toBe("2026-11-15");
    expect((await t.control("POST", "/_simulator/logs", { order: "sideways" })).status).toBe(400);
  });
});
