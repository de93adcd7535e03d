/**
 * pagination (`paginate=true`, `page`, stop at nextPage null, loop guard) and per-record
 * validation: one malformed record is skipped, reported in `rejected` with endpoint and field, counted in
 * sitehost_exporter_api_invalid_records_total and logged; the good records still arrive.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ApiSchemaError } from "../../../src/api/errors.js";
import {
  domain,
  makeClient,
  metricValue,
  ok,
  site,
  startServer,
  type Reply,
  type TestClient,
  type TestServer,
} from "./helpers.js";

let server: TestServer | undefined;
let tc: TestClient | undefined;
afterEach(async () => {
  await tc?.client.close();
  await server?.close();
  tc = undefined;
  server = undefined;
});

function page(currentPage: number, nextPage: number | null, lastPage: number) {
  return { currentPage, nextPage, lastPage, perPage: 2, totalItems: 5 };
}

describe("pagination", () => {
  it("follows nextPage across three pages and stops at null", async () => {
    // 5 sites, 2 per page: [1,2] [3,4] [5].
    const pages: Record<string, Reply> = {
      "1": ok([site(1), site(2)], { page: page(1, 2, 3) }),
      "2": ok([site(3), site(4)], { page: page(2, 3, 3) }),
      "3": ok([site(5)], { page: page(3, null, 3) }),
    };
    server = await startServer((req) => pages[req.query.get("page") ?? ""] ?? { status: 400 });
    tc = makeClient(server);
    const result = await tc.client.allSites();
    expect(result.items.map((s) => s.id)).toEqual([1, 2, 3, 4, 5]);
    expect(result.rejected).toBe(0);
    const api = server.api();
    expect(api.map((r) => r.query.get("page"))).toEqual(["1", "2", "3"]);
    expect(api.every((r) => r.path === "/v1/sites" && r.query.get("paginate") === "true")).toBe(true);
  });

  it("a nextPage that points back to a page already read → ApiSchemaError, no endless loop", async () => {
    // Page 2 says nextPage 1: already seen.
    server = await startServer((req) =>
      req.query.get("page") === "1"
        ? ok([site(1)], { page: page(1, 2, 3) })
        : ok([site(2)], { page: page(2, 1, 3) }),
    );
    tc = makeClient(server);
    const err = await tc.client.allSites().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiSchemaError);
    expect((err as ApiSchemaError).field).toBe("page.nextPage");
    expect((err as Error).message).toBe(
      "/sites: unexpected response shape at page.nextPage: pagination does not advance (page 2 → 1)",
    );
    expect(server.api()).toHaveLength(2);
  });

  it("a nextPage beyond lastPage → ApiSchemaError after one request", async () => {
    server = await startServer(() => ok([site(1)], { page: page(1, 9, 3) }));
    tc = makeClient(server);
    await expect(tc.client.allSites()).rejects.toBeInstanceOf(ApiSchemaError);
    expect(server.api()).toHaveLength(1);
  });
});

describe("one malformed record among good ones", () => {
  it("is skipped, reported with endpoint and field, counted and logged", async () => {
    // Record [1] has domainName: true (the schema wants the name, which labels every series of it;
    // a number would be read as its text).
    server = await startServer(() =>
      ok([
        domain("a.example.test"),
        { ...domain("b.example.test"), domainName: true },
        domain("c.example.test"),
      ]),
    );
    tc = makeClient(server);
    const result = await tc.client.domains({ id: 12 });
    expect(result.items.map((d) => d.domainName)).toEqual(["a.example.test", "c.example.test"]);
    expect(result.rejected).toBe(1);
    expect(result.firstRejected).toMatchObject({
      endpoint: "/sites/{id}/domains",
      field: "data[1].domainName",
    });
    expect(result.firstRejected?.problem).toContain("got true");
    expect(
      await metricValue(tc.registry, "sitehost_exporter_api_invalid_records_total", {
        endpoint: "/sites/{id}/domains",
        field: "domainName",
      }),
    ).toBe(1);
    const warned = tc.logs
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.field === "data[1].domainName");
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ level: 40, endpoint: "/sites/{id}/domains" });
  });

  it("a malformed record on page 2 of /sites is skipped; pages 1 and 3 still arrive", async () => {
    const bad = { ...site(4), state: { code: 17 } };
    const pages: Record<string, Reply> = {
      "1": ok([site(1), site(2)], { page: page(1, 2, 3) }),
      "2": ok([site(3), bad], { page: page(2, 3, 3) }),
      "3": ok([site(5)], { page: page(3, null, 3) }),
    };
    server = await startServer((req) => pages[req.query.get("page") ?? ""] ?? { status: 400 });
    tc = makeClient(server);
    const result = await tc.client.allSites();
    expect(result.items.map((s) => s.id)).toEqual([1, 2, 3, 5]);
    expect(result.rejected).toBe(1);
    expect(result.firstRejected).toEqual({
      endpoint: "/sites",
      field: "data[1].state",
      problem: expect.stringContaining('got {"code":17}'),
    });
    expect(
      await metricValue(tc.registry, "sitehost_exporter_api_invalid_records_total", {
        endpoint: "/sites",
        field: "state",
      }),
    ).toBe(1);
  });

  it("a single-object response that does not fit → ApiSchemaError naming the field, counted", async () => {
    server = await startServer(() => ok({ ...site(3), name: ["lots"] }));
    tc = makeClient(server);
    const err = await tc.client.site({ id: 3 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiSchemaError);
    expect((err as ApiSchemaError).field).toBe("data.name");
    expect(
      await metricValue(tc.registry, "sitehost_exporter_api_invalid_records_total", {
        endpoint: "/sites/{id}",
        field: "name",
      }),
    ).toBe(1);
  });
});

describe("shape variants", () => {
  it("security alerts as a flat list: each item's status groups it; a bad item is reported at its index", async () => {
    const item = (name: string, status: unknown) => ({ name, version: "1.0", status, security_alerts: [] });
    server = await startServer(() => ok([item("shop", "active"), item("seo", "inactive"), { version: "2" }]));
    tc = makeClient(server);
    const result = await tc.client.pluginAlerts({ id: 7 });
    expect(result.items.map((g) => [g.item.name, g.item.status])).toEqual([
      ["shop", "active"],
      ["seo", "inactive"],
    ]);
    expect(result.rejected).toBe(1);
    expect(result.firstRejected).toEqual({
      endpoint: "/sites/{id}/security-alerts/plugins",
      field: "data[2].name",
      problem: expect.any(String),
    });
  });

  it("a backup time that cannot be read is reported, not published as a wrong time", async () => {
    server = await startServer(() =>
      ok([
        { timestamp: "2026-03-15-02-30", siteId: 7, databaseBackupId: 1, filesystemBackupId: 2 },
        { timestamp: "last tuesday", siteId: 7, databaseBackupId: 3, filesystemBackupId: 4 },
      ]),
    );
    tc = makeClient(server);
    const result = await tc.client.backups({ id: 7 });
    expect(result.items.map((b) => b.databaseBackupId)).toEqual([1]);
    expect(result.firstRejected).toMatchObject({
      endpoint: "/sites/{id}/backups",
      field: "data[1].timestamp",
    });
  });
});

describe("drift in the other lists: what is needed is required, the rest is counted", () => {
  it("domains whose health flags were renamed are kept by name, each flag counted once per record", async () => {
    const renamed = (name: string) => {
      const { healthy, dnsConfirmed, ...rest } = domain(name);
      return { ...rest, is_healthy: healthy, dns_ok: dnsConfirmed };
    };
    server = await startServer(() => ok([renamed("a.example.test"), renamed("b.example.test")]));
    tc = makeClient(server);
    const result = await tc.client.domains({ id: 12 });
    expect(result.items.map((d) => [d.domainName, d.healthy, d.provisioned])).toEqual([
      ["a.example.test", undefined, true],
      ["b.example.test", undefined, true],
    ]);
    expect(result.rejected).toBe(0);
    for (const field of ["healthy", "dnsConfirmed"]) {
      expect(
        await metricValue(tc.registry, "sitehost_exporter_api_field_drift_total", {
          endpoint: "/sites/{id}/domains",
          field,
        }),
      ).toBe(2);
    }
    // One warning per field, not one per record.
    expect(tc.logs.filter((l) => l.includes('"field":"healthy"'))).toHaveLength(1);
  });

  it("an account and a backup listing in snake_case are read as documented", async () => {
    server = await startServer((req) =>
      req.path === "/v1/account"
        ? ok({
            max_sites: 10,
            capacity: { sites: { max_billable: 8, max_staging: 4, billable: 2, staging: 1, total: 3 } },
          })
        : ok([{ timestamp: "2026-03-15-02-30", database_backup_id: 1, filesystem_backup_id: null }]),
    );
    tc = makeClient(server);
    expect(await tc.client.account()).toMatchObject({
      maxSites: 10,
      capacity: { sites: { maxBillable: 8 } },
    });
    const backups = await tc.client.backups({ id: 7 });
    expect(backups.items).toEqual([
      { timestamp: "2026-03-15-02-30", databaseBackupId: 1, filesystemBackupId: null },
    ]);
  });
});
