/** Whether each site's PHP version is among those the platform supports (GET /sites/php-versions). */
import pino from "pino";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { ConfigSchema } from "../../../src/config/schema.js";
import { SiteDiscovery } from "../../../src/discovery/discovery.js";
import { phpMinor } from "../../../src/discovery/inventory.js";
import { METRIC_FAMILIES } from "../../../src/metrics/families.js";
import { MetricStore } from "../../../src/metrics/store.js";
import { metricValue } from "../../helpers/daemon.js";
import { fakeApi, list } from "../../helpers/fakeApi.js";
import { makeSite } from "../collectors/fixtures.js";

function setup(versions: () => Promise<string[]>) {
  const sites = [
    makeSite(1, { phpVersion: "8.3" }),
    makeSite(2, { phpVersion: "8.1.27" }),
    makeSite(3, { phpVersion: null }),
    makeSite(4, { phpVersion: "8.4.2" }),
  ];
  const store = new MetricStore(METRIC_FAMILIES);
  const discovery = new SiteDiscovery({
    sites: ConfigSchema.parse({}).sites,
    api: fakeApi({
      account: () => Promise.reject(new Error("no account view in this test")),
      allSites: async () => list(sites.map((s) => ({ ...s }))),
      phpVersions: async () => list(await versions()),
    }),
    store,
    registry: new Registry(),
    logger: pino({ level: "silent" }),
  });
  const supported = (id: number) =>
    metricValue(store.render(), "sitehost_site_php_version_supported", `site_id="${id}"`);
  return { discovery, supported, signal: new AbortController().signal };
}

describe("PHP version support", () => {
  it("says per site whether its version (major.minor) is supported; a site without one has no series", async () => {
    const t = setup(async () => ["8.3", "8.4", "8.5"]);
    await t.discovery.refresh(t.signal);
    expect([1, 2, 3, 4].map(t.supported)).toEqual([1, 0, undefined, 1]);
  });

  it("a failed read keeps the last list; an empty list is not believed", async () => {
    let answer: () => Promise<string[]> = async () => ["8.3", "8.4"];
    const t = setup(() => answer());
    await t.discovery.refresh(t.signal);
    answer = () => Promise.reject(new Error("503"));
    await t.discovery.refresh(t.signal);
    expect(t.supported(1)).toBe(1);
    expect(t.supported(2)).toBe(0);
    answer = async () => [];
    await t.discovery.refresh(t.signal);
    expect(t.supported(2)).toBe(0);
    expect(t.supported(4)).toBe(1);
  });

  it("until the list was read once, no site has the series", async () => {
    const t = setup(() => Promise.reject(new Error("503")));
    await t.discovery.refresh(t.signal);
    expect(t.supported(1)).toBeUndefined();
  });

  it.each([
    ["8.3", "8.3"],
    ["8.3.12", "8.3"],
    [" 8.4 ", "8.4"],
    ["php8", "php8"],
  ])("%j reads as %j", (version, minor) => {
    expect(phpMinor(version)).toBe(minor);
  });
});
