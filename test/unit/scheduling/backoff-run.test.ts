/**
 * Collectors backing off for unchanged sites, run by the runner on a moving clock: who is asked at which
 * run, what is published meanwhile, what an event does, what the plan expects.
 */
import { describe, expect, it } from "vitest";
import { ApiNetworkError } from "../../../src/api/errors.js";
import type { Account, Domain, Site } from "../../../src/api/schemas.js";
import { wakeCollectors } from "../../../src/collectors/index.js";
import { ConfigSchema } from "../../../src/config/schema.js";
import { ROUTES } from "../../../src/routes.js";
import { collectionFor } from "../../helpers/collection.js";
import { fakeApi, list } from "../../helpers/fakeApi.js";
import { makeSite } from "../collectors/fixtures.js";
import { collectorsWokenBy } from "../../../src/webhooks/collectorWakes.js";

const account: Account = {
  maxSites: 10,
  capacity: { sites: { maxBillable: 8, maxStaging: 2, billable: 3, staging: 0, total: 3 } },
};
const RUN = 600_000; // domains: every 10 minutes
const domain = (healthy: boolean): Domain => ({
  domainName: "d.example",
  primary: true,
  healthy,
  dnsConfirmed: true,
  provisioned: true,
});

class Platform {
  sites: Site[] = [makeSite(1), makeSite(2), makeSite(3)];
  healthy = new Map<number, boolean>([
    [1, true],
    [2, true],
    [3, true],
  ]);
  fail = new Set<number>();
  /** Site id → its domain's name (a new name is a changed answer). */
  names = new Map<number, string>();
  asked: number[] = [];
  readonly api = fakeApi({
    account: async () => account,
    allSites: async () => list([...this.sites]),
    domains: async ({ id }) => {
      this.asked.push(id);
      if (this.fail.has(id)) throw new ApiNetworkError(ROUTES.domains.template, "ECONNRESET");
      return list([
        { ...domain(this.healthy.get(id) ?? true), domainName: this.names.get(id) ?? "d.example" },
      ]);
    },
  });
}

function setup() {
  const platform = new Platform();
  const clock = { now: Date.UTC(2026, 2, 15, 14) };
  const config = ConfigSchema.parse({}); // domains: every 10 minutes, unchanged sites up to 1 h
  const { store, runner, collectors } = collectionFor(config, platform.api, { now: () => clock.now });
  /** Runs domains once a schedule period from the last, returns the sites it asked. */
  const run = async () => {
    clock.now += RUN;
    platform.asked = [];
    await runner.run("domains");
    return [...platform.asked].sort();
  };
  const healthy = () =>
    store
      .render()
      .split("\n")
      .filter((l) => l.startsWith("sitehost_site_domain_healthy{"))
      .map((l) => `${/site_id="(\d+)"/.exec(l)?.[1]}=${l.slice(l.lastIndexOf(" ") + 1)}`)
      .sort();
  return { platform, runner, collectors, run, healthy };
}

describe("collectors backing off for unchanged sites", () => {
  it("asks a site whose domains stay the same less and less often, one that changes at every run", async () => {
    const { platform, runner, run } = setup();
    await runner.run("inventory");
    const askedSite = { 1: 0, 2: 0, 3: 0 } as Record<number, number>;
    for (let i = 0; i < 36; i++) {
      platform.names.set(3, `d${i}.example`); // site 3 changes: every answer differs from the last
      for (const id of await run()) askedSite[id] = (askedSite[id] ?? 0) + 1;
    }
    // A first answer waits two runs; then every answer is new and asks at the next run.
    expect(askedSite[3]).toBe(35);
    // Six hours: 36 runs; an unchanged site is asked at runs 1, 3, about 7 and then about hourly.
    for (const id of [1, 2]) {
      expect(askedSite[id]).toBeGreaterThanOrEqual(6);
      expect(askedSite[id]).toBeLessThanOrEqual(10);
    }
    // At steady state the plan counts site 3 at every run and the others at a sixth of them.
    const planned = runner.costs().find((c) => c.name === "domains")?.plannedRequestsPerRun ?? 0;
    expect(planned).toBeGreaterThan(1 + 2 / 6 - 0.01);
    expect(planned).toBeLessThan(1 + 2 * (1 / 6 / 0.8) + 0.01);
  });

  it("a site not asked keeps its series; a change shows at its next read", async () => {
    const { platform, runner, run, healthy } = setup();
    await runner.run("inventory");
    for (let i = 0; i < 12; i++) await run();
    expect(healthy()).toEqual(["1=1", "2=1", "3=1"]);
    platform.healthy.set(2, false);
    let runs = 0;
    while (!healthy().includes("2=0")) {
      await run();
      runs += 1;
      expect(runs).toBeLessThanOrEqual(6); // within the hour
    }
    expect(healthy()).toEqual(["1=1", "2=0", "3=1"]);
  });

  it("an event about a site asks at the next run; a failed read is asked again at the next run", async () => {
    const { platform, runner, collectors, run } = setup();
    await runner.run("inventory");
    for (let i = 0; i < 12; i++) await run();
    // Backed off to the hour: at most runs some of the three are not asked.
    const asked: number[][] = [];
    for (let i = 0; i < 6; i++) asked.push(await run());
    expect(asked.filter((a) => a.length < 3).length).toBeGreaterThanOrEqual(4);

    // A conversion event about site 2 (webhooks): domains asks about it at the next run.
    expect(collectorsWokenBy("site_converted", 2)).toContain("domains");
    wakeCollectors(collectors, collectorsWokenBy("site_converted", 2), 2);
    expect(await run()).toContain(2);
    // A command run on a site wakes nothing the domains collector reads.
    expect(collectorsWokenBy("ssh_command", 1)).toEqual([]);

    // A site whose listing changed in what domains follow (a domain added): asked at the next run.
    // Right after site 3's hourly read it would not be asked at the next run.
    for (let i = 0; i < 12; i++) await run();
    while (!(await run()).includes(3));
    platform.sites = platform.sites.map((s) => (s.id === 3 ? { ...s, domainsCount: 2 } : s));
    await runner.run("inventory");
    expect(await run()).toContain(3);

    // A read that fails is not an answer: the site is asked again at the next run, and the next.
    wakeCollectors(collectors, ["domains"], 1);
    platform.fail.add(1);
    expect(await run()).toContain(1);
    expect(await run()).toContain(1);
    platform.fail.delete(1);
    expect(await run()).toContain(1);
  });
});
