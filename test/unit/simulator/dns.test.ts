/**
 * DNS zones, records and SSL details: A records carry a fleet site's id; SSL details for A records
 * only (400 "Only A records are supported" otherwise, 400 "No information found" without data); the
 * expiry's time form switch; one certificate expiring soon and one broken record; the stats record
 * which record types were asked for.
 */
import { afterEach, describe, expect, it } from "vitest";
import { dataOf, startTestSim, T0, type TestSim } from "./helpers.js";

interface DnsRecord {
  id: number;
  zoneId: number;
  type: string;
  name: string;
  siteId: number | null;
  primary: boolean;
}
interface Zone {
  id: number;
  name: string;
  records: DnsRecord[];
}

const DAY = 86_400_000;
let t: TestSim | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function zones(sim: TestSim): Promise<Zone[]> {
  const list = dataOf(await sim.get("/zones")) as Array<{ id: number }>;
  return Promise.all(list.map(async (z) => dataOf(await sim.get(`/zones/${z.id}/records`)) as Zone));
}

describe("DNS zones and SSL details", () => {
  it("zones of the fleet's live sites: A records carry the site id and match its domains", async () => {
    t = await startTestSim({ sites: 12, seed: 2 });
    const all = await zones(t);
    const sites = t.sim.control.sites();
    const ids = new Set(sites.map((s) => s.site.id));
    const aRecords = all.flatMap((z) => z.records.filter((r) => r.type === "A"));
    for (const r of aRecords) if (r.siteId !== null) expect(ids.has(r.siteId)).toBe(true);
    // Each domain of a live site is the A record of its zone.
    for (const s of sites)
      for (const d of s.domains) {
        const zone = all.find((z) => z.id === d.zoneId);
        const a = zone?.records.find((r) => r.type === "A");
        expect(a?.siteId).toBe(s.site.id);
        expect(a?.name === "@" ? zone?.name : `${a?.name}.${zone?.name}`).toBe(d.domainName);
      }
    // Other types too, and an A record of no site (the account's own zone).
    const types = new Set(all.flatMap((z) => z.records.map((r) => r.type)));
    for (const type of ["A", "CNAME", "TXT", "MX", "SRV"]) expect(types.has(type)).toBe(true);
    expect(aRecords.some((r) => r.siteId === null)).toBe(true);
    expect((await t.get("/zones/999/records")).status).toBe(404);
  });

  it("SSL: A records only, 'No information found' without data, stats by record type", async () => {
    t = await startTestSim({ sites: 12, seed: 2 });
    const all = await zones(t);
    const ssl = (r: DnsRecord) => t!.get(`/zones/${r.zoneId}/records/${r.id}/ssl`);
    const cname = all.flatMap((z) => z.records).find((r) => r.type === "CNAME")!;
    const mx = all.flatMap((z) => z.records).find((r) => r.type === "MX")!;
    for (const r of [cname, mx]) {
      const answer = await ssl(r);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ message: "Only A records are supported", data: null, errors: null });
    }
    // Fleet index 5 is deploying: nothing provisioned yet.
    const deploying = t.sim.control.sites()[5]!;
    const noData = all
      .flatMap((z) => z.records)
      .find((r) => r.type === "A" && r.siteId === deploying.site.id)!;
    const none = await ssl(noData);
    expect(none.status).toBe(400);
    expect(none.body).toEqual({ message: "No information found", data: null, errors: null });
    // The account zone's A record belongs to no site and has no certificate either.
    const orphan = all.flatMap((z) => z.records).find((r) => r.type === "A" && r.siteId === null)!;
    expect((await ssl(orphan)).status).toBe(400);
    expect(t.sim.control.stats().sslRecordTypes).toEqual({ CNAME: 1, MX: 1, A: 2 });
    // A record id that is not in the zone.
    expect((await t.get(`/zones/${cname.zoneId}/records/${noData.id}/ssl`)).status).toBe(404);
  });

  it("certificates: index 0's first domain expires in 5 days, its second record is broken", async () => {
    t = await startTestSim({ sites: 12, seed: 2 });
    const first = t.sim.control.sites()[0]!;
    const [d0, d1] = first.domains;
    const details = async (zoneId: number) =>
      dataOf(await t!.get(`/zones/${zoneId}/records/${zoneId * 10}/ssl`)) as Record<string, unknown>;
    const soon = await details(d0!.zoneId);
    const expires = Date.parse(soon.certificate_expiration_date as string);
    expect(expires - T0).toBeGreaterThanOrEqual(5 * DAY);
    expect(expires - T0).toBeLessThan(6 * DAY);
    expect(soon).toMatchObject({
      broken_record: false,
      broken_check: null,
      force_ssl: true,
      options: ["http-01"],
    });
    const broken = await details(d1!.zoneId);
    expect(broken.broken_record).toBe(true);
    expect(broken.broken_check).toBe(new Date(T0 - 2 * 3_600_000).toISOString());
    // Every other site's certificate is good for 20 days or more.
    for (const s of t.sim.control.sites().slice(1)) {
      const cert = s.domains[0] && t.sim.control.certificate(s.domains[0].zoneId * 10);
      if (cert) expect(cert.expiresAt - T0).toBeGreaterThanOrEqual(20 * DAY);
    }
  });

  it("the time form switch: ISO 8601 with ms, epoch seconds, 'YYYY-MM-DD HH:MM:SS' of the same instant", async () => {
    t = await startTestSim({ sites: 3, seed: 2 });
    const zoneId = t.sim.control.sites()[0]!.domains[0]!.zoneId;
    const expiry = async () =>
      (
        dataOf(await t!.get(`/zones/${zoneId}/records/${zoneId * 10}/ssl`)) as {
          certificate_expiration_date: unknown;
        }
      ).certificate_expiration_date;
    const iso = (await expiry()) as string;
    expect(iso).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000Z$/);
    expect(
      (await t.control("POST", "/_simulator/behaviour", { certificateTimeForm: "epoch-seconds" })).status,
    ).toBe(200);
    expect(await expiry()).toBe(Date.parse(iso) / 1000);
    t.sim.control.setBehaviour({ certificateTimeForm: "datetime" });
    expect(await expiry()).toBe(`${iso.slice(0, 10)} ${iso.slice(11, 19)}`);
    expect(
      (await t.control("POST", "/_simulator/behaviour", { certificateTimeForm: "rfc2822" })).status,
    ).toBe(400);
  });

  it("control: change, break and clear a certificate over HTTP; GET /_simulator/zones shows them", async () => {
    t = await startTestSim({ sites: 3, seed: 2 });
    const zoneId = t.sim.control.sites()[1]!.domains[0]!.zoneId;
    const recordId = zoneId * 10;
    const path = `/zones/${zoneId}/records/${recordId}/ssl`;
    const at = new Date(T0 + 2 * DAY).toISOString();
    const set = await t.control("POST", `/_simulator/records/${recordId}/ssl`, {
      expiresAt: at,
      broken: true,
    });
    expect(set.status).toBe(200);
    expect(dataOf(await t.get(path))).toMatchObject({ certificate_expiration_date: at, broken_record: true });
    const listed = (await t.control("GET", "/_simulator/zones")).body as Array<{
      id: number;
      records: Array<{ id: number; certificate: { broken: boolean } | null }>;
    }>;
    expect(
      listed.find((z) => z.id === zoneId)?.records.find((r) => r.id === recordId)?.certificate?.broken,
    ).toBe(true);
    await t.control("POST", `/_simulator/records/${recordId}/ssl`, { clear: true });
    expect((await t.get(path)).body).toMatchObject({ message: "No information found" });
    // Only A records have certificates.
    expect(
      (await t.control("POST", `/_simulator/records/${recordId + 1}/ssl`, { broken: true })).status,
    ).toBe(404);
  });

  it("converting a live site to staging removes its A records and domains", async () => {
    t = await startTestSim({ sites: 3, seed: 2 });
    const site = t.sim.control.sites()[0]!;
    const zoneIds = site.domains.map((d) => d.zoneId);
    expect(
      (await t.control("POST", `/_simulator/sites/${site.site.id}/convert`, { to: "staging" })).status,
    ).toBe(200);
    for (const zoneId of zoneIds) {
      const zone = dataOf(await t.get(`/zones/${zoneId}/records`)) as Zone;
      expect(zone.records.filter((r) => r.type === "A")).toEqual([]);
    }
    expect(dataOf(await t.get(`/sites/${site.site.id}/domains`))).toEqual([]);
    // Kit only from sandbox.
    expect((await t.control("POST", `/_simulator/sites/${site.site.id}/convert`, { to: "kit" })).status).toBe(
      400,
    );
  });
});
