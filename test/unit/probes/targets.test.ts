import { describe, expect, it } from "vitest";
import type { Domain, Site } from "../../../src/api/schemas.js";
import { collectDomains } from "../../../src/collectors/domains.js";
import { telemetryPathProblems, webhookProblems } from "../../../src/config/load.js";
import { ConfigSchema } from "../../../src/config/schema.js";
import { DomainBook, type ProbeDomain } from "../../../src/probes/domainBook.js";
import { probeTargetGroups, type TargetGroup } from "../../../src/probes/targets.js";
import { makeSite } from "../collectors/fixtures.js";

const probes = (over: Record<string, unknown> = {}) => ConfigSchema.parse({ probes: over }).probes;
const domain = (name: string, over: Partial<ProbeDomain> = {}): ProbeDomain => ({
  name,
  primary: false,
  provisioned: true,
  healthy: true,
  ...over,
});

const shop = makeSite(2, { name: "shop-prod", tags: [{ id: 1, name: "team-a" }] });
const blog = makeSite(1, { name: "blog", datacenterCode: "eu-west", accountId: 4242 });
const staging = makeSite(3, { name: "shop-staging", staging: true });
const DOMAINS = new Map<number, ProbeDomain[]>([
  [1, [domain("blog.example", { primary: true }), domain("www.blog.example")]],
  [
    2,
    [
      domain("old-shop.example", { provisioned: false }),
      domain("shop.example"),
      domain("www.shop.example", { primary: true }),
    ],
  ],
  [3, [domain("staging.shop.example", { primary: true })]],
]);
const groups = (sites: readonly Site[], config = probes()) =>
  probeTargetGroups(sites, (id) => DOMAINS.get(id), config);
const targets = (gs: readonly TargetGroup[]) => gs.flatMap((g) => g.targets);

describe("probeTargetGroups", () => {
  it("lists each site's primary domain as https://<domain>/, labelled like the site's series", () => {
    expect(groups([shop, blog])).toEqual([
      {
        targets: ["https://blog.example/"],
        labels: {
          site_id: "1",
          site: "blog",
          kind: "live",
          datacenter: "eu-west",
          // The account the site belongs to, when the platform says (shop's does not).
          account_id: "4242",
          module: "http_2xx",
          domain: "blog.example",
          primary: "true",
        },
      },
      {
        targets: ["https://www.shop.example/"],
        labels: {
          site_id: "2",
          site: "shop-prod",
          kind: "live",
          datacenter: "us-east",
          module: "http_2xx",
          domain: "www.shop.example",
          primary: "true",
        },
      },
    ]);
  });

  it("domains: all lists every provisioned domain, the primary first; unprovisioned ones never", () => {
    const gs = groups([shop, blog], probes({ domains: "all" }));
    expect(targets(gs)).toEqual([
      "https://blog.example/",
      "https://www.blog.example/",
      "https://www.shop.example/",
      "https://shop.example/",
    ]);
    expect(gs.map((g) => g.labels.primary)).toEqual(["true", "false", "true", "false"]);
  });

  it("an unprovisioned primary domain is not listed", () => {
    const only = [domain("down.example", { primary: true, provisioned: false })];
    expect(probeTargetGroups([blog], () => only, probes())).toEqual([]);
  });

  it("a disabled site is not listed", () => {
    expect(targets(groups([{ ...shop, state: "disabled" }, blog]))).toEqual(["https://blog.example/"]);
  });

  it("a site without domain records (not read yet, or none): the host of the site's url", () => {
    const site = makeSite(9, { url: "https://site-9.sites.example" });
    for (const none of [undefined, []]) {
      expect(targets(probeTargetGroups([site], () => none, probes()))).toEqual([
        "https://site-9.sites.example/",
      ]);
    }
    expect(probeTargetGroups([makeSite(9, { url: "" })], () => undefined, probes())).toEqual([]);
  });

  it("wildcard domains and repeated records are left out; IDNs are punycode", () => {
    const ds = [
      domain("*.blog.example"),
      domain("Blog.Example", { primary: true }),
      domain("blog.example"),
      domain("bücher.example"),
    ];
    expect(targets(probeTargetGroups([blog], () => ds, probes({ domains: "all" })))).toEqual([
      "https://blog.example/",
      "https://xn--bcher-kva.example/",
    ]);
  });

  it("probes.path and probes.module apply to every target", () => {
    const gs = groups([blog], probes({ path: "/healthz?full=1", module: "http_2xx_ipv4" }));
    expect(targets(gs)).toEqual(["https://blog.example/healthz?full=1"]);
    expect(gs[0]?.labels.module).toBe("http_2xx_ipv4");
  });

  it("overrides by name (glob or exact), tag and kind set path, module and expected status, in order", () => {
    const config = probes({
      overrides: [
        { match: { name: "shop-*" }, path: "/shop/" },
        { match: { tag: "team-a" }, module: "http_post_2xx", expectedStatus: 301 },
        { match: { kind: "staging" }, expectedStatus: 401, path: "/login" },
        { match: { name: "SHOP-STAGING" }, module: "http_basic" },
      ],
    });
    const byId = new Map(groups([shop, blog, staging], config).map((g) => [g.labels.site_id, g]));
    expect(byId.get("2")).toMatchObject({
      targets: ["https://www.shop.example/shop/"],
      labels: { module: "http_post_2xx", expected_status: "301" },
    });
    expect(byId.get("3")).toMatchObject({
      targets: ["https://staging.shop.example/login"],
      labels: { kind: "staging", module: "http_basic", expected_status: "401" },
    });
    expect(byId.get("1")?.targets).toEqual(["https://blog.example/"]);
    expect(byId.get("1")?.labels).not.toHaveProperty("expected_status");
  });

  it("an override with enabled: false removes the matching sites; a later one can bring them back", () => {
    const off = probes({ overrides: [{ match: { kind: "staging" }, enabled: false }] });
    expect(groups([shop, staging], off).map((g) => g.labels.site)).toEqual(["shop-prod"]);
    const back = probes({
      overrides: [
        { match: { name: "shop-*" }, enabled: false },
        { match: { tag: "team-a" }, enabled: true },
      ],
    });
    expect(groups([shop, staging, blog], back).map((g) => g.labels.site)).toEqual(["blog", "shop-prod"]);
  });

  it("label names are valid Prometheus label names and every value is a string", () => {
    const config = probes({ domains: "all", overrides: [{ match: {}, expectedStatus: 200 }] });
    const gs = groups([shop, blog, staging], config);
    expect(gs.length).toBeGreaterThan(0);
    for (const g of gs) {
      for (const [name, value] of Object.entries(g.labels)) {
        expect(name).toMatch(/^[a-zA-Z_][a-zA-Z0-9_]*$/);
        expect(name.startsWith("__")).toBe(false);
        expect(typeof value).toBe("string");
      }
      expect(g.targets.every((t) => typeof t === "string")).toBe(true);
    }
  });
});

describe("probes config", () => {
  it("defaults: enabled, primary domains, path /, module http_2xx, no overrides", () => {
    expect(probes()).toEqual({
      enabled: true,
      domains: "primary",
      path: "/",
      module: "http_2xx",
      overrides: [],
    });
  });

  it("refuses a path without a leading /, an unknown kind or key, a status out of range", () => {
    for (const bad of [
      { path: "healthz" },
      { domains: "some" },
      { overrides: [{ match: { kind: "prod" } }] },
      { overrides: [{ match: { site: "x" } }] },
      { overrides: [{ expectedStatus: 99 }] },
      { overrides: [{ module: "two words" }] },
    ]) {
      expect(ConfigSchema.safeParse({ probes: bad }).success, JSON.stringify(bad)).toBe(false);
    }
  });
  it("the webhook receiver cannot take /sd/probes", () => {
    const config = ConfigSchema.parse({
      webhooks: { enabled: true, path: "/sd/probes", token: "t".repeat(32) },
    });
    expect(webhookProblems(config)).toEqual([
      'webhooks.path: "/sd/probes" is served by the exporter already; choose another path',
    ]);
  });
  it("the metrics endpoint cannot take /sd/probes or another page the exporter serves", () => {
    for (const path of ["/sd/probes", "/-/status", "/"]) {
      const config = ConfigSchema.parse({ web: { telemetryPath: path } });
      expect(telemetryPathProblems(config)).toEqual([
        `web.telemetryPath (--web.telemetry-path): "${path}" is served by the exporter already; choose another path, such as /metrics`,
      ]);
    }
    expect(telemetryPathProblems(ConfigSchema.parse({ web: { telemetryPath: "/probe-metrics" } }))).toEqual(
      [],
    );
  });
});

describe("DomainBook", () => {
  it("keeps the domains collector's view of each site: merged records, flags, primary", () => {
    const book = new DomainBook();
    const records: Domain[] = [
      { domainName: "shop.example", primary: true, healthy: true, dnsConfirmed: true, provisioned: true },
      { domainName: "old.example", primary: false, healthy: false, dnsConfirmed: true, provisioned: false },
      // A second IP record of the same domain, unhealthy: the domain is unhealthy.
      { domainName: "shop.example", primary: true, healthy: false, dnsConfirmed: true, provisioned: true },
    ];
    book.record("domains", shop, collectDomains(shop, records));
    book.record("usage", blog, collectDomains(blog, records));
    expect(book.domains(shop.id)).toEqual([
      { name: "shop.example", primary: true, healthy: false, provisioned: true },
      { name: "old.example", primary: false, healthy: false, provisioned: false },
    ]);
    expect(book.domains(blog.id)).toBeUndefined();
    book.retain([blog]);
    expect(book.domains(shop.id)).toBeUndefined();
  });
});
