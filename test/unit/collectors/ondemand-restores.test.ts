import { describe, expect, it } from "vitest";
import type { OndemandBackup, Restore } from "../../../src/api/schemas.js";
import { collectOndemandBackups } from "../../../src/collectors/ondemand.js";
import { collectRestores, restoreState } from "../../../src/collectors/restores.js";
import { makeSite, one, values } from "./fixtures.js";

const site = makeSite(9);
const NOON = 1773576000; // 2026-03-15T12:00:00Z
const HALF_TEN = 1773570600; // 2026-03-15T10:30:00Z

const backup = (type: string, status = "completed"): OndemandBackup => ({
  id: status === "creating" ? null : `${type}-1`,
  requestId: 1,
  siteId: 9,
  completed: status === "creating" ? null : NOON,
  status,
  type,
  bytes: status === "creating" ? null : "1000",
  requested: NOON - 600,
  backupTimestamp: status === "creating" ? null : "2026-03-15 12:00:00",
  createdBy: "ops@agency.example",
  removedIn: "29 days",
  deleteAt: NOON + 29 * 86400,
});

describe("on-demand backups", () => {
  /** type → count of the published series. */
  const published = (list: OndemandBackup[]) =>
    Object.fromEntries(
      collectOndemandBackups(site, list)
        .filter((s) => s.name === "sitehost_site_ondemand_backups" && s.labels.site_id === "9")
        .map((s) => [s.labels.type, s.value]),
    );

  it.each([
    { what: "none: no series (a type at 0 is not published)", list: [], counts: {} },
    {
      what: "three file-system backups: no free fs slot",
      list: [backup("fs"), backup("fs"), backup("fs")],
      counts: { fs: 3 },
    },
    {
      what: "one being created and one being deleted still hold their slots",
      list: [backup("db", "creating"), backup("db", "deleting"), backup("fs")],
      counts: { fs: 1, db: 2 },
    },
    { what: "type spelled in capitals", list: [backup("DB")], counts: { db: 1 } },
    { what: "types spelled out", list: [backup("filesystem"), backup("database")], counts: { fs: 1, db: 1 } },
  ])("$what", ({ list, counts }) => {
    expect(published(list)).toEqual(counts);
  });

  it("keeps a type the documentation does not name as its own series", () => {
    const s = collectOndemandBackups(site, [backup("media")]);
    expect(one(s, "sitehost_site_ondemand_backups", { type: "media" })).toBe(1);
  });
});

let id = 1;
const restore = (over: Partial<Restore>): Restore => ({
  id: id++,
  status: "completed",
  logMessages: [],
  filesystemId: "11",
  databaseId: "12",
  fromSiteId: null,
  error: null,
  created: "2026-03-15T10:30:00.000Z",
  updated: "2026-03-15T10:50:00.000Z",
  completedAt: "2026-03-15T10:50:00.000Z",
  failedAt: null,
  ...over,
});
const failed = (over: Partial<Restore> = {}) =>
  restore({
    status: "failed",
    completedAt: null,
    failedAt: "2026-03-15T12:20:00Z",
    error: "archive truncated",
    ...over,
  });
const running = (over: Partial<Restore> = {}) =>
  restore({ status: "in_progress", completedAt: null, updated: null, ...over });

describe("restore state", () => {
  it.each([
    ["completed", restore({}), "completed"],
    ["in progress", running(), "in_progress"],
    ["failed with the status failed", failed(), "failed"],
    [
      "failed under a status the platform's documentation does not name, known by failedAt",
      failed({ status: "errored_out" }),
      "failed",
    ],
    ["failed known by its error alone", running({ status: "in_progress", error: "disk full" }), "failed"],
    ["completed known by completedAt whatever the status", restore({ status: "done" }), "completed"],
    ["an unknown status without outcome is kept", running({ status: "queued" }), "queued"],
  ])("%s", (_what, r, expected) => {
    expect(restoreState(r)).toBe(expected);
  });
});

describe("restores", () => {
  it("the latest restore by time, as a state set and its request time; restores counted by state", () => {
    const s = collectRestores(site, [
      restore({ created: "2026-03-10T08:00:00Z" }),
      failed({ created: "2026-03-15 12:00:00" }),
      restore({ created: HALF_TEN }),
    ]);
    expect(one(s, "sitehost_site_restore_last_timestamp_seconds", { site_id: "9" })).toBe(NOON);
    expect(
      Object.fromEntries(
        s.filter((x) => x.name === "sitehost_site_restore_last_state").map((x) => [x.labels.state, x.value]),
      ),
    ).toEqual({ in_progress: 0, completed: 0, failed: 1 });
    expect(one(s, "sitehost_site_restores", { state: "completed" })).toBe(2);
    expect(one(s, "sitehost_site_restores", { state: "failed" })).toBe(1);
    // No restore in progress: no series for it (a state at 0 is not published).
    expect(values(s, "sitehost_site_restores", { state: "in_progress" })).toEqual([]);
  });

  it("an unknown state of the latest restore is its own state in the set", () => {
    const s = collectRestores(site, [running({ status: "queued", created: NOON }), restore({})]);
    expect(one(s, "sitehost_site_restore_last_state", { state: "queued" })).toBe(1);
    expect(one(s, "sitehost_site_restore_last_state", { state: "completed" })).toBe(0);
    expect(one(s, "sitehost_site_restores", { state: "queued" })).toBe(1);
  });

  it("no restores: nothing at all", () => {
    const s = collectRestores(site, []);
    expect(s).toEqual([]);
    expect(values(s, "sitehost_site_restore_last_timestamp_seconds")).toEqual([]);
    expect(values(s, "sitehost_site_restore_last_state")).toEqual([]);
  });
});
