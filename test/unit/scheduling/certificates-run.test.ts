/**
 * The certificates collector run by the runner against an in-memory platform: DNS zones with A, CNAME
 * and TXT records, certificates with and without data, records of sites the exporter does not select.
 */
import { describe, expect, it } from "vitest";
import { ApiHttpError, ApiNetworkError } from "../../../src/api/errors.js";
import { ROUTES } from "../../../src/routes.js";
import type { Account, DnsRecord, Site, SslDetails, Zone } from "../../../src/api/schemas.js";
import { ConfigSchema } from "../../../src/config/schema.js";
import { collectionFor, EVERY_RUN } from "../../helpers/collection.js";
import { wakeCollectors } from "../../../src/collectors/index.js";
import { fakeApi, list } from "../../helpers/fakeApi.js";
import { makeSite } from "../collectors/fixtures.js";

const account: Account = {
  maxSites: 10,
  capacity: { sites: { maxBillable: 8, maxStaging: 2, billable: 3, staging: 0, total: 3 } },
};
// Expiry times, worked out independently: 2026-04-02T08:15:30Z and 2026-03-15T12:00:00Z.
const APRIL = 1775117730;
const NOON = 1773576000;

const rec = (zoneId: number, id: number, type: string, name: string, siteId: number | null): DnsRecord => ({
  id,
  zoneId,
  primary: false,
  type,
  name,
  value: "198.51.100.1",
  ttl: 3600,
  siteId,
  created: "2025-01-01T00:00:00.000Z",
});

const sslOf = (expiry: string | number, broken: boolean): SslDetails => ({
  force_ssl: true,
  acme_certificate_id: 1,
  validation_expiration: null,
  authz_uri: "https://acme.example/authz/1",
  options: ["http-01"],
  certificate_expiration_date: expiry,
  broken_record: broken,
  broken_check: null,
});

class Platform {
  sites: Site[] = [makeSite(1), makeSite(2), makeSite(3)];
  zones: Zone[] = [
    { id: 10, name: "acme.example" },
    { id: 20, name: "beta.example" },
    { id: 30, name: "gamma.example" },
  ];
  records = new Map<number, DnsRecord[]>([
    [
      10,
      [
        rec(10, 101, "A", "@", 1),
        rec(10, 102, "A", "www", 1), // no certificate data yet
        rec(10, 103, "CNAME", "www2", 1),
        rec(10, 104, "TXT", "@", null),
      ],
    ],
    [
      20,
      [
        rec(20, 201, "A", "@", 2),
        rec(20, 202, "A", "shop", 99), // a site of another account view / shard
        rec(20, 203, "A", "mail", null), // no site at all
        rec(20, 204, "MX", "@", null),
      ],
    ],
    [30, [rec(30, 301, "A", "@", 3)]], // site 3 is excluded by the config
  ]);
  certificates = new Map<number, SslDetails>([
    [101, sslOf("2026-04-02T08:15:30.000Z", false)],
    [201, sslOf(NOON, true)],
    [202, sslOf(NOON, false)],
    [301, sslOf(NOON, false)],
  ]);
  zoneFailures = new Map<number, Error>();
  sslFailures = new Map<number, Error>();
  zonesFailure: Error | undefined;
  /** Record ids asked for SSL details, in order. */
  asked: number[] = [];
  requests = 0;

  readonly api = fakeApi({
    account: async () => account,
    allSites: async () => list([...this.sites]),
    zones: async (_input, opts) => {
      expect(opts?.source).toBe("certificates");
      this.requests += 1;
      if (this.zonesFailure) throw this.zonesFailure;
      return list(this.zones.map((z) => ({ ...z })));
    },
    zoneRecords: async ({ zoneId }) => {
      this.requests += 1;
      const err = this.zoneFailures.get(zoneId);
      if (err) throw err;
      const zone = this.zones.find((z) => z.id === zoneId);
      if (!zone) throw new ApiHttpError(ROUTES.zoneRecords.template, 404, "Not found", []);
      return { zone, ...list(this.records.get(zoneId) ?? []) };
    },
    recordSsl: async ({ zoneId, recordId }) => {
      this.requests += 1;
      this.asked.push(recordId);
      const record = this.records.get(zoneId)?.find((r) => r.id === recordId);
      if (!record) throw new ApiHttpError(ROUTES.recordSsl.template, 404, "Not found", []);
      if (record.type !== "A")
        throw new ApiHttpError(ROUTES.recordSsl.template, 400, "Only A records are supported", []);
      const err = this.sslFailures.get(recordId);
      if (err) throw err;
      const cert = this.certificates.get(recordId);
      if (!cert) throw new ApiHttpError(ROUTES.recordSsl.template, 400, "No information found", []);
      return cert;
    },
  });
}

function setup(backingOff = false) {
  const platform = new Platform();
  const clock = { now: Date.UTC(2026, 2, 15, 14) };
  const { store, registry, runner, collectors } = collectionFor(
    ConfigSchema.parse({
      sites: { exclude: { ids: [3] } },
      ...(backingOff ? {} : { collectors: EVERY_RUN }),
    }),
    platform.api,
    { now: () => clock.now },
  );
  const series = (name: string) =>
    store
      .render()
      .split("\n")
      .filter((l) => l.startsWith(`${name}{`))
      .sort();
  const siteErrors = async (reason: string) =>
    (await registry.getSingleMetric("sitehost_exporter_collector_site_errors_total")?.get())?.values.find(
      (v) => v.labels.collector === "certificates" && v.labels.reason === reason,
    )?.value;
  return { platform, store, runner, series, siteErrors, clock, collectors };
}

describe("certificates collector", () => {
  it("asks SSL details of A records of selected sites only and publishes expiry and broken per domain", async () => {
    const { platform, runner, series } = setup();
    await runner.run("inventory");
    expect((await runner.run("certificates")).result).toBe("success");
    expect([...platform.asked].sort()).toEqual([101, 102, 201]);
    expect(series("sitehost_certificate_expiry_timestamp_seconds")).toEqual([
      `sitehost_certificate_expiry_timestamp_seconds{site_id="1",site="site-1",zone="acme.example",domain="acme.example"} ${APRIL}`,
      `sitehost_certificate_expiry_timestamp_seconds{site_id="2",site="site-2",zone="beta.example",domain="beta.example"} ${NOON}`,
    ]);
    expect(series("sitehost_certificate_broken")).toEqual([
      'sitehost_certificate_broken{site_id="1",site="site-1",zone="acme.example",domain="acme.example"} 0',
      'sitehost_certificate_broken{site_id="2",site="site-2",zone="beta.example",domain="beta.example"} 1',
    ]);
    // www.acme.example has no certificate data: no series, not an error; shop, mail and gamma were not asked.
    expect(series("sitehost_exporter_certificate_records")).toEqual([
      'sitehost_exporter_certificate_records{result="failed"} 0',
      'sitehost_exporter_certificate_records{result="kept"} 0',
      'sitehost_exporter_certificate_records{result="no_data"} 1',
      'sitehost_exporter_certificate_records{result="read"} 2',
      'sitehost_exporter_certificate_records{result="skipped"} 3',
    ]);
  });

  it("estimates its next run from the last one's request count", async () => {
    const { platform, runner } = setup();
    await runner.run("inventory");
    // Before a first run: a guess of one zone and one A record per selected site.
    expect(runner.requestsPerRun("certificates")).toBe(1 + 2 * 2);
    await runner.run("certificates");
    expect(platform.requests).toBe(1 + 3 + 3); // zones, three zones' records, three A records
    expect(runner.requestsPerRun("certificates")).toBe(platform.requests);
    expect(runner.costs().find((c) => c.name === "certificates")).toMatchObject({
      enabled: true,
      schedule: "13 * * * *",
      requestsPerRun: 7,
    });
  });

  it("a zone whose records fail keeps its last samples while the others update: partial", async () => {
    const { platform, runner, series, siteErrors } = setup();
    await runner.run("inventory");
    await runner.run("certificates");
    platform.certificates.set(101, sslOf(APRIL + 86400, false));
    platform.certificates.set(201, sslOf(NOON + 86400, false));
    platform.zoneFailures.set(20, new ApiNetworkError(ROUTES.zoneRecords.template, "ECONNRESET"));
    expect((await runner.run("certificates")).result).toBe("partial");
    expect(series("sitehost_certificate_expiry_timestamp_seconds")).toEqual([
      `sitehost_certificate_expiry_timestamp_seconds{site_id="1",site="site-1",zone="acme.example",domain="acme.example"} ${APRIL + 86400}`,
      `sitehost_certificate_expiry_timestamp_seconds{site_id="2",site="site-2",zone="beta.example",domain="beta.example"} ${NOON}`,
    ]);
    expect(await siteErrors("network")).toBe(1);
  });

  it("a failed SSL request keeps that record's samples; a record deleted from a zone read whole loses them", async () => {
    const { platform, runner, series } = setup();
    await runner.run("inventory");
    await runner.run("certificates");
    platform.sslFailures.set(101, new ApiHttpError(ROUTES.recordSsl.template, 503, "x", []));
    platform.records.set(
      20,
      (platform.records.get(20) ?? []).filter((r) => r.id !== 201),
    );
    expect((await runner.run("certificates")).result).toBe("partial");
    expect(series("sitehost_certificate_expiry_timestamp_seconds")).toEqual([
      `sitehost_certificate_expiry_timestamp_seconds{site_id="1",site="site-1",zone="acme.example",domain="acme.example"} ${APRIL}`,
    ]);
    expect(series("sitehost_certificate_broken")).toHaveLength(1);
    expect(series("sitehost_exporter_certificate_records")).toContain(
      'sitehost_exporter_certificate_records{result="failed"} 1',
    );
  });

  it("a certificate whose data goes away loses its series; one that appears gains them", async () => {
    const { platform, runner, series } = setup();
    await runner.run("inventory");
    await runner.run("certificates");
    platform.certificates.delete(101);
    platform.certificates.set(102, sslOf(APRIL, false));
    await runner.run("certificates");
    expect(series("sitehost_certificate_expiry_timestamp_seconds")).toEqual([
      `sitehost_certificate_expiry_timestamp_seconds{site_id="1",site="site-1",zone="acme.example",domain="www.acme.example"} ${APRIL}`,
      `sitehost_certificate_expiry_timestamp_seconds{site_id="2",site="site-2",zone="beta.example",domain="beta.example"} ${NOON}`,
    ]);
  });

  it("the zone list failing is a failure that keeps every series", async () => {
    const { platform, runner, series } = setup();
    await runner.run("inventory");
    await runner.run("certificates");
    const before = series("sitehost_certificate_expiry_timestamp_seconds");
    platform.zonesFailure = new ApiNetworkError(ROUTES.zones.template, "ECONNREFUSED");
    expect((await runner.run("certificates")).result).toBe("failure");
    expect(series("sitehost_certificate_expiry_timestamp_seconds")).toEqual(before);
    expect(before).toHaveLength(2);
  });

  it("a site that leaves the selection loses its certificate series and is no longer asked about", async () => {
    const { platform, runner, series } = setup();
    await runner.run("inventory");
    await runner.run("certificates");
    platform.sites = platform.sites.filter((s) => s.id !== 2);
    await runner.run("inventory");
    expect(series("sitehost_certificate_broken")).toHaveLength(1);
    platform.asked = [];
    await runner.run("certificates");
    expect(platform.asked.sort()).toEqual([101, 102]);
    expect(series("sitehost_certificate_expiry_timestamp_seconds")).toHaveLength(1);
  });

  it("backs off zones and records whose answers stay the same; a new record or an event is read at the next run", async () => {
    const { platform, runner, series, clock, collectors } = setup(true);
    await runner.run("inventory");
    const HOUR = 3_600_000;
    /** One run an hour later; the requests it made. */
    const run = async () => {
      clock.now += HOUR;
      const before = platform.requests;
      platform.asked = [];
      await runner.run("certificates");
      return platform.requests - before;
    };
    const costs: number[] = [];
    for (let i = 0; i < 24; i++) costs.push(await run());
    // First run: the zone list, three listings, three A records of selected sites (7). Then, answers
    // unchanged, each listing and each record's details after 1, 2, 4 and then 4.8 to 6 hours: over
    // the last 12 hours the zone list 12 times and each of the six 2 or 3 times (at every run: 84).
    expect(costs[0]).toBe(7);
    const last12 = costs.slice(12).reduce((a, b) => a + b, 0);
    expect(last12).toBeGreaterThanOrEqual(12 + 6 * 2);
    expect(last12).toBeLessThanOrEqual(12 + 6 * 3);
    // Kept records still publish their series; one without certificate data counts as no_data, read or kept.
    expect(series("sitehost_certificate_expiry_timestamp_seconds")).toHaveLength(2);
    const records = series("sitehost_exporter_certificate_records");
    expect(records).toContain('sitehost_exporter_certificate_records{result="no_data"} 1');
    const readOrKept = records
      .filter((l) => /result="(read|kept)"/.test(l))
      .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
    expect(readOrKept).toBe(2);

    // Right after a read of site 2's record it is not due for hours; an event about site 2 (a
    // conversion) reads its zone's listing and its record's details at the next run.
    do await run();
    while (!platform.asked.includes(201));
    platform.certificates.set(201, sslOf(APRIL, false));
    wakeCollectors(collectors, ["certificates"], 2);
    await run();
    expect(platform.asked).toContain(201);
    expect(series("sitehost_certificate_broken")).toContain(
      'sitehost_certificate_broken{site_id="2",site="site-2",zone="beta.example",domain="beta.example"} 0',
    );
  });
});
