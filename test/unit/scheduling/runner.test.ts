import pino from "pino";
import { describe, expect, it } from "vitest";
import { ApiHttpError, ApiNetworkError } from "../../../src/api/errors.js";
import { ROUTES } from "../../../src/routes.js";
import type { Account, Domain, Site } from "../../../src/api/schemas.js";
import type { SitehostApi } from "../../../src/api/types.js";
import { ConfigSchema, type CollectorName } from "../../../src/config/schema.js";
import { makeSite } from "../collectors/fixtures.js";
import { createCollectors } from "../../../src/collectors/index.js";
import { sampleFor } from "../../../src/metrics/siteSample.js";
import { collectionFor, EVERY_RUN } from "../../helpers/collection.js";
import { fakeApi, list } from "../../helpers/fakeApi.js";

const account: Account = {
  maxSites: 10,
  capacity: { sites: { maxBillable: 8, maxStaging: 2, billable: 1, staging: 0, total: 1 } },
};

/** A platform in memory: sites, each with its domains; per-site failures; measures concurrency. */
class FakeApi {
  sites: Site[] = [];
  domains = new Map<number, Domain[]>();
  fail = new Map<number, Error>();
  /** When set, listing the sites fails with it. */
  listFailure: Error | undefined;
  /** When set, getDomains waits for release() before answering. */
  gate: Promise<void> | undefined;
  private open = () => {};
  inFlight = 0;
  maxInFlight = 0;
  domainCalls = 0;

  hold(): void {
    this.gate = new Promise((r) => (this.open = r));
  }
  release(): void {
    this.gate = undefined;
    this.open();
  }

  readonly api: SitehostApi = fakeApi({
    account: () => Promise.resolve(account),
    allSites: () =>
      this.listFailure ? Promise.reject(this.listFailure) : Promise.resolve(list([...this.sites])),
    domains: async ({ id: siteId }) => {
      this.domainCalls += 1;
      this.inFlight += 1;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      try {
        await Promise.resolve(); // every fetch yields at least once, so workers overlap
        if (this.gate) await this.gate;
        const err = this.fail.get(siteId);
        if (err) throw err;
        return list(this.domains.get(siteId) ?? []);
      } finally {
        this.inFlight -= 1;
      }
    },
    statistics: async () => ({ pageViews: { today: { views: 1, people: 1 } } }),
    usageReport: async () => list([]),
    performanceReport: async () => ({}),
    trafficMetrics: async () => ({ periods: [] }),
    pluginAlerts: async () => list([]),
    themeAlerts: async () => list([]),
    backups: async () => list([]),
    ondemandBackups: async () => list([]),
    restores: async () => list([]),
    gitHistory: async () => list([]),
    gitConfig: async () => ({ connected: true, hasToken: true }),
    cmsUsers: async () => ({ users: [], total_user_count: 0 }),
    phpVersions: async () => list(["8.3"]),
    zones: async () => list([]),
    site: async ({ id: siteId }) => {
      const site = this.sites.find((x) => x.id === siteId);
      if (!site)
        throw new ApiHttpError(ROUTES.site.template, 404, "We could not locate the requested resources.", []);
      return site;
    },
  });
}

const domain = (domainName: string): Domain => ({
  domainName,
  primary: true,
  healthy: true,
  dnsConfirmed: true,
  provisioned: true,
});

function setup(sites = 3, config: Record<string, unknown> = {}, now?: () => number) {
  const fake = new FakeApi();
  for (let i = 1; i <= sites; i++) {
    fake.sites.push(makeSite(i));
    fake.domains.set(i, [domain(`d${i}.example`)]);
  }
  const { store, registry, runner, readiness } = collectionFor(
    ConfigSchema.parse({ collectors: EVERY_RUN, ...config }),
    fake.api,
    { now },
  );
  const metric = async (name: string, labels: Record<string, string>): Promise<number | undefined> => {
    const m = registry.getSingleMetric(name);
    const v = (await m?.get())?.values.find((x) =>
      Object.entries(labels).every(([k, val]) => x.labels[k] === val),
    );
    return v?.value;
  };
  return { fake, store, runner, readiness, metric };
}

describe("CollectorRunner", () => {
  it("skips a run while the previous one of the same collector is pending, and counts it", async () => {
    const { fake, runner, metric } = setup(2);
    await runner.run("inventory");
    fake.hold();
    const first = runner.run("domains");
    expect((await runner.run("domains")).result).toBe("skipped");
    expect((await runner.run("domains")).result).toBe("skipped");
    expect(await metric("sitehost_exporter_collector_skipped_runs_total", { collector: "domains" })).toBe(2);
    fake.release();
    expect((await first).result).toBe("success");
    // once finished, the next run goes ahead
    expect((await runner.run("domains")).result).toBe("success");
  });

  it("one failing site keeps its last samples while the others update: partial, error counted", async () => {
    const { fake, store, runner, metric } = setup(3);
    await runner.run("inventory");
    expect((await runner.run("domains")).result).toBe("success");
    fake.domains.set(1, [domain("new1.example")]);
    fake.domains.set(2, [domain("new2.example")]);
    fake.domains.set(3, [domain("new3.example")]);
    fake.fail.set(2, new ApiNetworkError(ROUTES.domains.template, "ECONNRESET"));
    expect((await runner.run("domains")).result).toBe("partial");
    const text = store.render();
    expect(text).toContain("new1.example");
    expect(text).toContain("new3.example");
    expect(text).toContain('site_id="2",site="site-2",domain="d2.example"'); // last good samples
    expect(text).not.toContain("new2.example");
    expect(
      await metric("sitehost_exporter_collector_site_errors_total", {
        collector: "domains",
        reason: "network",
      }),
    ).toBe(1);
    expect(
      await metric("sitehost_exporter_collector_runs_total", { collector: "domains", result: "partial" }),
    ).toBe(1);
  });

  it("a collector that stays down says so once per cause, not once per run or per site; then that it works again", async () => {
    const lines: Array<{ level: number; msg: string; failedSites?: number; collector?: string }> = [];
    const logger = pino({ level: "info" }, { write: (l: string) => void lines.push(JSON.parse(l)) });
    const fake = new FakeApi();
    for (let i = 1; i <= 50; i++) fake.sites.push(makeSite(i));
    const { runner } = collectionFor(ConfigSchema.parse({}), fake.api, { logger });
    await runner.run("inventory");
    const down = new ApiNetworkError(ROUTES.domains.template, "ECONNREFUSED");
    for (let i = 1; i <= 50; i++) fake.fail.set(i, down);
    // Five runs with every site failing for the same cause, and a sixth where half do.
    for (let run = 0; run < 5; run++) expect((await runner.run("domains")).result).toBe("failure");
    for (let i = 26; i <= 50; i++) fake.fail.delete(i);
    expect((await runner.run("domains")).result).toBe("partial");
    const said = lines.filter((l) => l.collector === "domains" && l.level >= 40);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatchObject({
      failedSites: 50,
      msg: expect.stringContaining("site collection failed"),
    });
    fake.fail.clear();
    expect((await runner.run("domains")).result).toBe("success");
    expect(lines.filter((l) => l.collector === "domains" && l.msg === "collector works again")).toHaveLength(
      1,
    );
  });

  it("every site failing is a failure", async () => {
    const { fake, runner } = setup(2);
    await runner.run("inventory");
    const boom = new Error("boom");
    fake.fail.set(1, boom);
    fake.fail.set(2, new Error("boom again"));
    // The run says why, so a caller need not ask the API again.
    expect(await runner.run("domains")).toEqual({ result: "failure", error: boom });
  });

  it("a failed discovery returns its error with the result", async () => {
    const { fake, runner } = setup(1);
    const refused = new ApiNetworkError(ROUTES.sites.template, "ECONNREFUSED");
    fake.listFailure = refused;
    expect(await runner.run("inventory")).toEqual({ result: "failure", error: refused });
    expect(runner.discovered).toBe(false);
  });

  it("a 404 for a site deleted since discovery drops every series of that site, not of the others", async () => {
    const { fake, store, runner } = setup(2);
    await runner.run("inventory");
    await runner.run("domains");
    expect(store.render()).toContain('site_id="1"');
    fake.sites = [makeSite(2)]; // deleted: GET /sites/1 is 404 too
    fake.fail.set(1, new ApiHttpError(ROUTES.domains.template, 404, "Not found", []));
    expect((await runner.run("domains")).result).toBe("success");
    const text = store.render();
    expect(text).not.toContain('site_id="1"'); // neither inventory nor domains series
    expect(text).toContain('sitehost_site_info{site_id="2"');
    expect(text).toContain("d2.example");
    expect(runner.sites.map((s) => s.id)).toEqual([2]);
  });

  it("a 404 for data a live site lacks clears that collector's series of the site and keeps the site", async () => {
    const { fake, store, runner } = setup(2);
    await runner.run("inventory");
    await runner.run("domains");
    expect(store.render()).toContain("d1.example");
    // GET /sites/1 still answers: the 404 is about the domains, not the site.
    fake.fail.set(1, new ApiHttpError(ROUTES.domains.template, 404, "Not found", []));
    expect((await runner.run("domains")).result).toBe("success");
    const text = store.render();
    expect(text).not.toContain("d1.example");
    expect(text).toContain('sitehost_site_info{site_id="1"');
    expect(text).toContain("d2.example");
    expect(runner.sites.map((s) => s.id)).toEqual([1, 2]);
  });

  it("a site gone from discovery loses all series at the next inventory; a new site is collected", async () => {
    const { fake, store, runner } = setup(2);
    await runner.run("inventory");
    await runner.run("domains");
    fake.sites = [makeSite(2), makeSite(3)];
    fake.domains.set(3, [domain("d3.example")]);
    await runner.run("inventory");
    let text = store.render();
    expect(text).not.toContain('site_id="1"');
    expect(text).not.toContain("d1.example");
    expect(text).toContain('sitehost_site_info{site_id="3"');
    await runner.run("domains");
    text = store.render();
    expect(text).toContain("d3.example");
  });

  it("ready only after discovery and a first run of every enabled collector", async () => {
    const { runner, readiness } = setup(1, { collectors: { performance: { enabled: false } } });
    expect(readiness().ready).toBe(false);
    await runner.run("inventory");
    const waiting = readiness();
    expect(waiting.ready).toBe(false);
    expect(waiting.reason).toContain("domains");
    expect(waiting.reason).not.toContain("performance");
    for (const name of [
      "traffic",
      "statistics",
      "usage",
      "security",
      "domains",
      "certificates",
      "git",
      "access",
    ] as const) {
      await runner.run(name);
      expect(readiness().ready).toBe(false);
    }
    await runner.run("backups");
    expect(readiness()).toEqual({ ready: true });
  });

  it("a first run the budget stretches holds readiness back only until web.readyTimeout after discovery", async () => {
    let clock = 1_000_000;
    const { fake, runner, readiness } = setup(2, { web: { readyTimeout: "90s" } }, () => clock);
    await runner.run("inventory");
    const others = [
      "traffic",
      "statistics",
      "usage",
      "performance",
      "security",
      "certificates",
      "git",
      "backups",
      "access",
    ];
    for (const name of others) await runner.run(name as CollectorName);
    fake.hold(); // the domains run crawls
    const domains = runner.run("domains");
    clock += 89_000;
    expect(readiness()).toEqual({ ready: false, reason: "waiting for a first run of domains" });
    clock += 1_000;
    const capped = readiness();
    expect(capped.ready).toBe(true);
    expect(capped.reason).toBe("first run still going for domains");
    fake.release();
    await domains;
    expect(readiness()).toEqual({ ready: true });
  });

  it("web.readyTimeout 0 waits for every first run however long it takes", async () => {
    let clock = 1_000_000;
    const { fake, runner, readiness } = setup(1, { web: { readyTimeout: "0s" } }, () => clock);
    await runner.run("inventory");
    fake.hold();
    const domains = runner.run("domains");
    clock += 3_600_000;
    expect(readiness().ready).toBe(false);
    fake.release();
    await domains;
  });

  it("the wait is counted from discovery: an API that is down at start does not make the exporter ready", async () => {
    let clock = 1_000_000;
    const { fake, runner, readiness } = setup(1, {}, () => clock);
    fake.listFailure = new ApiNetworkError("/sites", "ECONNREFUSED");
    await runner.run("inventory");
    clock += 600_000;
    expect(readiness()).toEqual({
      ready: false,
      reason:
        "site discovery has not succeeded yet: /sites: connection refused: nothing listens at /sites (ECONNREFUSED)",
    });
  });

  it("backups: on-demand backups and restores answered 404 are empty listings, not a deleted site", async () => {
    const { fake, store, runner } = setup(2);
    const notFound = () => Promise.reject(new ApiHttpError(ROUTES.restores.template, 404, "Not found", []));
    const api = fake.api as unknown as Record<string, unknown>;
    api.backups = async () =>
      list([{ timestamp: "2026-03-15-04-30", databaseBackupId: 1, filesystemBackupId: 2 }]);
    api.ondemandBackups = notFound;
    api.restores = notFound;
    await runner.run("inventory");
    expect((await runner.run("backups")).result).toBe("success");
    const text = store.render();
    expect(text).toContain(
      'sitehost_site_backup_last_timestamp_seconds{site_id="1",site="site-1",type="database"}',
    );
    expect(text).toContain(
      'sitehost_site_backup_last_timestamp_seconds{site_id="2",site="site-2",type="filesystem"}',
    );
    // Empty listings: nothing held, no restore, so no count (none is published at 0).
    expect(text).not.toMatch(/^sitehost_site_(ondemand_backups|restores)\{/m);
    expect(runner.sites.map((s) => s.id)).toEqual([1, 2]);
  });

  it("discovery tells its listeners about every selection and about a site found gone", async () => {
    const { fake, runner } = setup(2);
    const seen: number[][] = [];
    runner.discovery.onSites((sites) => seen.push(sites.map((s) => s.id)));
    await runner.run("inventory");
    fake.sites = [makeSite(2)];
    fake.fail.set(1, new ApiHttpError(ROUTES.domains.template, 404, "Not found", []));
    await runner.run("domains");
    expect(seen).toEqual([[1, 2], [2]]);
  });

  it("says what each collector's next run costs: per-site collectors per selected site", async () => {
    const { runner } = setup(3, { collectors: { usage: { enabled: false } } });
    await runner.run("inventory");
    const costs = Object.fromEntries(runner.costs().map((c) => [c.name, c]));
    expect(costs.traffic).toEqual({
      name: "traffic",
      enabled: true,
      schedule: "30 */5 * * * *",
      requestsPerRun: 3,
      plannedRequestsPerRun: 3,
    });
    expect(costs.security?.requestsPerRun).toBe(6); // plugins and themes
    expect(costs.backups?.requestsPerRun).toBe(9); // automatic, on-demand, restores
    expect(costs.inventory?.requestsPerRun).toBe(3); // the account, the PHP versions and one page of sites
    expect(costs.usage?.enabled).toBe(false);
  });

  it("an extra run asked for while one is going is declined without counting a skipped tick", async () => {
    const { fake, runner, metric } = setup(2);
    await runner.run("inventory");
    fake.hold();
    const first = runner.run("domains");
    expect(await runner.runUnlessRunning("domains")).toBeUndefined();
    expect(await metric("sitehost_exporter_collector_skipped_runs_total", { collector: "domains" })).toBe(
      undefined,
    );
    fake.release();
    await first;
    expect((await runner.runUnlessRunning("domains"))?.result).toBe("success");
  });

  it("runs the collectors it is handed: a test can replace one", async () => {
    const seen: number[] = [];
    const fake = new FakeApi();
    fake.sites.push(makeSite(1), makeSite(2));
    const { runner, store } = collectionFor(ConfigSchema.parse({}), fake.api, {
      createCollectors: (env) => ({
        ...createCollectors(env),
        statistics: {
          scope: "site",
          name: "statistics",
          requestsPerSite: 0,
          requestsPerRun: () => 0,
          fetch: async (_api, site) => void seen.push(site.id),
          collect: (site) => [sampleFor(site, "sitehost_site_page_views", { period: "today" }, 7)],
        },
      }),
    });
    await runner.run("inventory");
    expect((await runner.run("statistics")).result).toBe("success");
    expect(seen.sort()).toEqual([1, 2]);
    expect(store.render()).toContain('sitehost_site_page_views{site_id="2",site="site-2",period="today"} 7');
  });

  it("bounds the sites fetched at once by siteConcurrency", async () => {
    // api.maxConcurrency 2 → siteConcurrency = min(2 × 2, 64) = 4
    const { fake, runner } = setup(20, { api: { maxConcurrency: 2 } });
    expect(runner.siteConcurrency).toBe(4);
    await runner.run("inventory");
    expect((await runner.run("domains")).result).toBe("success");
    expect(fake.domainCalls).toBe(20);
    expect(fake.maxInFlight).toBeGreaterThan(1); // it does run sites in parallel
    expect(fake.maxInFlight).toBeLessThanOrEqual(4);
  });
});
