import { describe, expect, it } from "vitest";
import type { GitDeploy } from "../../../src/api/schemas.js";
import { collectGit, deployOutcome } from "../../../src/collectors/git.js";
import { makeSite, one } from "./fixtures.js";

const site = makeSite(3);
const TS = "sitehost_site_git_last_deploy_timestamp_seconds";
const OK = "sitehost_site_git_last_deploy_success";
// 2026-03-15T12:00:00Z and 10:30Z, worked out independently.
const NOON = 1773576000;
const HALF_TEN = 1773570600;

let id = 1;
const deploy = (state: string, created: string | number): GitDeploy => ({
  id: id++,
  created,
  after: "a".repeat(40),
  before: "b".repeat(40),
  branch: "main",
  email: "dev@agency.example",
  message: "Deploy",
  name: "Dev",
  repository: "https://git.example/agency/site.git",
  state,
});

describe("deployOutcome", () => {
  it.each([
    ["deployed", "success"],
    ["Deployed", "success"],
    ["completed", "success"],
    ["failed", "failure"],
    ["error", "failure"],
    ["cancelled", "failure"],
    ["deploy_failed", "failure"],
    ["build-error", "failure"],
    ["processing", "pending"],
    ["queued", "pending"],
    ["something new", "pending"],
  ])("%j is %s", (state, expected) => {
    expect(deployOutcome(state)).toBe(expected);
  });
});

describe("collectGit", () => {
  it.each([
    {
      what: "newest deploy succeeded",
      deploys: [deploy("deployed", "2026-03-15T12:00:00.000Z"), deploy("failed", "2026-03-15T10:30:00.000Z")],
      at: NOON,
      success: 1,
    },
    {
      what: "newest deploy failed",
      deploys: [deploy("failed", "2026-03-15T12:00:00.000Z"), deploy("deployed", "2026-03-15T10:30:00.000Z")],
      at: NOON,
      success: 0,
    },
    {
      what: "one still processing: the newest final one counts",
      deploys: [deploy("processing", "2026-03-15T13:00:00.000Z"), deploy("deployed", "2026-03-15T12:00:00Z")],
      at: NOON,
      success: 1,
    },
    {
      what: "page not newest first: order by time",
      deploys: [deploy("deployed", "2026-03-15 10:30:00"), deploy("failed", "2026-03-15 12:00:00")],
      at: NOON,
      success: 0,
    },
    {
      what: "epoch times",
      deploys: [deploy("deployed", HALF_TEN), deploy("deployed", HALF_TEN * 1000 - 60_000)],
      at: HALF_TEN,
      success: 1,
    },
  ])("$what", ({ deploys, at, success }) => {
    const s = collectGit(site, deploys);
    expect(one(s, TS, { site_id: "3", site: "site-3" })).toBe(at);
    expect(one(s, OK, { site_id: "3", site: "site-3" })).toBe(success);
    expect(s).toHaveLength(2);
  });

  it.each([
    ["never deployed", []],
    ["only a deploy in progress", [deploy("processing", "2026-03-15T12:00:00Z")]],
    ["only unreadable times", [deploy("deployed", "yesterday")]],
  ])("%s: no series", (_what, deploys) => {
    expect(collectGit(site, deploys)).toEqual([]);
  });
});
