/**
 * Account and site activity logs: page-number paging (per_page at most 50, clamped or refused by the
 * switch), filters, retention (60 days account, 30 days site), the order switch, entries written when
 * things happen, and pages that shift when new entries arrive at the front.
 */
import { afterEach, describe, expect, it } from "vitest";
import { dataOf, startTestSim, T0, type Reply, type TestSim } from "./helpers.js";

interface Entry {
  id: number;
  timestamp: string;
  name: string;
  source: string;
  accountEmail: string;
  ipAddress: string | null;
  message: string;
}
interface Page {
  currentPage: number;
  nextPage: number | null;
  lastPage: number;
  perPage: number;
  totalItems: number;
}

const DAY = 86_400_000;
let t: TestSim | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const entries = (r: Reply) => dataOf(r) as Entry[];
const pageOf = (r: Reply) => (r.body as { page: Page }).page;
const ms = (e: Entry) => Date.parse(e.timestamp);

async function walk(sim: TestSim, path: string, perPage: number): Promise<Entry[]> {
  const out: Entry[] = [];
  for (let page = 1; ; page++) {
    const r = await sim.post(path, { page, per_page: perPage });
    expect(r.status).toBe(200);
    out.push(...entries(r));
    const p = pageOf(r);
    expect(p.currentPage).toBe(page);
    if (p.nextPage === null) {
      expect(p.lastPage).toBe(page);
      return out;
    }
    expect(p.nextPage).toBe(page + 1);
  }
}

describe("activity logs", () => {
  it("account log: pages of per_page, newest first, every entry once, within 60 days", async () => {
    t = await startTestSim({ sites: 20, seed: 3 });
    const first = await t.post("/account/logs/activity", { page: 1, per_page: 20 });
    const total = pageOf(first).totalItems;
    expect(total).toBeGreaterThan(60);
    const all = await walk(t, "/account/logs/activity", 20);
    expect(all).toHaveLength(total);
    expect(new Set(all.map((e) => e.id)).size).toBe(total);
    for (let i = 1; i < all.length; i++) expect(ms(all[i]!)).toBeLessThanOrEqual(ms(all[i - 1]!));
    // Retention: nothing older than 60 days; the history reaches back past 30 days.
    expect(Math.min(...all.map(ms))).toBeGreaterThanOrEqual(T0 - 60 * DAY);
    expect(Math.min(...all.map(ms))).toBeLessThan(T0 - 50 * DAY);
    // All three documented sources appear; the platform's own entries have no IP address.
    expect(new Set(all.map((e) => e.source))).toEqual(new Set(["ui", "api.v1", "systems"]));
    for (const e of all.filter((x) => x.source === "systems")) expect(e.ipAddress).toBeNull();
  });

  it("site log: only that site's entries, within 30 days", async () => {
    t = await startTestSim({ sites: 20, seed: 3 });
    const id = t.sim.control.sites()[4]?.site.id as number;
    t.sim.control.appendActivity(
      { name: "plugin_updated", message: "45 days ago", siteId: id },
      T0 - 45 * DAY,
    );
    t.sim.control.appendActivity(
      { name: "plugin_updated", message: "61 days ago", siteId: id },
      T0 - 61 * DAY,
    );
    t.sim.control.appendActivity(
      { name: "plugin_updated", message: "29 days ago", siteId: id },
      T0 - 29 * DAY,
    );
    const site = await walk(t, `/sites/${id}/logs/activity`, 50);
    expect(site.map((e) => e.message)).toContain("29 days ago");
    expect(site.map((e) => e.message)).not.toContain("45 days ago");
    for (const e of site) expect(ms(e)).toBeGreaterThanOrEqual(T0 - 30 * DAY);
    const account = (await walk(t, "/account/logs/activity", 50)).map((e) => e.message);
    expect(account).toContain("45 days ago");
    expect(account).not.toContain("61 days ago");
    // Another site's log does not have them.
    const other = t.sim.control.sites()[5]?.site.id as number;
    expect((await walk(t, `/sites/${other}/logs/activity`, 50)).map((e) => e.message)).not.toContain(
      "29 days ago",
    );
  });

  it("per_page above 50: clamped to 50 by default, refused with 400 by the switch", async () => {
    t = await startTestSim({ sites: 20, seed: 3 });
    const clamped = await t.post("/account/logs/activity", { per_page: 80 });
    expect(pageOf(clamped).perPage).toBe(50);
    expect(entries(clamped)).toHaveLength(50);
    t.sim.control.setBehaviour({ activityPerPageOverflow: "reject" });
    const refused = await t.post("/account/logs/activity", { per_page: 51 });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ data: null, errors: ["per_page must be at most 50"] });
    expect((await t.post("/account/logs/activity", { per_page: 50 })).status).toBe(200);
  });

  it("filters: action, source, account_email, ip_address with equals or contains; bad filters are a 400", async () => {
    t = await startTestSim({ sites: 20, seed: 3 });
    const filtered = async (filters: unknown[]) => walk2(t!, { filters, per_page: 50 });
    const logins = await filtered([{ field: "action", operator: "equals", value: "account_login" }]);
    expect(logins.length).toBeGreaterThan(10);
    for (const e of logins) expect(e.name).toBe("account_login");
    const systems = await filtered([{ field: "source", operator: "equals", value: "systems" }]);
    expect(systems.length).toBeGreaterThan(0);
    for (const e of systems) expect(e.source).toBe("systems");
    const agency = await filtered([
      { field: "account_email", operator: "contains", value: "agency" },
      { field: "ip_address", operator: "equals", value: "198.51.100.23" },
    ]);
    expect(agency.length).toBeGreaterThan(0);
    for (const e of agency)
      expect([e.accountEmail.includes("agency"), e.ipAddress]).toEqual([true, "198.51.100.23"]);
    const bad = await t.post("/account/logs/activity", {
      filters: [{ field: "colour", operator: "equals", value: "x" }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ data: null, errors: [expect.stringContaining("field")] });
  });

  it("the order switch: oldest-first lists the same entries ascending", async () => {
    t = await startTestSim({ sites: 10, seed: 3 });
    const newest = await walk(t, "/account/logs/activity", 50);
    t.sim.control.setBehaviour({ activityOrder: "oldest-first" });
    const oldest = await walk(t, "/account/logs/activity", 50);
    expect(oldest.map((e) => e.id)).toEqual([...newest].reverse().map((e) => e.id));
    for (let i = 1; i < oldest.length; i++) expect(ms(oldest[i]!)).toBeGreaterThanOrEqual(ms(oldest[i - 1]!));
  });

  it("newest-first page numbers shift when entries arrive at the front", async () => {
    t = await startTestSim({ sites: 10, seed: 3 });
    const read = async (page: number) =>
      entries(await t!.post("/account/logs/activity", { page, per_page: 5 })).map((e) => e.id);
    const [p1, p2] = [await read(1), await read(2)];
    t.clock.ms = T0 + 1000;
    t.sim.control.appendActivity({ name: "account_updated", message: "new 1" });
    t.sim.control.appendActivity({ name: "account_updated", message: "new 2" });
    // Page 2 now starts with the last two entries of the old page 1: a reader walking by page
    // number sees them twice.
    expect(await read(2)).toEqual([...p1.slice(3), ...p2.slice(0, 3)]);
  });

  it("operations write entries: a disable through the control API and through PUT /sites/{id}/disable", async () => {
    t = await startTestSim({ sites: 10, seed: 3 });
    const id = t.sim.control.sites()[0]?.site.id as number;
    t.clock.ms = T0 + 1000;
    expect((await t.control("POST", `/_simulator/sites/${id}/disable`)).status).toBe(200);
    let newest = entries(await t.post(`/sites/${id}/logs/activity`, { per_page: 1 }))[0];
    expect(newest).toMatchObject({
      name: "site_disabled",
      source: "ui",
      timestamp: new Date(T0 + 1000).toISOString(),
    });
    t.clock.ms = T0 + 2000;
    const res = await fetch(`${t.sim.apiUrl}/sites/${id}/enable`, {
      method: "PUT",
      headers: { authorization: `Bearer ${t.token}` },
    });
    expect(res.status).toBe(200);
    newest = entries(await t.post("/account/logs/activity", { per_page: 1 }))[0];
    expect(newest).toMatchObject({ name: "site_enabled", source: "api.v1" });
  });

  it("control API: append account and site entries; the action catalogs", async () => {
    t = await startTestSim({ sites: 5, seed: 3 });
    const id = t.sim.control.sites()[1]?.site.id as number;
    const a = await t.control("POST", "/_simulator/activity", {
      name: "account_updated",
      message: "by a test",
      source: "api.v1",
    });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({
      name: "account_updated",
      message: "by a test",
      source: "api.v1",
      ipAddress: expect.any(String),
    });
    const s = await t.control("POST", `/_simulator/sites/${id}/activity`, {
      name: "ssh_command",
      message: "site entry",
      ipAddress: null,
    });
    expect(s.status).toBe(201);
    const site = entries(await t.post(`/sites/${id}/logs/activity`, { per_page: 1 }))[0];
    expect(site).toMatchObject({ message: "site entry", ipAddress: null });
    expect((await t.control("POST", "/_simulator/activity", { message: "no name" })).status).toBe(400);
    expect((await t.control("POST", "/_simulator/sites/1/activity", { name: "x" })).status).toBe(404);
    const catalog = dataOf(await t.get("/activity/site-actions")) as Array<{
      name: string;
      description: string;
    }>;
    expect(catalog.map((c) => c.name)).toContain("site_disabled");
    const account = dataOf(await t.get("/activity/account-actions")) as Array<{ name: string }>;
    expect(account.map((c) => c.name)).toEqual(expect.arrayContaining(["account_login", "site_disabled"]));
  });
});

/** Every page of the account log for a request body with filters. */
async function walk2(sim: TestSim, body: Record<string, unknown>): Promise<Entry[]> {
  const out: Entry[] = [];
  for (let page = 1; ; page++) {
    const r = await sim.post("/account/logs/activity", { ...body, page });
    expect(r.status).toBe(200);
    out.push(...entries(r));
    if (pageOf(r).nextPage === null) return out;
  }
}
