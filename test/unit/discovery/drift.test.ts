/**
 * Schema drift in the site list, through the real API client and discovery: fields spelt in another
 * case are read, a renamed published field is counted and its series left out (the sites stay), and a
 * listing in which no record is usable keeps the last good list, fails the run naming the field and
 * drops sitehost_up to 0.
 */
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { ApiSchemaError } from "../../../src/api/errors.js";
import { ConfigSchema } from "../../../src/config/schema.js";
import { SiteDiscovery } from "../../../src/discovery/discovery.js";
import { METRIC_FAMILIES } from "../../../src/metrics/families.js";
import { MetricStore } from "../../../src/metrics/store.js";
import {
  makeClient,
  metricValue,
  ok,
  site,
  startServer,
  type TestClient,
  type TestServer,
} from "../api/helpers.js";

let server: TestServer | undefined;
let tc: TestClient | undefined;
afterEach(async () => {
  await tc?.client.close();
  await server?.close();
  tc = undefined;
  server = undefined;
});

const SITES = [1, 2, 3];
const account = {
  maxSites: 10,
  capacity: { sites: { maxBillable: 10, maxStaging: 5, billable: 3, staging: 0, total: 3 } },
};
const snakeCase = (record: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(record).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v]),
  );
const page = { currentPage: 1, nextPage: null, lastPage: 1, perPage: 100, totalItems: 3 };

/** A platform whose site list the test rewrites between discoveries. */
async function setup() {
  const listing: { shape: (r: Record<string, unknown>) => Record<string, unknown> } = { shape: (r) => r };
  server = await startServer((req) => {
    if (req.path === "/v1/account") return ok(account);
    return ok(
      SITES.map((id) => listing.shape(site(id))),
      { page },
    );
  });
  tc = makeClient(server);
  const store = new MetricStore(METRIC_FAMILIES);
  const discovery = new SiteDiscovery({
    sites: ConfigSchema.parse({}).sites,
    api: tc.client,
    store,
    registry: tc.registry,
    logger: pino({ level: "silent" }),
  });
  const signal = new AbortController().signal;
  const infoSeries = () => store.render().match(/^sitehost_site_info\{.*$/gm) ?? [];
  return { listing, discovery, store, signal, infoSeries, registry: tc.registry };
}

describe("schema drift in the site list", () => {
  it("every field in snake_case: sites read as before, their labels kept, nothing counted as drift", async () => {
    const t = await setup();
    t.listing.shape = snakeCase;
    expect((await t.discovery.refresh(t.signal)).result).toBe("success");
    expect(t.discovery.sites.map((s) => s.id)).toEqual(SITES);
    expect(t.discovery.sites[0]).toMatchObject({
      displayName: "Site 1",
      datacenterCode: "us-east",
      kit: false,
    });
    expect(t.infoSeries()[0]).toContain('display_name="Site 1"');
    expect(await metricValue(t.registry, "sitehost_up", {})).toBe(1);
    expect(
      await metricValue(t.registry, "sitehost_exporter_api_field_drift_total", {
        endpoint: "/sites",
        field: "displayName",
      }),
    ).toBe(0);
  });

  it("a renamed published field: every site kept, the field counted as drift per record, its label empty", async () => {
    const t = await setup();
    t.listing.shape = ({ displayName, edgeCache, ...rest }) => ({
      ...rest,
      title: displayName,
      cache: edgeCache,
    });
    expect((await t.discovery.refresh(t.signal)).result).toBe("success");
    expect(t.discovery.sites).toHaveLength(3);
    expect(t.infoSeries()).toHaveLength(3);
    expect(t.infoSeries()[0]).toContain('display_name=""');
    // A series of a field that is not there is left out, not guessed.
    expect(t.store.render()).not.toContain("sitehost_site_edge_cache_enabled{");
    expect(t.store.render()).toContain("sitehost_site_storage_used_bytes{");
    for (const field of ["displayName", "edgeCache"]) {
      expect(
        await metricValue(t.registry, "sitehost_exporter_api_field_drift_total", {
          endpoint: "/sites",
          field,
        }),
      ).toBe(3);
    }
    expect(await metricValue(t.registry, "sitehost_up", {})).toBe(1);
  });

  it("a field of the wrong type that is not needed: the record kept without it", async () => {
    const t = await setup();
    t.listing.shape = (r) => ({ ...r, tags: "blue,green", fileSystemUsageBytes: "1 GB" });
    await t.discovery.refresh(t.signal);
    expect(t.discovery.sites).toHaveLength(3);
    expect(t.discovery.sites[0]?.tags).toEqual([]);
    expect(t.store.render()).not.toMatch(/sitehost_site_storage_used_bytes\{[^}]*store="filesystem"/);
    expect(
      await metricValue(t.registry, "sitehost_exporter_api_field_drift_total", {
        endpoint: "/sites",
        field: "tags",
      }),
    ).toBe(3);
  });

  it("no usable record: the last good list and its series kept, the run failed naming the field, sitehost_up 0", async () => {
    const t = await setup();
    const heard: number[] = [];
    t.discovery.onSites((sites) => heard.push(sites.length));
    await t.discovery.refresh(t.signal);
    const before = t.store.render();
    expect(await metricValue(t.registry, "sitehost_up", {})).toBe(1);

    t.listing.shape = ({ name, ...rest }) => ({ ...rest, site_name: name });
    const err = await t.discovery.refresh(t.signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiSchemaError);
    expect((err as ApiSchemaError).field).toBe("data[0].name");
    expect((err as Error).message).toMatch(
      /all 3 site records were rejected .*keeping the last good site list/,
    );
    expect(await metricValue(t.registry, "sitehost_up", {})).toBe(0);
    expect(t.discovery.sites.map((s) => s.id)).toEqual(SITES);
    expect(t.store.render()).toBe(before);
    expect(heard).toEqual([3]);
    expect(
      await metricValue(t.registry, "sitehost_exporter_api_invalid_records_total", {
        endpoint: "/sites",
        field: "name",
      }),
    ).toBe(3);

    // The platform fixes its format: back to normal.
    t.listing.shape = (r) => r;
    expect((await t.discovery.refresh(t.signal)).result).toBe("success");
    expect(await metricValue(t.registry, "sitehost_up", {})).toBe(1);
  });
});
