/**
 * Git deploy history (enrollment, 422 otherwise, newest first, paging, failed deploys), on-demand
 * backups (3 slots per type) and restores (newest first, paging, failed ones), with their control hooks.
 */
import { afterEach, describe, expect, it } from "vitest";
import { dataOf, startTestSim, T0, type Reply, type TestSim } from "./helpers.js";

interface Deploy {
  id: number;
  created: string;
  after: string;
  before: string;
  state: string;
  message: string;
}
interface Page {
  currentPage: number;
  nextPage: number | null;
  lastPage: number;
  perPage: number;
  totalItems: number;
}

let t: TestSim | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const pageOf = (r: Reply) => (r.body as { page: Page }).page;
const idAt = (i: number) => t!.sim.control.sites()[i]?.site.id as number;

describe("git history", () => {
  it("sites not enrolled answer 422 with the documented message; enrolled ones their history, newest first", async () => {
    t = await startTestSim({ sites: 20, seed: 4 });
    const refused = await t.get(`/sites/${idAt(1)}/git/history`);
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({
      message: "Unprocessable Entity",
      data: null,
      errors: [expect.stringContaining("enrolled")],
    });
    const history = dataOf(await t.get(`/sites/${idAt(0)}/git/history`)) as Deploy[];
    expect(history.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < history.length; i++) {
      expect(Date.parse(history[i]!.created)).toBeLessThan(Date.parse(history[i - 1]!.created));
      // Each deploy starts where the one before it ended.
      expect(history[i - 1]!.before).toBe(history[i]!.after);
    }
    for (const d of history) expect(d.state).toBe("deployed");
    expect(history[0]!.after).toMatch(/^[0-9a-f]{40}$/);
    // Index 6's last deploy failed; index 12 is enrolled and never deployed.
    expect((dataOf(await t.get(`/sites/${idAt(6)}/git/history`)) as Deploy[])[0]?.state).toBe("failed");
    const empty = await t.get(`/sites/${idAt(12)}/git/history`);
    expect(dataOf(empty)).toEqual([]);
    expect(pageOf(empty)).toEqual({
      currentPage: 1,
      nextPage: null,
      lastPage: 1,
      perPage: 25,
      totalItems: 0,
    });
    expect((await t.get("/sites/1/git/history")).status).toBe(404);
  });

  it("paging with page and per_page", async () => {
    t = await startTestSim({ sites: 20, seed: 4 });
    // Index 3: 2 + (3 % 5) = 5 deploys.
    const id = idAt(3);
    const all = dataOf(await t.get(`/sites/${id}/git/history`)) as Deploy[];
    expect(all).toHaveLength(5);
    const p1 = await t.get(`/sites/${id}/git/history?page=1&per_page=2`);
    const p3 = await t.get(`/sites/${id}/git/history?page=3&per_page=2`);
    expect(pageOf(p1)).toEqual({ currentPage: 1, nextPage: 2, lastPage: 3, perPage: 2, totalItems: 5 });
    expect(pageOf(p3)).toMatchObject({ currentPage: 3, nextPage: null });
    expect([...(dataOf(p1) as Deploy[]), ...(dataOf(p3) as Deploy[])].map((d) => d.id)).toEqual(
      [all[0], all[1], all[4]].map((d) => d!.id),
    );
  });

  it("control: record a deploy (success or failure), enroll a site", async () => {
    t = await startTestSim({ sites: 20, seed: 4 });
    t.clock.ms = T0 + 5000;
    const ok = await t.control("POST", `/_simulator/sites/${idAt(0)}/git/deploy`, { message: "Ship it" });
    expect(ok.status).toBe(201);
    const failed = t.sim.control.recordDeploy(idAt(0), { fail: true, message: "Broken build" });
    expect(failed.state).toBe("failed");
    const history = dataOf(await t.get(`/sites/${idAt(0)}/git/history`)) as Deploy[];
    expect(history.slice(0, 2).map((d) => [d.message, d.state])).toEqual([
      ["Broken build", "failed"],
      ["Ship it", "deployed"],
    ]);
    expect(history[0]!.created).toBe(new Date(T0 + 5000).toISOString());
    expect((await t.control("POST", `/_simulator/sites/${idAt(1)}/git/deploy`, {})).status).toBe(400);
    await t.control("POST", `/_simulator/sites/${idAt(1)}/git/enroll`);
    expect((await t.get(`/sites/${idAt(1)}/git/history`)).status).toBe(200);
  });
});

describe("on-demand backups", () => {
  interface Backup {
    id: string | null;
    type: string;
    status: string;
    completed: number | null;
    bytes: string | null;
    requested: number;
  }
  it("3 slots per type: full sites, one being created, and the hook refuses a fourth", async () => {
    t = await startTestSim({ sites: 20, seed: 4 });
    const list = async (i: number) => dataOf(await t!.get(`/sites/${idAt(i)}/ondemand-backups`)) as Backup[];
    // Index 0 and 6: all three file-system slots; 3: all three database slots.
    expect((await list(0)).filter((b) => b.type === "fs")).toHaveLength(3);
    expect((await list(3)).filter((b) => b.type === "db")).toHaveLength(3);
    // Index 1: a database backup still being created: no id, no completion, no size yet.
    const creating = (await list(1)).filter((b) => b.status === "creating");
    expect(creating).toEqual([
      expect.objectContaining({ type: "db", id: null, completed: null, bytes: null }),
    ]);
    // Newest first.
    const seven = await list(7);
    for (let i = 1; i < seven.length; i++)
      expect(seven[i]!.requested).toBeLessThanOrEqual(seven[i - 1]!.requested);
    const full = await t.control("POST", `/_simulator/sites/${idAt(0)}/ondemand-backups`, { type: "fs" });
    expect(full.status).toBe(400);
    expect(() => t!.sim.control.createOnDemandBackup(idAt(0), "fs")).toThrow(/slots/);
    const made = await t.control("POST", `/_simulator/sites/${idAt(0)}/ondemand-backups`, { type: "db" });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ type: "db", status: "completed", requested: Math.floor(T0 / 1000) });
  });

  it("expired backups leave the listing (the oldest of three is kept 7 days)", async () => {
    t = await startTestSim({ sites: 20, seed: 4 });
    const before = (dataOf(await t.get(`/sites/${idAt(0)}/ondemand-backups`)) as Backup[]).filter(
      (b) => b.type === "fs",
    );
    t.clock.ms = T0 + 8 * 86_400_000;
    t.token = await t.newToken(); // the first one expired meanwhile
    const after = (dataOf(await t.get(`/sites/${idAt(0)}/ondemand-backups`)) as Backup[]).filter(
      (b) => b.type === "fs",
    );
    expect(after.length).toBeLessThan(before.length);
  });
});

describe("restores", () => {
  interface Restore {
    id: number;
    status: string;
    created: string;
    error: string | null;
    failedAt: string | null;
    completedAt: string | null;
    fromSiteId: number | null;
    databaseComplete: boolean;
  }
  it("newest first; a failed one carries failedAt and error; one from another site; one in progress", async () => {
    t = await startTestSim({ sites: 20, seed: 4 });
    const list = async (i: number) => dataOf(await t!.get(`/sites/${idAt(i)}/restores`)) as Restore[];
    const two = await list(2);
    expect(two.map((r) => r.status)).toEqual(["failed", "completed"]);
    expect(two[0]).toMatchObject({
      error: expect.any(String),
      completedAt: null,
      failedAt: expect.any(String),
    });
    expect(two[1]).toMatchObject({ error: null, failedAt: null, completedAt: expect.any(String) });
    expect(Date.parse(two[0]!.created)).toBeGreaterThan(Date.parse(two[1]!.created));
    expect((await list(8))[0]?.fromSiteId).toBe(idAt(0));
    expect((await list(10))[0]).toMatchObject({
      status: "in_progress",
      databaseComplete: false,
      completedAt: null,
    });
    expect(await list(1)).toEqual([]);
  });

  it("control: a restore that succeeds, one that fails; paging", async () => {
    t = await startTestSim({ sites: 20, seed: 4 });
    const id = idAt(1);
    t.clock.ms = T0 + 1000;
    expect((await t.control("POST", `/_simulator/sites/${id}/restore`, {})).status).toBe(200);
    t.clock.ms = T0 + 2000;
    const failed = t.sim.control.restoreSite(id, { fail: true, error: "disk full" });
    expect(failed).toMatchObject({ status: "failed", error: "disk full" });
    const p1 = await t.get(`/sites/${id}/restores?per_page=1`);
    expect(pageOf(p1)).toEqual({ currentPage: 1, nextPage: 2, lastPage: 2, perPage: 1, totalItems: 2 });
    expect((dataOf(p1) as Restore[])[0]?.error).toBe("disk full");
    const p2 = await t.get(`/sites/${id}/restores?per_page=1&page=2`);
    expect((dataOf(p2) as Restore[])[0]).toMatchObject({ status: "completed" });
  });
});
