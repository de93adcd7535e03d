/**
 * Issue #3: every endpoint the daemon calls answers, on the wire, in the shape the client's zod schemas
 * (src/api/schemas.ts) accept — for several kinds of site (live, disabled, deploying, staging, sandbox, kit).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  AccountSchema,
  BackupEntrySchema,
  DomainSchema,
  EnvelopeSchema,
  LogPageSchema,
  MetricsPeriodSchema,
  MetricsResultSchema,
  PageSchema,
  PerformanceReportSchema,
  PhpLogEntrySchema,
  SecurityAlertGroupsSchema,
  SecurityAlertItemSchema,
  ServerLogEntrySchema,
  SiteDetailSchema,
  SiteSchema,
  StatisticsSchema,
  TokenResponseSchema,
  UsageReportEntrySchema,
} from "../../../src/api/schemas.js";
import { allSites, dataOf, startTestSim, type SiteRecord, type TestSim } from "./helpers.js";

let t: TestSim;
let sites: SiteRecord[];
/** Fleet indexes 0 (live, favorite), 3 (disabled), 5 (deploying), 7 (staging), 8 (sandbox), 9 (kit), 13. */
let sample: SiteRecord[];

function expectValid<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new Error(`${what}: ${JSON.stringify(result.error.issues[0])}`);
  return result.data;
}

beforeAll(async () => {
  t = await startTestSim({ sites: 25, seed: 4, logRatePerSite: 0.5 });
  sites = await allSites(t);
  const byIndex = t.sim.control.sites();
  sample = [0, 3, 5, 7, 8, 9, 13].map((i) => {
    const id = byIndex[i]?.site.id;
    const s = sites.find((x) => x.id === id);
    if (!s) throw new Error(`no site at index ${i}`);
    return s;
  });
});
afterAll(() => t.close());

describe("simulator responses validate against the client's schemas", () => {
  it("token response", async () => {
    const res = await fetch(`${t.sim.authUrl}/auth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "client_credentials",
        client_id: t.sim.clientId,
        client_secret: t.sim.clientSecret,
      }).toString(),
    });
    expect(res.status).toBe(200);
    expectValid(TokenResponseSchema, await res.json(), "token");
  });

  it("GET /account", async () => {
    const r = await t.get("/account");
    expect(r.status).toBe(200);
    expectValid(EnvelopeSchema, r.body, "envelope");
    const account = expectValid(AccountSchema, dataOf(r), "account");
    expect(account.capacity.sites.total).toBe(25);
  });

  it("GET /sites, unpaginated: every record", async () => {
    const r = await t.get("/sites");
    const env = expectValid(EnvelopeSchema, r.body, "envelope");
    expect(env.page).toBeUndefined();
    const data = dataOf(r) as unknown[];
    expect(data).toHaveLength(25);
    data.forEach((s, i) => expectValid(SiteSchema, s, `site [${i}]`));
  });

  it("GET /sites, paginated: envelope with page, every record", async () => {
    for (const page of [1, 2, 3]) {
      const r = await t.get(`/sites?paginate=true&per_page=10&page=${page}`);
      const env = expectValid(EnvelopeSchema, r.body, "envelope");
      expectValid(PageSchema, env.page, "page");
      (dataOf(r) as unknown[]).forEach((s, i) => expectValid(SiteSchema, s, `page ${page} site [${i}]`));
    }
  });

  it("GET /sites/{id}: detail view", async () => {
    for (const s of sample) {
      const r = await t.get(`/sites/${s.id}`);
      expect(r.status).toBe(200);
      const detail = expectValid(SiteDetailSchema, dataOf(r), `site ${s.id}`);
      expect(detail.id).toBe(s.id);
      // The detail view's extra fields (spec: pageViews, cmsLoginUrl, collaborators, suite).
      expect(dataOf(r)).toMatchObject({ cmsLoginUrl: expect.any(String), collaborators: [], suite: null });
    }
  });

  it("per-site read endpoints", async () => {
    for (const s of sample) {
      const stats = await t.get(`/sites/${s.id}/statistics`);
      expectValid(StatisticsSchema, dataOf(stats), `statistics ${s.id}`);

      const usage = dataOf(await t.get(`/sites/${s.id}/reports/usage`)) as unknown[];
      expect(usage.length).toBeGreaterThan(0);
      usage.forEach((u, i) => expectValid(UsageReportEntrySchema, u, `usage ${s.id}[${i}]`));

      const perf = dataOf(await t.get(`/sites/${s.id}/reports/performance/latest`));
      const report = expectValid(PerformanceReportSchema, perf, `performance ${s.id}`);
      expect(report.desktop_report).toBeTruthy();
      expect(report.mobile_report).toBeTruthy();

      const domains = dataOf(await t.get(`/sites/${s.id}/domains`)) as unknown[];
      domains.forEach((d, i) => expectValid(DomainSchema, d, `domain ${s.id}[${i}]`));

      const backups = dataOf(await t.get(`/sites/${s.id}/backups`)) as unknown[];
      expect(backups.length).toBeGreaterThan(0);
      backups.forEach((b, i) => expectValid(BackupEntrySchema, b, `backup ${s.id}[${i}]`));
    }
  });

  it("POST /sites/{id}/metrics: result and every period", async () => {
    for (const s of sample) {
      const r = await t.post(`/sites/${s.id}/metrics`, {
        start_at: "3 hours ago",
        metrics: ["requests_persec", "response_bytes_persec"],
        dimensions: ["page_is_cached"],
      });
      expect(r.status).toBe(200);
      const result = expectValid(MetricsResultSchema, dataOf(r), `metrics ${s.id}`);
      // 3 h at a 60 s resolution: 180 complete minutes plus the current one = 181 periods.
      expect(result.periods).toHaveLength(181);
      result.periods.forEach((p, i) => expectValid(MetricsPeriodSchema, p, `period ${s.id}[${i}]`));
    }
  });

  it("security alerts: objects grouped by status, every item", async () => {
    let items = 0;
    for (const s of sample) {
      for (const kind of ["plugins", "themes"] as const) {
        const r = await t.get(`/sites/${s.id}/security-alerts/${kind}`);
        const groups = expectValid(SecurityAlertGroupsSchema, dataOf(r), `${kind} ${s.id}`);
        // The spec's grouping keys.
        expect(Object.keys(groups).sort()).toEqual(
          kind === "plugins"
            ? ["active", "active-network", "drop-ins", "inactive", "must-use"]
            : ["active", "inactive", "parent"],
        );
        for (const [group, list] of Object.entries(groups)) {
          for (const item of list ?? []) {
            expectValid(SecurityAlertItemSchema, item, `${kind} ${s.id} ${group}`);
            items += 1;
          }
        }
      }
    }
    expect(items).toBeGreaterThan(20);
  });

  it("php and server logs: the log endpoints' own shape, every entry", async () => {
    for (const s of sample.slice(0, 4)) {
      for (const stream of ["php", "server"] as const) {
        const r = await t.get(`/sites/${s.id}/logs/${stream}`);
        expect(r.status).toBe(200);
        // No envelope on the log endpoints.
        expect(r.body).not.toHaveProperty("data");
        const page = expectValid(LogPageSchema, r.body, `${stream} ${s.id}`);
        expect(page.logs?.length).toBeGreaterThan(0);
        expect(typeof page.scroll_id).toBe("string");
        const schema = stream === "php" ? PhpLogEntrySchema : ServerLogEntrySchema;
        (page.logs ?? []).forEach((e, i) => expectValid(schema, e, `${stream} ${s.id}[${i}]`));
        // The second page of the scroll too.
        const next = await t.get(`/sites/${s.id}/logs/${stream}?scroll_id=${page.scroll_id}`);
        const page2 = expectValid(LogPageSchema, next.body, `${stream} ${s.id} page 2`);
        (page2.logs ?? []).forEach((e, i) => expectValid(schema, e, `${stream} ${s.id} p2[${i}]`));
      }
    }
  });
});
