/**
 * Fault knobs (request budget → 429 + Retry-After, errorRate → 500, malformedRate → records that break
 * a documented field, failingSiteId → 500 for that site only, latency) on every route of the shared
 * route table, and the control endpoints over HTTP.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ROUTES, routePath, type RouteName } from "../../../src/routes.js";
import { dataOf, startTestSim, T0, type Reply, type TestSim } from "./helpers.js";
import { SHAPES, shapeProblems, type Shape } from "./shapes.js";

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
    expect(stats.requests[`GET ${ROUTES.domains.template} 429`]).toBe(1);
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

  it("malformedRate 1: every record breaks a documented field; 0: none does", async () => {
    t = await startTestSim({ sites: 12, logRatePerSite: 0.5 });
    const sites = t.sim.control.sites();
    const id = sites[0]?.site.id as number;
    const zoneId = sites[0]?.domains[0]?.zoneId as number;
    const aRecord = zoneId * 10; // the zone's A record (docs/simulator.md)
    const lists = async (sim: TestSim): Promise<Record<string, { shape: Shape; records: unknown[] }>> => {
      const data = async (r: Promise<Reply>) => dataOf(await r) as unknown[];
      const zone = dataOf(await sim.get(`/zones/${zoneId}/records`)) as { records: unknown[] };
      const plugins = dataOf(await sim.get(`/sites/${sites[1]?.site.id}/security-alerts/plugins`));
      const logs = async (stream: string) =>
        ((await sim.get(`/sites/${id}/logs/${stream}`)).body as { logs: unknown[] }).logs;
      return {
        site: { shape: SHAPES.site, records: await data(sim.get("/sites")) },
        domain: { shape: SHAPES.domain, records: await data(sim.get(`/sites/${id}/domains`)) },
        usage: { shape: SHAPES.usage, records: await data(sim.get(`/sites/${id}/reports/usage`)) },
        backup: { shape: SHAPES.backup, records: await data(sim.get(`/sites/${id}/backups`)) },
        extension: {
          shape: SHAPES.extension,
          records: Object.values(plugins as Record<string, unknown[]>).flat(),
        },
        php: { shape: SHAPES.php, records: await logs("php") },
        server: { shape: SHAPES.server, records: await logs("server") },
        activity: { shape: SHAPES.activity, records: await data(sim.post("/account/logs/activity", {})) },
        zone: { shape: SHAPES.zone, records: await data(sim.get("/zones")) },
        record: { shape: SHAPES.record, records: zone.records },
        ssl: {
          shape: SHAPES.ssl,
          records: [dataOf(await sim.get(`/zones/${zoneId}/records/${aRecord}/ssl`))],
        },
        deploy: { shape: SHAPES.deploy, records: await data(sim.get(`/sites/${id}/git/history`)) },
        ondemand: { shape: SHAPES.ondemand, records: await data(sim.get(`/sites/${id}/ondemand-backups`)) },
        restore: { shape: SHAPES.restore, records: await data(sim.get(`/sites/${id}/restores`)) },
      };
    };
    t.sim.control.setFaults({ malformedRate: 1 });
    for (const [kind, { shape, records }] of Object.entries(await lists(t))) {
      expect(records.length, kind).toBeGreaterThan(0);
      for (const r of records)
        expect(shapeProblems(r, shape), `${kind} ${JSON.stringify(r).slice(0, 80)}`).not.toEqual([]);
    }
    t.sim.control.setFaults({ malformedRate: 0 });
    for (const [kind, { shape, records }] of Object.entries(await lists(t)))
      for (const r of records) expect(shapeProblems(r, shape), kind).toEqual([]);
  });

  it("malformedRate 0.5 breaks some records of a list, not the response", async () => {
    t = await startTestSim({ sites: 30, malformedRate: 0.5 });
    const r = await t.get("/sites");
    expect(r.status).toBe(200);
    const results = (dataOf(r) as unknown[]).map((s) => shapeProblems(s, SHAPES.site).length === 0);
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
      [`GET ${ROUTES.domains.template} 200`]: 2,
      [`GET ${ROUTES.domains.template} 404`]: 1,
      [`GET ${ROUTES.account.template} 401`]: 1,
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

describe("every API route of the shared route table", () => {
  const apiRoutes = (Object.keys(ROUTES) as RouteName[]).filter((n) => ROUTES[n].base === "api");

  async function setup() {
    t = await startTestSim({ sites: 3 });
    // Fleet index 0: git-enrolled, with domains, zones and a certificate on its A record.
    const first = t.sim.control.sites()[0];
    const id = first?.site.id as number;
    const zoneId = first?.domains[0]?.zoneId as number;
    const params = { id, zone_id: zoneId, record_id: zoneId * 10 };
    const call = (name: RouteName, token?: string | null): Promise<Reply> => {
      const path = routePath(name, params as never);
      return ROUTES[name].method === "GET" ? t!.get(path, token) : t!.post(path, {}, token);
    };
    return { id, call };
  }

  it("answers every route: 401 without or with a wrong token, 200 with one, each counted by its template", async () => {
    const { call } = await setup();
    for (const name of apiRoutes) {
      expect((await call(name, null)).status, name).toBe(401);
      expect((await call(name, "not-a-token")).status, name).toBe(401);
      expect((await call(name)).status, name).toBe(200);
    }
    const stats = t!.sim.control.stats();
    for (const name of apiRoutes) {
      const { method, template } = ROUTES[name];
      expect(stats.requests[`${method} ${template} 401`], name).toBe(2);
      expect(stats.requests[`${method} ${template} 200`], name).toBe(1);
    }
    expect(Object.keys(stats.requests).some((k) => k.includes("(unknown)"))).toBe(false);
  });

  it("errorRate, requestBudget, failingSiteId and latency apply to every route", async () => {
    const { id, call } = await setup();
    t!.sim.control.setFaults({ errorRate: 1 });
    for (const name of apiRoutes) expect((await call(name)).status, name).toBe(500);
    t!.sim.control.setFaults({ errorRate: 0, requestBudget: { requests: 0, windowSeconds: 30 } });
    for (const name of apiRoutes) {
      const r = await call(name);
      expect(r.status, name).toBe(429);
      expect(r.headers.get("retry-after"), name).toBe("30");
    }
    t!.sim.control.setFaults({ requestBudget: null, failingSiteId: id });
    for (const name of apiRoutes)
      expect((await call(name)).status, name).toBe(ROUTES[name].template.includes("{id}") ? 500 : 200);
    t!.sim.control.setFaults({ failingSiteId: null, latencyMs: 40 });
    for (const name of apiRoutes) {
      const started = performance.now();
      expect((await call(name)).status, name).toBe(200);
      // A lower bound only (timers never fire early by more than a millisecond).
      expect(performance.now() - started, name).toBeGreaterThanOrEqual(39);
    }
  });
});
