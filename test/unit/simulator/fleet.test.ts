/**
 * The fleet is deterministic from its seed and has the variety a real account has, as seen
 * over HTTP. Checked for two seeds so the variety is not an accident of one.
 */
import { afterAll, describe, expect, it } from "vitest";
import { allSites, dataOf, startTestSim, T0, type SiteRecord, type TestSim } from "./helpers.js";

const started: TestSim[] = [];
async function sim(seed: number, sites = 25): Promise<TestSim> {
  const t = await startTestSim({ sites, seed });
  started.push(t);
  return t;
}
afterAll(async () => {
  await Promise.all(started.map((t) => t.close()));
});

describe("determinism from the seed", () => {
  it("the same seed gives the same sites, domains and alerts; another seed gives others", async () => {
    const [a, b, c] = await Promise.all([sim(11), sim(11), sim(12)]);
    const [sa, sb, sc] = await Promise.all([allSites(a), allSites(b), allSites(c)]);
    expect(sb).toEqual(sa);
    expect(sc).not.toEqual(sa);
    // The ids themselves differ somewhere (not only derived numbers).
    expect(sc.map((s) => s.id)).not.toEqual(sa.map((s) => s.id));
    for (const s of sa.slice(0, 5)) {
      for (const path of [
        `/sites/${s.id}/domains`,
        `/sites/${s.id}/security-alerts/plugins`,
        `/sites/${s.id}/reports/usage`,
      ]) {
        expect((await b.get(path)).body).toEqual((await a.get(path)).body);
      }
    }
    const plugins = async (t: TestSim, id: number) =>
      JSON.stringify(dataOf(await t.get(`/sites/${id}/security-alerts/plugins`)));
    const differs = await Promise.all(
      sa
        .slice(0, 5)
        .map(async (s, i) => (await plugins(a, s.id)) !== (await plugins(c, sc[i]?.id as number))),
    );
    expect(differs).toContain(true);
  });
});

describe.each([1, 5])("fleet variety (seed %i, 25 sites)", (seed) => {
  let t: TestSim;
  let sites: SiteRecord[];
  const load = async () => {
    if (!t) {
      t = await sim(seed);
      sites = await allSites(t);
    }
  };

  it("kinds, states, storage limits, edge cache, datacenters, PHP versions, tags", async () => {
    await load();
    const count = (f: (s: SiteRecord) => boolean) => sites.filter(f).length;
    // Kinds by index % 10: 7 staging (7, 17), 8 sandbox (8, 18), 9 kit (9, 19); the other 19 are live.
    expect(count((s) => s.staging === true)).toBe(2);
    expect(count((s) => s.sandbox === true)).toBe(2);
    expect(count((s) => s.kit === true)).toBe(2);
    expect(count((s) => !s.staging && !s.sandbox && !s.kit)).toBe(19);
    expect(count((s) => s.state === "disabled")).toBe(1);
    expect(count((s) => s.state === "deploying")).toBe(1);
    expect(count((s) => s.state === "live")).toBeGreaterThan(15);
    // Limits on index % 3 = 2: 2, 5, ..., 23 = 8 sites; null on the other 17.
    expect(count((s) => typeof s.maxFileSystemUsageBytes === "number")).toBe(8);
    expect(count((s) => s.maxFileSystemUsageBytes === null)).toBe(17);
    expect(count((s) => typeof s.maxDatabaseUsageBytes === "number")).toBe(8);
    expect(count((s) => s.edgeCache === "enabled")).toBeGreaterThan(0);
    expect(count((s) => s.edgeCache === "disabled")).toBeGreaterThan(0);
    expect(new Set(sites.map((s) => s.datacenterCode)).size).toBeGreaterThanOrEqual(3);
    const php = new Set(sites.map((s) => s.phpVersion));
    expect(php.has(null)).toBe(true);
    expect([...php].filter((v) => v !== null).length).toBeGreaterThanOrEqual(3);
    expect(count((s) => (s.tags as unknown[]).length > 0)).toBeGreaterThan(0);
    expect(count((s) => (s.tags as unknown[]).length === 0)).toBeGreaterThan(0);
  });

  it("an unhealthy domain, and one site whose newest backup is about two days old", async () => {
    await load();
    const unhealthy: string[] = [];
    const ageHours: number[] = [];
    for (const s of sites) {
      const domains = dataOf(await t.get(`/sites/${s.id}/domains`)) as Array<{
        healthy: boolean;
        domainName: string;
      }>;
      unhealthy.push(...domains.filter((d) => !d.healthy).map((d) => d.domainName));
      const backups = dataOf(await t.get(`/sites/${s.id}/backups`)) as Array<{ timestamp: string }>;
      const [y, mo, d, h, mi] = (backups[0]?.timestamp ?? "").split("-").map(Number);
      ageHours.push((T0 - Date.UTC(y as number, (mo as number) - 1, d, h, mi)) / 3_600_000);
    }
    expect(unhealthy).toHaveLength(1);
    // One site between 40 h and 60 h (it is 50 h); every other site backed up within the last day.
    expect(ageHours.filter((a) => a >= 40 && a <= 60)).toHaveLength(1);
    expect(ageHours.filter((a) => a < 24)).toHaveLength(24);
  });

  it("vulnerabilities of mixed severity and updates available", async () => {
    await load();
    const severities = new Set<string | null>();
    let updates = 0;
    let vulnerable = 0;
    for (const s of sites) {
      for (const kind of ["plugins", "themes"]) {
        const groups = dataOf(await t.get(`/sites/${s.id}/security-alerts/${kind}`)) as Record<
          string,
          Array<{
            update_available: boolean;
            security_risk: boolean;
            security_alerts: Array<{ severity: string | null }>;
          }>
        >;
        for (const item of Object.values(groups).flat()) {
          if (item.update_available) updates += 1;
          if (item.security_risk) vulnerable += 1;
          for (const a of item.security_alerts) severities.add(a.severity);
        }
      }
    }
    expect(vulnerable).toBeGreaterThan(5);
    expect(updates).toBeGreaterThan(vulnerable);
    // Documented: severity is null, low, medium or other.
    for (const sev of [null, "low", "medium", "high", "critical"]) expect(severities.has(sev)).toBe(true);
  });
});
