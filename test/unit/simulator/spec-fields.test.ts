/**
 * Fields pinned to the platform documentation's wording with values worked out by hand, and every
 * endpoint's records checked against the documented field lists (shapes.ts), for several kinds of
 * site. Clock: T0 = 2026-11-22T12:00:00Z = 1795348800 s.
 */
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allSites, dataOf, startTestSim, T0, T0_SECONDS, type SiteRecord, type TestSim } from "./helpers.js";
import { SHAPES, shapeProblems, type Shape } from "./shapes.js";

const NOT_FOUND = "We could not locate the requested resources.";

/** Every field of the documented Site table (the list view carries exactly these). */
const SITE_FIELDS = [
  "id",
  "created",
  "accountId",
  "clonedFromId",
  "collaboratorsCount",
  "datacenterCode",
  "datacenterName",
  "displayName",
  "domainsCount",
  "ecommerce",
  "edgeCache",
  "edgeCacheDefensiveMode",
  "edgeCacheDefensiveModeUntil",
  "favorite",
  "fileSystemUsageBytes",
  "databaseUsageBytes",
  "maxFileSystemUsageBytes",
  "warningHeadroomFileSystemUsageBytes",
  "maxDatabaseUsageBytes",
  "warningHeadroomDatabaseUsageBytes",
  "ipAddress",
  "ipAddressOne",
  "ipAddressTwo",
  "name",
  "state",
  "url",
  "staging",
  "sandbox",
  "kit",
  "sftpDomain",
  "phpVersion",
  "cmsVersion",
  "tags",
  "cmsEnvironmentType",
  "lightWeight404",
  "multisiteSupport",
].sort();

let t: TestSim;
let sites: SiteRecord[];
const idAt = (i: number): number => t.sim.control.sites()[i]?.site.id as number;

beforeAll(async () => {
  t = await startTestSim({ sites: 25, seed: 1, tokenLifetimeSeconds: 120 });
  sites = await allSites(t);
});
afterAll(() => t.close());

describe("documented wording, hand-worked values", () => {
  it("site list records carry exactly the documented Site fields", () => {
    for (const s of sites) expect(Object.keys(s).sort()).toEqual(SITE_FIELDS);
  });

  it("edgeCacheDefensiveModeUntil is integer epoch seconds", () => {
    // Site index 4 is in defensive mode until now + 1 h: 1795348800 + 3600 = 1795352400.
    const defensive = sites.filter((s) => s.edgeCacheDefensiveMode === true);
    expect(defensive.map((s) => s.id)).toEqual([idAt(4)]);
    expect(defensive[0]?.edgeCacheDefensiveModeUntil).toBe(1_795_352_400);
    for (const s of sites.filter((x) => x.edgeCacheDefensiveMode === false))
      expect(s.edgeCacheDefensiveModeUntil).toBeNull();
  });

  it("backup timestamps are 'YYYY-MM-DD-HH-MM'; site index 1's newest is 50 h old", async () => {
    const r = await t.get(`/sites/${idAt(1)}/backups`);
    const list = dataOf(r) as Array<{
      timestamp: string;
      databaseBackupId: number;
      filesystemBackupId: number;
    }>;
    for (const b of list) expect(b.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}-\d{2}-\d{2}$/);
    // 2026-11-22 12:00 minus 50 h = 2026-11-20 10:00; daily backups before it, newest first.
    expect(list[0]?.timestamp).toBe("2026-11-20-10-00");
    expect(list[1]?.timestamp).toBe("2026-11-19-10-00");
    expect(Number.isInteger(list[0]?.databaseBackupId)).toBe(true);
  });

  it("server log timestamp is integer epoch seconds, php log timestamp is ISO 8601", async () => {
    const id = idAt(0);
    const server = (await t.get(`/sites/${id}/logs/server`)).body as {
      logs: Array<{ timestamp: unknown; date: unknown }>;
    };
    expect(server.logs.length).toBeGreaterThan(0);
    for (const e of server.logs) {
      expect(Number.isInteger(e.timestamp)).toBe(true);
      // Within the 7 days of retention before T0 (604800 s).
      expect(e.timestamp as number).toBeLessThanOrEqual(T0_SECONDS);
      expect(e.timestamp as number).toBeGreaterThanOrEqual(T0_SECONDS - 604_800);
      // `date` is the same instant as ISO text.
      expect(e.date).toBe(new Date((e.timestamp as number) * 1000).toISOString());
    }
    const php = (await t.get(`/sites/${id}/logs/php`)).body as {
      logs: Array<{ timestamp: unknown; line: unknown }>;
    };
    expect(php.logs.length).toBeGreaterThan(0);
    for (const e of php.logs) {
      expect(e.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/);
      expect(Number.isInteger(e.line)).toBe(true);
    }
  });

  it("usage storage is in GiB (1024^3 bytes), latest cycle = the site's file system + database", async () => {
    for (const s of sites.slice(0, 5)) {
      const usage = dataOf(await t.get(`/sites/${s.id}/reports/usage`)) as Array<{
        billing_cycle: { start_date: string; site: { daily_average_storage_usage_in_gigabytes: number } };
      }>;
      const latest = [...usage].sort((a, b) =>
        b.billing_cycle.start_date.localeCompare(a.billing_cycle.start_date),
      )[0];
      // The current cycle starts on the first of T0's month.
      expect(latest?.billing_cycle.start_date).toBe("2026-11-01");
      const bytes = (s.fileSystemUsageBytes as number) + (s.databaseUsageBytes as number);
      const gib = bytes / (1024 * 1024 * 1024);
      expect(latest?.billing_cycle.site.daily_average_storage_usage_in_gigabytes).toBeCloseTo(gib, 2);
      // Not decimal gigabytes: bytes / 1e9 is 7.4% larger, far outside the rounding.
      expect(
        Math.abs((latest?.billing_cycle.site.daily_average_storage_usage_in_gigabytes ?? 0) - bytes / 1e9),
      ).toBeGreaterThan(0.05 * gib);
    }
  });

  it("usage cycles arrive out of chronological order", async () => {
    const usage = dataOf(await t.get(`/sites/${idAt(0)}/reports/usage`)) as Array<{
      billing_cycle: { start_date: string };
    }>;
    const starts = usage.map((u) => u.billing_cycle.start_date);
    // Three monthly cycles: September, October, November 2026, in neither ascending nor descending order.
    expect([...starts].sort()).toEqual(["2026-09-01", "2026-10-01", "2026-11-01"]);
    expect(starts).not.toEqual([...starts].sort());
    expect(starts).not.toEqual([...starts].sort().reverse());
  });

  it("traffic periods are epoch seconds at 60 s, the newest one still filling", async () => {
    const id = idAt(0);
    const ask = async () =>
      dataOf(
        await t.post(`/sites/${id}/metrics`, {
          start_at: "1 hour ago",
          metrics: ["requests_persec"],
          dimensions: ["page_is_cached"],
        }),
      ) as {
        search: { startAt: number; endAt: number; resolution: number };
        periods: Array<{
          timestamp: number;
          page_is_cached: { requests_persec: { true: number; false: number } };
        }>;
      };
    t.clock.ms = T0 + 30_000; // 12:00:30
    const first = await ask();
    // endAt = 1795348830; startAt = endAt - 3600 = 1795345230; periods from 11:00:00 (1795345200) to 12:00:00.
    expect(first.search).toMatchObject({ startAt: 1_795_345_230, endAt: 1_795_348_830, resolution: 60 });
    expect(first.periods[0]?.timestamp).toBe(1_795_345_200);
    const newest = first.periods.at(-1);
    expect(newest?.timestamp).toBe(T0_SECONDS);
    // The newest period has run 30 of its 60 seconds.
    expect((newest?.timestamp ?? 0) + 60).toBeGreaterThan(first.search.endAt);
    t.clock.ms = T0 + 50_000; // 12:00:50: the same minute, 50 of 60 seconds
    const second = await ask();
    const total = (p: (typeof first.periods)[number] | undefined) =>
      (p?.page_is_cached.requests_persec.true ?? 0) + (p?.page_is_cached.requests_persec.false ?? 0);
    // The filling minute grows by 50/30 = 1.667; complete minutes do not change.
    expect(total(second.periods.at(-1)) / total(newest)).toBeCloseTo(50 / 30, 1);
    expect(second.periods.at(-2)).toEqual(first.periods.at(-2));
    t.clock.ms = T0;
  });

  it("token expires_in equals the configured lifetime", async () => {
    const res = await fetch(`${t.sim.authUrl}/auth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        grant_type: "client_credentials",
        client_id: t.sim.clientId,
        client_secret: t.sim.clientSecret,
      }),
    });
    const body = (await res.json()) as { expires_in: number; token_type: string; created_at: number };
    expect(body.expires_in).toBe(120);
    expect(body.token_type).toBe("Bearer");
    expect(body.created_at).toBe(T0_SECONDS);
  });

  it("401 with an envelope body: no token, a wrong token, an expired token", async () => {
    const expectEnvelope401 = (r: { status: number; body: unknown }) => {
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ message: expect.any(String), data: null, errors: expect.any(Array) });
    };
    expectEnvelope401(await t.get("/account", null));
    expectEnvelope401(await t.get("/account", "not-a-token"));
    const token = await t.newToken(); // issued at T0, lifetime 120 s
    t.clock.ms = T0 + 119_000;
    expect((await t.get("/account", token)).status).toBe(200);
    t.clock.ms = T0 + 121_000;
    expectEnvelope401(await t.get("/account", token));
    expect(t.sim.control.stats().expiredTokenUses).toBeGreaterThanOrEqual(1);
    t.clock.ms = T0;
  });

  it("a wrong client secret is refused", async () => {
    const res = await fetch(`${t.sim.authUrl}/auth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        grant_type: "client_credentials",
        client_id: t.sim.clientId,
        client_secret: "wrong",
      }),
    });
    expect(res.status).toBe(401);
  });

  it("an unknown site is a 404 with the documented generic message", async () => {
    for (const path of ["/sites/1", "/sites/1/domains", "/sites/1/statistics", "/sites/1/logs/php"]) {
      const r = await t.get(path);
      expect(r.status).toBe(404);
      expect(r.body).toMatchObject({ message: NOT_FOUND, data: null });
    }
  });

  it("pagination: 25 sites at per_page 10 are pages 1..3, the last with nextPage null", async () => {
    const seen: number[] = [];
    const expected = [
      { currentPage: 1, nextPage: 2, lastPage: 3, perPage: 10, totalItems: 25, size: 10 },
      { currentPage: 2, nextPage: 3, lastPage: 3, perPage: 10, totalItems: 25, size: 10 },
      { currentPage: 3, nextPage: null, lastPage: 3, perPage: 10, totalItems: 25, size: 5 },
    ];
    for (const e of expected) {
      const r = await t.get(`/sites?paginate=true&per_page=10&page=${e.currentPage}`);
      const body = r.body as { page: Record<string, unknown>; data: SiteRecord[] };
      const { size, ...page } = e;
      expect(body.page).toEqual(page);
      expect(body.data).toHaveLength(size);
      seen.push(...body.data.map((s) => s.id));
    }
    // The walk sees every site once, in the unpaginated order.
    expect(seen).toEqual(sites.map((s) => s.id));
  });

  it("GET parameters in a JSON body work like query parameters (the documentation says: accept both)", async () => {
    const res = await request(`${t.sim.apiUrl}/sites`, {
      method: "GET",
      headers: { authorization: `Bearer ${t.token}`, "content-type": "application/json" },
      body: JSON.stringify({ paginate: true, per_page: 10, page: 3 }),
    });
    const body = (await res.body.json()) as {
      page: { currentPage: number; nextPage: number | null };
      data: unknown[];
    };
    expect(res.statusCode).toBe(200);
    expect(body.page).toMatchObject({ currentPage: 3, nextPage: null });
    expect(body.data).toHaveLength(5);
  });

  it("favorites come first", () => {
    // Favorites are fleet indexes 0 and 13 (every 13th): the first two records, then none.
    const favorites = sites.map((s) => s.favorite);
    expect(favorites.slice(0, 2)).toEqual([true, true]);
    expect(favorites.slice(2).every((f) => f === false)).toBe(true);
    expect(sites.slice(0, 2).map((s) => s.id)).toEqual([idAt(0), idAt(13)]);
  });
});

/** Fleet indexes of several kinds: live favorite, 96% full, disabled, deploying, staging, sandbox, kit. */
const SAMPLE = [0, 2, 3, 5, 6, 7, 8, 9, 10, 12];

function expectShape(value: unknown, shape: Shape, what: string): void {
  expect(shapeProblems(value, shape), what).toEqual([]);
}

function expectEnvelope(r: { status: number; body: unknown }, paged = false): void {
  expect(r.status).toBe(200);
  const body = r.body as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(
    paged ? ["data", "errors", "message", "page"] : ["data", "errors", "message"],
  );
  expect(body).toMatchObject({ message: "Success", errors: null });
  if (paged) expectShape(body.page, SHAPES.page, "page");
}

/** The performance report's documented fields, one strategy. */
function performanceShape(): Shape {
  const shape: Record<string, Shape[string]> = {
    created_at: "any",
    updated_at: "any",
    final_url: "string",
    thumbnail_location: "string",
    audit_tool_version: "any",
    fetch_time: "any",
  };
  for (const c of ["performance", "accessibility", "best_practices", "seo"]) {
    shape[`${c}_score`] = "number";
    shape[`${c}_title`] = "string";
  }
  const audits = [
    "first_contentful_paint",
    "interactive",
    "speed_index",
    "total_blocking_time",
    "largest_contentful_paint",
    "cumulative_layout_shift",
    "server_response_time",
  ];
  for (const a of audits) {
    shape[`${a}_title`] = "string";
    shape[`${a}_description`] = "string";
    shape[`${a}_score`] = "any";
    shape[`${a}_display_value`] = "any";
    shape[`${a}_numeric_value`] = "string";
    shape[`${a}_numeric_unit`] = "any";
  }
  return shape;
}

describe("every endpoint's records carry exactly the documented fields", () => {
  const sample = () => SAMPLE.map((i) => t.sim.control.sites()[i]?.site.id as number);

  it("token", async () => {
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
    expectShape(await res.json(), SHAPES.token, "token");
  });

  it("account, sites (both views), site detail", async () => {
    const account = await t.get("/account");
    expectEnvelope(account);
    expectShape(dataOf(account), SHAPES.account, "account");
    const list = await t.get("/sites");
    expectEnvelope(list);
    for (const s of dataOf(list) as unknown[]) expectShape(s, SHAPES.site, "site");
    const paged = await t.get("/sites?paginate=true&per_page=10&page=2");
    expectEnvelope(paged, true);
    for (const id of sample()) {
      const detail = await t.get(`/sites/${id}`);
      expectEnvelope(detail);
      expectShape(
        dataOf(detail),
        {
          ...SHAPES.site,
          pageViews: "object",
          cmsLoginUrl: "string",
          collaborators: "array",
          suite: ["null", "object"],
        },
        `detail ${id}`,
      );
    }
  });

  it("statistics, usage, performance, traffic metrics", async () => {
    for (const id of sample()) {
      expectShape(dataOf(await t.get(`/sites/${id}/statistics`)), SHAPES.statistics, `statistics ${id}`);
      for (const u of dataOf(await t.get(`/sites/${id}/reports/usage`)) as unknown[])
        expectShape(u, SHAPES.usage, `usage ${id}`);
      const perf = dataOf(await t.get(`/sites/${id}/reports/performance/latest`));
      expectShape(
        perf,
        { desktop_report: performanceShape(), mobile_report: performanceShape() },
        `perf ${id}`,
      );
      const metrics = dataOf(
        await t.post(`/sites/${id}/metrics`, {
          start_at: "3 hours ago",
          metrics: ["requests_persec", "response_bytes_persec"],
          dimensions: ["page_is_cached"],
        }),
      ) as { periods: unknown[] };
      expectShape(metrics, SHAPES.metrics, `metrics ${id}`);
      // 3 h at a 60 s resolution: 180 complete minutes plus the current one.
      expect(metrics.periods).toHaveLength(181);
    }
  });

  it("security alerts: the documented grouping keys, every item and alert", async () => {
    let alerts = 0;
    for (const id of sample()) {
      for (const kind of ["plugins", "themes"] as const) {
        const groups = dataOf(await t.get(`/sites/${id}/security-alerts/${kind}`)) as Record<
          string,
          unknown[]
        >;
        expect(Object.keys(groups).sort()).toEqual(
          kind === "plugins"
            ? ["active", "active-network", "drop-ins", "inactive", "must-use"]
            : ["active", "inactive", "parent"],
        );
        for (const item of Object.values(groups).flat()) {
          expectShape(item, SHAPES.extension, `${kind} ${id}`);
          for (const a of (item as { security_alerts: unknown[] }).security_alerts) {
            expectShape(a, SHAPES.securityAlert, `alert ${id}`);
            alerts += 1;
          }
        }
      }
    }
    expect(alerts).toBeGreaterThan(3);
  });

  it("domains and backups", async () => {
    let domains = 0;
    for (const id of sample()) {
      for (const d of dataOf(await t.get(`/sites/${id}/domains`)) as unknown[]) {
        expectShape(d, SHAPES.domain, `domain ${id}`);
        domains += 1;
      }
      for (const b of dataOf(await t.get(`/sites/${id}/backups`)) as unknown[])
        expectShape(b, SHAPES.backup, `backup ${id}`);
    }
    expect(domains).toBeGreaterThan(3);
  });

  it("php and server logs: {total_results, logs, scroll_id}, no envelope, every entry", async () => {
    for (const id of sample().slice(0, 3)) {
      for (const stream of ["php", "server"] as const) {
        const r = await t.get(`/sites/${id}/logs/${stream}`);
        expect(r.status).toBe(200);
        expect(Object.keys(r.body as object).sort()).toEqual(["logs", "scroll_id", "total_results"]);
        const page = r.body as { logs: unknown[]; scroll_id: string; total_results: number };
        expect(Number.isInteger(page.total_results)).toBe(true);
        expect(page.logs.length).toBeGreaterThan(0);
        for (const e of page.logs) expectShape(e, SHAPES[stream], `${stream} ${id}`);
      }
    }
  });

  it("activity logs: envelope with page, every entry", async () => {
    const account = await t.post("/account/logs/activity", { page: 1, per_page: 50 });
    expectEnvelope(account, true);
    const entries = dataOf(account) as Array<{ source: string }>;
    expect(entries.length).toBe(50);
    for (const e of entries) {
      expectShape(e, SHAPES.activity, "account activity");
      expect(["ui", "api.v1", "systems"]).toContain(e.source);
    }
    for (const id of sample()) {
      const site = await t.post(`/sites/${id}/logs/activity`, {});
      expectEnvelope(site, true);
      for (const e of dataOf(site) as unknown[]) expectShape(e, SHAPES.activity, `site activity ${id}`);
    }
  });

  it("zones, zone records, SSL details", async () => {
    const zones = await t.get("/zones");
    expectEnvelope(zones);
    const list = dataOf(zones) as Array<{ id: number }>;
    expect(list.length).toBeGreaterThan(20);
    let ssl = 0;
    for (const z of list.slice(0, 12)) {
      expectShape(z, SHAPES.zone, "zone");
      const withRecords = await t.get(`/zones/${z.id}/records`);
      expectEnvelope(withRecords);
      const zone = dataOf(withRecords) as {
        records: Array<{ id: number; type: string; siteId: number | null }>;
      };
      expectShape(zone, SHAPES.zoneWithRecords, `zone ${z.id}`);
      for (const r of zone.records) {
        expectShape(r, SHAPES.record, `record ${r.id}`);
        if (r.type !== "A" || r.siteId === null) continue;
        const details = await t.get(`/zones/${z.id}/records/${r.id}/ssl`);
        if (details.status === 400) continue; // a site without certificate data yet
        expectEnvelope(details);
        expectShape(dataOf(details), SHAPES.ssl, `ssl ${r.id}`);
        ssl += 1;
      }
    }
    expect(ssl).toBeGreaterThan(5);
  });

  it("git history, on-demand backups, restores", async () => {
    const seen = { deploy: 0, ondemand: 0, restore: 0 };
    const check = (records: unknown[], kind: keyof typeof seen, id: number) => {
      for (const r of records) expectShape(r, SHAPES[kind], `${kind} ${id}`);
      seen[kind] += records.length;
    };
    for (const id of sample()) {
      const git = await t.get(`/sites/${id}/git/history`);
      if (git.status === 200) {
        expectEnvelope(git, true);
        check(dataOf(git) as unknown[], "deploy", id);
      } else expect(git.status).toBe(422);
      const backups = await t.get(`/sites/${id}/ondemand-backups`);
      expectEnvelope(backups);
      check(dataOf(backups) as unknown[], "ondemand", id);
      const r = await t.get(`/sites/${id}/restores`);
      expectEnvelope(r, true);
      check(dataOf(r) as unknown[], "restore", id);
    }
    const { deploy: deploys, ondemand, restore: restores } = seen;
    expect(deploys).toBeGreaterThan(5);
    expect(ondemand).toBeGreaterThan(5);
    expect(restores).toBeGreaterThan(3);
  });
});

describe("time forms of the new records, by hand", () => {
  it("on-demand backups: epoch seconds, 'YYYY-MM-DD HH:MM:SS', sizes as strings", async () => {
    // Fleet index 0 uses all three file-system slots.
    const list = dataOf(await t.get(`/sites/${idAt(0)}/ondemand-backups`)) as Array<{
      type: string;
      completed: number;
      backupTimestamp: string;
      bytes: string;
      deleteAt: number;
    }>;
    const fs = list.filter((b) => b.type === "fs");
    expect(fs).toHaveLength(3);
    for (const b of fs) {
      expect(b.backupTimestamp).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
      // The same instant as `completed`.
      expect(Date.parse(`${b.backupTimestamp.replace(" ", "T")}Z`) / 1000).toBe(b.completed);
      expect(b.bytes).toMatch(/^\d+$/);
      expect(b.deleteAt).toBeGreaterThan(T0_SECONDS);
    }
    // Kept 30, 14 and 7 days from completion, newest first.
    expect(fs.map((b) => Math.round((b.deleteAt - b.completed) / 86_400))).toEqual([30, 14, 7]);
  });
});
