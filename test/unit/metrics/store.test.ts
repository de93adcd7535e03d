import { execFileSync } from "node:child_process";
import { gunzipSync } from "node:zlib";
import { Counter, Gauge, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { collectDomains } from "../../../src/collectors/domains.js";
import { collectSecurity } from "../../../src/collectors/security.js";
import { Exposition } from "../../../src/metrics/exposition.js";
import { METRIC_FAMILIES } from "../../../src/metrics/families.js";
import { MetricStore } from "../../../src/metrics/store.js";
import type { Sample } from "../../../src/metrics/sample.js";
import { makeSite } from "../collectors/fixtures.js";

const site = makeSite(1);
const domain = (domainName: string) => ({
  domainName,
  primary: false,
  healthy: true,
  dnsConfirmed: true,
  provisioned: true,
});
const used = (siteId: number, value: number): Sample => ({
  name: "sitehost_site_storage_used_bytes",
  labels: { site_id: String(siteId), site: `site-${siteId}`, store: "filesystem" },
  value,
});

describe("MetricStore", () => {
  it("a domain removed by the next run loses its series", () => {
    const store = new MetricStore(METRIC_FAMILIES);
    store.replaceSite("domains", "1", collectDomains(site, [domain("a.example"), domain("gone.example")]));
    expect(store.render()).toContain('domain="gone.example"');
    store.replaceSite("domains", "1", collectDomains(site, [domain("a.example")]));
    expect(store.render()).not.toContain("gone.example");
    expect(store.render()).toContain(
      'sitehost_site_domain_healthy{site_id="1",site="site-1",domain="a.example",primary="false"} 1',
    );
  });

  it("a fixed vulnerability disappears, and with no alerts left the family's header too", () => {
    const store = new MetricStore(METRIC_FAMILIES);
    const vulnerable = [
      {
        group: "active",
        item: { name: "forms", version: "2.1", security_alerts: [{ severity: "high", fixed_in: "2.2" }] },
      },
    ];
    store.replaceSite("security", "1", collectSecurity(site, "plugin", vulnerable));
    expect(store.render()).toContain("sitehost_site_vulnerability_info{");
    const fixed = [{ group: "active", item: { name: "forms", version: "2.2", security_alerts: [] } }];
    store.replaceSite("security", "1", collectSecurity(site, "plugin", fixed));
    expect(store.render()).not.toContain("sitehost_site_vulnerability_info");
    expect(store.render()).not.toContain("sitehost_site_vulnerable_extensions");
    expect(store.render()).toContain(
      'sitehost_site_extensions{site_id="1",site="site-1",type="plugin",status="active"} 1',
    );
  });

  it("retainSites drops a deleted site's series across every collector and keeps the others", () => {
    const store = new MetricStore(METRIC_FAMILIES);
    store.replaceSite("inventory", "1", [used(1, 10)]);
    store.replaceSite("domains", "1", collectDomains(site, [domain("one.example")]));
    store.replaceSite("inventory", "2", [used(2, 20)]);
    store.replaceSite("domains", "2", collectDomains(makeSite(2), [domain("two.example")]));
    store.retainSites(new Set(["2"]));
    const text = store.render();
    expect(text).not.toContain('site_id="1"');
    expect(text).toContain('site_id="2"');
    expect(text).toContain("two.example");
    expect(store.siteIds()).toEqual(["2"]);
  });

  it("excluded patterns are neither stored nor rendered; collectorFullyExcluded only when all are", () => {
    const store = new MetricStore(METRIC_FAMILIES, {
      exclude: [
        "sitehost_site_domain_*",
        "sitehost_site_backup_last_timestamp_seconds",
        "sitehost_site_page_views",
      ],
    });
    store.replaceSite("domains", "1", collectDomains(site, [domain("a.example")]));
    expect(store.render()).toBe("");
    expect(store.collectorFullyExcluded("domains")).toBe(true);
    expect(store.collectorFullyExcluded("backups")).toBe(true);
    // statistics also has sitehost_site_unique_visits
    expect(store.collectorFullyExcluded("statistics")).toBe(false);
    expect(store.collectorFullyExcluded("inventory")).toBe(false);
  });

  it("version and onChange move only when the text changes", () => {
    const store = new MetricStore(METRIC_FAMILIES);
    let calls = 0;
    store.onChange(() => (calls += 1));
    store.replaceSite("inventory", "1", [used(1, 10)]);
    expect([store.version, calls]).toEqual([1, 1]);
    store.replaceSite("inventory", "1", [used(1, 10)]); // same samples
    expect([store.version, calls]).toEqual([1, 1]);
    store.replaceSite("inventory", "1", [used(1, 11)]);
    expect([store.version, calls]).toEqual([2, 2]);
    store.removeSite("9"); // unknown site: nothing changes
    store.retainSites(new Set(["1"]));
    expect([store.version, calls]).toEqual([2, 2]);
    store.removeSite("1");
    expect([store.version, calls]).toEqual([3, 3]);
  });
});

describe("Exposition", () => {
  function tricky(): { store: MetricStore; registry: Registry } {
    const store = new MetricStore(METRIC_FAMILIES);
    const name = 'we"ird\\na\nme — ünïcødé 🚀';
    store.replaceSite("inventory", "1", [
      {
        name: "sitehost_site_info",
        labels: {
          site_id: "1",
          site: name,
          display_name: 'Quote " and backslash \\',
          url: "https://x.example/?a=1&b=\\n",
          datacenter: "line1\nline2",
          php_version: "",
          environment: "日本語",
          kind: "live",
        },
        value: 1,
      },
      { ...used(1, 1.5e12), labels: { site_id: "1", site: name, store: "filesystem" } },
    ]);
    const registry = new Registry();
    new Counter({
      name: "test_tricky_total",
      help: 'help with "quotes" and \\ backslash',
      labelNames: ["v"],
      registers: [registry],
    }).inc({
      v: 'a"b\\c\nd — ü',
    });
    new Gauge({ name: "test_plain", help: "plain", registers: [registry] }).set(3);
    return { store, registry };
  }

  it("passes promtool check metrics, gzip round-trips, and label escapes are exact", async () => {
    const { store, registry } = tricky();
    const exposition = new Exposition(store, registry);
    const body = await exposition.current();
    const text = gunzipSync(body.gzip).toString("utf8");
    expect(text).toBe(body.body.toString("utf8"));
    // " → \"  \ → \\  newline → \n
    expect(text).toContain('display_name="Quote \\" and backslash \\\\"');
    expect(text).toContain('datacenter="line1\\nline2"');
    expect(text).toContain('site="we\\"ird\\\\na\\nme — ünïcødé 🚀"');
    expect(text).toContain("test_plain 3");
    // promtool exits non-zero on a format error; lint warnings (e.g. info metrics) go to stdout.
    const out = execFileSync("/usr/bin/promtool", ["check", "metrics"], {
      input: text,
      encoding: "utf8",
    });
    expect(out).not.toMatch(/error/i);
  });

  it("concurrent current() calls share one render; no change → no re-render", async () => {
    const { store, registry } = tricky();
    const exposition = new Exposition(store, registry, 60_000);
    const [a, b, c] = await Promise.all([exposition.current(), exposition.current(), exposition.current()]);
    expect(exposition.renders).toBe(1);
    expect(a).toBe(b);
    expect(b).toBe(c);
    await exposition.current();
    await exposition.current();
    expect(exposition.renders).toBe(1);
    store.replaceSite("inventory", "2", [used(2, 5)]);
    const d = await exposition.current();
    expect(exposition.renders).toBe(2);
    expect(d.body.toString()).toContain('site_id="2"');
  });
});
