/** Single-site refreshes (after a webhook) against discovery runs that list every site. */
import pino from "pino";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { ApiHttpError } from "../../../src/api/errors.js";
import type { Site } from "../../../src/api/schemas.js";
import type { RequestOptions } from "../../../src/api/types.js";
import { ConfigSchema } from "../../../src/config/schema.js";
import { SiteDiscovery } from "../../../src/discovery/discovery.js";
import { METRIC_FAMILIES } from "../../../src/metrics/families.js";
import { MetricStore } from "../../../src/metrics/store.js";
import { fakeApi, list } from "../../helpers/fakeApi.js";
import { waitFor } from "../../helpers/wait.js";
import { makeSite } from "../collectors/fixtures.js";

const silent = pino({ level: "silent" });

/** The platform's sites; the listing can be held open to race a refresh against it. */
class Platform {
  sites = new Map<number, Site>();
  sources: string[] = [];
  private hold: Promise<void> | undefined;
  private open = () => {};
  listingStarted = false;

  holdListing(): void {
    this.hold = new Promise((r) => (this.open = r));
  }
  releaseListing(): void {
    this.hold = undefined;
    this.open();
  }

  readonly api = fakeApi({
    account: () => Promise.reject(new Error("no account view in this test")),
    allSites: async () => {
      const snapshot = [...this.sites.values()].map((s) => ({ ...s }));
      this.listingStarted = true;
      if (this.hold) await this.hold;
      return list(snapshot);
    },
    site: async ({ id }, opts?: RequestOptions) => {
      this.sources.push(opts?.source ?? "other");
      const s = this.sites.get(id);
      if (!s)
        throw new ApiHttpError("GET /sites/{id}", 404, "We could not locate the requested resources.", []);
      return { ...s };
    },
  });
}

function setup(config = ConfigSchema.parse({})) {
  const platform = new Platform();
  for (const id of [1, 2, 3]) platform.sites.set(id, makeSite(id));
  const store = new MetricStore(METRIC_FAMILIES);
  const discovery = new SiteDiscovery({
    sites: config.sites,
    api: platform.api,
    store,
    registry: new Registry(),
    logger: silent,
  });
  const heard: number[][] = [];
  discovery.onSites((sites) => heard.push(sites.map((s) => s.id)));
  /** The state sitehost_site_state shows for a site (the series with value 1). */
  const state = (id: number) =>
    [...store.render().matchAll(/^sitehost_site_state\{site_id="(\d+)",site="[^"]*",state="(\w+)"\} 1$/gm)]
      .filter((m) => m[1] === String(id))
      .map((m) => m[2])[0];
  const signal = new AbortController().signal;
  return { platform, store, discovery, heard, state, signal };
}

describe("refreshing one site", () => {
  it("publishes the site's new state at once, with one GET of that site counted as webhooks", async () => {
    const t = setup();
    await t.discovery.refresh(t.signal);
    expect(t.state(2)).toBe("live");
    (t.platform.sites.get(2) as Site).state = "disabled";
    const heardBefore = t.heard.length;
    await t.discovery.refreshSite(2, t.signal, "webhooks");
    expect(t.state(2)).toBe("disabled");
    expect(t.state(1)).toBe("live");
    expect(t.platform.sources).toEqual(["webhooks"]);
    expect(t.heard.length).toBe(heardBefore); // same selection: the log tailers need not hear of it
    expect(t.discovery.site(2)?.state).toBe("disabled");
  });

  it("a new site joins the selection (and the listeners hear of it); one of a kind not watched does not", async () => {
    const t = setup(ConfigSchema.parse({ sites: { kinds: ["live"] } }));
    await t.discovery.refresh(t.signal);
    t.platform.sites.set(4, makeSite(4, { state: "deploying" }));
    t.platform.sites.set(5, makeSite(5, { staging: true }));
    await t.discovery.refreshSite(4, t.signal);
    await t.discovery.refreshSite(5, t.signal);
    expect(t.heard.at(-1)).toEqual([1, 2, 3, 4]);
    expect(t.state(4)).toBe("deploying");
    expect(t.state(5)).toBeUndefined();
  });

  it("a deleted site (404), or one converted to a kind not watched, leaves with every series", async () => {
    const t = setup(ConfigSchema.parse({ sites: { kinds: ["live"] } }));
    await t.discovery.refresh(t.signal);
    t.platform.sites.delete(3);
    (t.platform.sites.get(1) as Site).sandbox = true;
    await t.discovery.refreshSite(3, t.signal);
    await t.discovery.refreshSite(1, t.signal);
    expect(t.heard.at(-1)).toEqual([2]);
    expect(t.store.render()).not.toMatch(/site_id="3"/);
    expect(t.store.render()).not.toMatch(/site_id="1"/);
    expect(t.discovery.has(3)).toBe(false);
  });

  it("a discovery that listed the sites before a refresh settled keeps what the refresh found", async () => {
    const t = setup();
    await t.discovery.refresh(t.signal);
    t.platform.holdListing();
    const run = t.discovery.refresh(t.signal);
    await waitFor("the listing to start", () => t.platform.listingStarted, { intervalMs: 1 });
    // Meanwhile site 2 is disabled and site 3 deleted, and the webhook refreshes arrive.
    (t.platform.sites.get(2) as Site).state = "disabled";
    t.platform.sites.delete(3);
    await t.discovery.refreshSite(2, t.signal);
    await t.discovery.refreshSite(3, t.signal);
    t.platform.releaseListing();
    await run;
    expect(t.state(2)).toBe("disabled");
    expect(t.discovery.has(3)).toBe(false);
    expect(t.heard.at(-1)).toEqual([1, 2]);
    // The next discovery reads the platform as usual.
    (t.platform.sites.get(2) as Site).state = "live";
    await t.discovery.refresh(t.signal);
    expect(t.state(2)).toBe("live");
  });

  it("another failure of the read is thrown and changes nothing", async () => {
    const t = setup();
    await t.discovery.refresh(t.signal);
    const api = fakeApi({ site: () => Promise.reject(new Error("HTTP 500")) });
    const d = new SiteDiscovery({
      sites: ConfigSchema.parse({}).sites,
      api,
      store: t.store,
      registry: new Registry(),
      logger: silent,
    });
    await expect(d.refreshSite(1, t.signal)).rejects.toThrow("HTTP 500");
    expect(t.state(1)).toBe("live");
  });
});
