/** The git collector run by the runner: enrolled and not-enrolled sites, the daily re-check, failures. */
import { describe, expect, it } from "vitest";
import { ApiHttpError } from "../../../src/api/errors.js";
import { ROUTES } from "../../../src/routes.js";
import type { Account, GitDeploy, Site } from "../../../src/api/schemas.js";
import { ConfigSchema } from "../../../src/config/schema.js";
import { collectionFor, EVERY_RUN, linesOf } from "../../helpers/collection.js";
import { fakeApi, list } from "../../helpers/fakeApi.js";
import { makeSite } from "../collectors/fixtures.js";

const account: Account = {
  maxSites: 10,
  capacity: { sites: { maxBillable: 8, maxStaging: 2, billable: 3, staging: 0, total: 3 } },
};
const HOUR = 3_600_000;
const NOON = 1773576000; // 2026-03-15T12:00:00Z

const deploy = (state: string, created: string): GitDeploy => ({ id: 1, created, state });
const notEnrolled = () =>
  new ApiHttpError(ROUTES.gitHistory.template, 422, "Unprocessable Entity", ["enrollment is required"]);

class Platform {
  sites: Site[] = [makeSite(1), makeSite(2), makeSite(3)];
  history = new Map<number, GitDeploy[]>([
    [1, [deploy("deployed", "2026-03-15T12:00:00.000Z")]],
    [3, [deploy("processing", "2026-03-15T13:00:00Z"), deploy("failed", "2026-03-15T12:00:00Z")]],
  ]);
  failures = new Map<number, Error>();
  /** Enrolled sites whose git configuration says disconnected (and no token), or is gone (404). */
  disconnected = new Map<number, "cleared" | "gone">([[3, "cleared"]]);
  asked: number[] = [];
  readonly api = fakeApi({
    account: async () => account,
    allSites: async () => list([...this.sites]),
    gitHistory: async ({ id, page, perPage }, opts) => {
      expect(opts?.source).toBe("git");
      expect(page).toBe(1);
      expect(perPage).toBeGreaterThan(0);
      this.asked.push(id);
      const err = this.failures.get(id);
      if (err) throw err;
      const h = this.history.get(id);
      if (!h) throw notEnrolled();
      return list(h);
    },
    gitConfig: async ({ id }, opts) => {
      expect(opts?.source).toBe("git");
      if (!this.history.has(id)) throw notEnrolled();
      const gone = this.disconnected.get(id);
      if (gone === "gone") throw new ApiHttpError(ROUTES.gitConfig.template, 404, "Not Found", []);
      return gone === "cleared" ? { connected: false, hasToken: false } : { connected: true, hasToken: true };
    },
  });
}

function setup() {
  const platform = new Platform();
  const clock = { now: Date.UTC(2026, 2, 15, 14) };
  const { store, registry, runner } = collectionFor(
    ConfigSchema.parse({ collectors: EVERY_RUN }),
    platform.api,
    {
      now: () => clock.now,
    },
  );
  const lines = (prefix: string) => linesOf(store, prefix);
  const runs = async (result: string) =>
    (await registry.getSingleMetric("sitehost_exporter_collector_runs_total")?.get())?.values.find(
      (v) => v.labels.collector === "git" && v.labels.result === result,
    )?.value;
  return { platform, clock, runner, lines, runs };
}

describe("git collector", () => {
  it("publishes the newest final deploy; a site not enrolled has no series, is counted, and is no failure", async () => {
    const { runner, lines } = setup();
    await runner.run("inventory");
    expect((await runner.run("git")).result).toBe("success");
    expect(lines("sitehost_site_git_")).toEqual([
      `sitehost_site_git_connected{site_id="1",site="site-1"} 1`,
      `sitehost_site_git_connected{site_id="3",site="site-3"} 0`,
      `sitehost_site_git_last_deploy_success{site_id="1",site="site-1"} 1`,
      `sitehost_site_git_last_deploy_success{site_id="3",site="site-3"} 0`,
      `sitehost_site_git_last_deploy_timestamp_seconds{site_id="1",site="site-1"} ${NOON}`,
      `sitehost_site_git_last_deploy_timestamp_seconds{site_id="3",site="site-3"} ${NOON}`,
      `sitehost_site_git_token_stored{site_id="1",site="site-1"} 1`,
      `sitehost_site_git_token_stored{site_id="3",site="site-3"} 0`,
    ]);
    expect(lines("sitehost_exporter_git_sites_not_enrolled")).toEqual([
      "sitehost_exporter_git_sites_not_enrolled 1",
    ]);
  });

  it("asks a site that is not enrolled again only after a day; enrolment then shows", async () => {
    const { platform, clock, runner, lines } = setup();
    await runner.run("inventory");
    await runner.run("git");
    expect(platform.asked.sort()).toEqual([1, 2, 3]);
    expect(runner.requestsPerRun("git")).toBe(4); // history and configuration of the two enrolled sites

    platform.asked = [];
    clock.now += 23 * HOUR;
    platform.history.set(2, [deploy("deployed", "2026-03-16T09:00:00Z")]); // support enrolled it meanwhile
    await runner.run("git");
    expect(platform.asked.sort()).toEqual([1, 3]);
    expect(lines("sitehost_site_git_last_deploy_success")).toHaveLength(2);

    platform.asked = [];
    clock.now += 1 * HOUR;
    expect(runner.requestsPerRun("git")).toBe(6);
    await runner.run("git");
    expect(platform.asked.sort()).toEqual([1, 2, 3]);
    expect(lines("sitehost_site_git_last_deploy_success")).toContain(
      'sitehost_site_git_last_deploy_success{site_id="2",site="site-2"} 1',
    );
    expect(lines("sitehost_exporter_git_sites_not_enrolled")).toEqual([
      "sitehost_exporter_git_sites_not_enrolled 0",
    ]);
  });

  it("a site that stops being selected is no longer counted as not enrolled", async () => {
    const { platform, runner, lines } = setup();
    await runner.run("inventory");
    await runner.run("git");
    platform.sites = platform.sites.filter((s) => s.id !== 2);
    await runner.run("inventory");
    await runner.run("git");
    expect(lines("sitehost_exporter_git_sites_not_enrolled")).toEqual([
      "sitehost_exporter_git_sites_not_enrolled 0",
    ]);
  });

  it("a configuration that is gone (404) is disconnected without a token, not a failure", async () => {
    const { platform, runner, lines } = setup();
    platform.disconnected.set(1, "gone");
    await runner.run("inventory");
    expect((await runner.run("git")).result).toBe("success");
    expect(lines("sitehost_site_git_connected")).toContain(
      'sitehost_site_git_connected{site_id="1",site="site-1"} 0',
    );
    expect(lines("sitehost_site_git_token_stored")).toContain(
      'sitehost_site_git_token_stored{site_id="1",site="site-1"} 0',
    );
  });

  it("another error (403: no git scope) is a failure of that site that keeps its last samples", async () => {
    const { platform, runner, lines, runs } = setup();
    await runner.run("inventory");
    await runner.run("git");
    platform.history.set(1, [deploy("failed", "2026-03-15T13:30:00Z")]);
    platform.failures.set(1, new ApiHttpError(ROUTES.gitHistory.template, 403, "Forbidden", []));
    expect((await runner.run("git")).result).toBe("partial");
    expect(lines("sitehost_site_git_last_deploy_success")).toContain(
      'sitehost_site_git_last_deploy_success{site_id="1",site="site-1"} 1',
    );
    expect(await runs("partial")).toBe(1);
  });
});
