import { execFileSync } from "node:child_process";
import { gunzipSync } from "node:zlib";
import { Counter, Gauge, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { collectDomains } from "../../../src/collectors/domains.js";
import { collectSecurity } from "../../../src/collectors/security.js";
import { Exposition } from "../../../src/metrics/exposition.js";
import { METRIC_FAMILIES } from "../../../src/metrics/families.js";
import { MetricStore } from "../../../src/metrics/store.js";
import { renderSample } from "../../../src/metrics/render.js";
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
  it("compresses a large family as several gzip members that read back as the rendered text", () => {
    const store = new MetricStore(METRIC_FAMILIES);
    // About 30,000 lines of 90 characters: more than ten members' worth of text.
    for (let id = 1; id <= 30_000; id++) store.replaceSite("usage", String(id), [used(id, id * 1024)]);
    const parts = store.gzipParts();
    expect(parts.length).toBeGreaterThanOrEqual(10);
    expect(gunzipSync(Buffer.concat(parts)).toString("utf8")).toBe(store.render());
    // A later change re-renders that family alone, again in members.
    store.replaceSite("usage", "7", [used(7, 1)]);
    const again = gunzipSync(Buffer.concat(store.gzipParts())).toString("utf8");
    expect(again).toContain(
      'sitehost_site_storage_used_bytes{site_id="7",site="site-7",store="filesystem"} 1\n',
    );
    expect(again).toBe(store.render());
  });

  it("sites with the same labels render their own values, also after one of them changes its labels", () => {
    const store = new MetricStore(METRIC_FAMILIES);
    const line = (id: number, storeName: string, value: number) =>
      `sitehost_site_storage_used_bytes{site_id="${id}",site="site-${id}",store="${storeName}"} ${value}`;
    for (let id = 1; id <= 20; id++) store.replaceSite("usage", String(id), [used(id, id)]);
    // Site 5 gains a second series and site 6 changes its store label; the others keep theirs.
    store.replaceSite("usage", "5", [
      used(5, 50),
      { ...used(5, 51), labels: { ...used(5, 0).labels, store: "db" } },
    ]);
    store.replaceSite("usage", "6", [{ ...used(6, 60), labels: { ...used(6, 0).labels, store: "db" } }]);
    const text = store.render();
    for (const id of [1, 4, 7, 20]) expect(text).toContain(`${line(id, "filesystem", id)}\n`);
    expect(text).toContain(`${line(5, "filesystem", 50)}\n${line(5, "db", 51)}\n`);
    expect(text).toContain(`${line(6, "db", 60)}\n`);
    expect(text).not.toContain(line(6, "filesystem", 6));
    // Back to the common labels: the text is as if nothing had happened in between.
    store.replaceSite("usage", "5", [used(5, 5)]);
    store.replaceSite("usage", "6", [used(6, 6)]);
    const fresh = new MetricStore(METRIC_FAMILIES);
    for (let id = 1; id <= 20; id++) fresh.replaceSite("usage", String(id), [used(id, id)]);
    expect(store.render()).toBe(fresh.render());
  });

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
    // backups publishes automatic and on-demand backups and restores: excluding one family is not enough
    expect(store.collectorFullyExcluded("backups")).toBe(false);
    const all = new MetricStore(METRIC_FAMILIES, {
      exclude: ["sitehost_site_backup_*", "sitehost_site_ondemand_*", "sitehost_site_restore*"],
    });
    expect(all.collectorFullyExcluded("backups")).toBe(true);
    // statistics also has sitehost_site_unique_visits
    expect(store.collectorFullyExcluded("statistics")).toBe(false);
    expect(store.collectorFullyExcluded("inventory")).toBe(false);
  });

  it("a renamed site's series carry the new name in the served exposition, values unchanged", async () => {
    const store = new MetricStore(METRIC_FAMILIES);
    const exposition = new Exposition(store, new Registry(), 0);
    store.replaceSite("inventory", "1", [used(1, 10)]);
    expect((await exposition.current()).body.toString()).toContain('site="site-1"');
    store.replaceSite("inventory", "1", [
      { ...used(1, 10), labels: { ...used(1, 10).labels, site: "shop" } },
    ]);
    const text = (await exposition.current()).body.toString();
    expect(text).toContain('sitehost_site_storage_used_bytes{site_id="1",site="shop",store="filesystem"} 10');
    expect(text).not.toContain('site="site-1"');
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
    const text = gunzipSync(Buffer.concat(body.gzipParts)).toString("utf8");
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

/**
 * The store keeps lines shortened (no metric name, no site labels) and renders only changed families;
 * whatever it does inside, the exposition must equal rendering the latest samples of every entry
 * directly. A seeded random sequence of runs, renames, ghost removals and deletions checks that.
 */
describe("MetricStore against a direct rendering of the latest samples", () => {
  function random(seed: number): () => number {
    let s = seed >>> 0;
    return () => {
      s = (s * 1664525 + 1013904223) >>> 0;
      return s / 2 ** 32;
    };
  }

  function reference(latest: Map<string, Sample[]>): Map<string, string[]> {
    const byFamily = new Map<string, string[]>();
    for (const samples of latest.values()) {
      const seen = new Map<string, string>();
      for (const sample of samples) {
        const family = METRIC_FAMILIES.find((f) => f.name === sample.name);
        if (!family) continue;
        const line = renderSample(family, sample);
        seen.set(`${sample.name} ${line.slice(0, line.lastIndexOf(" "))}`, line);
      }
      for (const [key, line] of seen) {
        const name = key.slice(0, key.indexOf(" "));
        byFamily.set(name, [...(byFamily.get(name) ?? []), line]);
      }
    }
    return byFamily;
  }

  function parsed(text: string): Map<string, string[]> {
    const byFamily = new Map<string, string[]>();
    let current = "";
    for (const line of text.split("\n")) {
      if (line === "") continue;
      if (line.startsWith("# TYPE ")) current = line.split(" ")[2] as string;
      if (line.startsWith("#")) continue;
      expect(line.startsWith(current)).toBe(true); // every line under its own header
      byFamily.set(current, [...(byFamily.get(current) ?? []), `${line}\n`]);
    }
    return byFamily;
  }

  const sorted = (m: Map<string, string[]>) =>
    [...m.entries()].map(([name, lines]) => [name, [...lines].sort()] as const).sort();

  it("holds through 3,000 random operations", () => {
    const next = random(42);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
    const perSite = METRIC_FAMILIES.filter((f) => f.perSite);
    const account = METRIC_FAMILIES.filter((f) => !f.perSite);
    const collectors = ["inventory", "traffic", "domains", "logs"];
    const names = ["alpha", 'we"ird\\name', "ünï\ncødé", "beta"];
    const store = new MetricStore(METRIC_FAMILIES);
    const latest = new Map<string, Sample[]>();

    for (let op = 0; op < 3000; op++) {
      const roll = next();
      const siteId = String(1 + Math.floor(next() * 12));
      if (roll < 0.06) {
        store.removeSite(siteId);
        for (const key of [...latest.keys()]) if (key.endsWith(`|${siteId}`)) latest.delete(key);
      } else if (roll < 0.1) {
        const keep = new Set(["1", "2", "3", "4", "5", "6"].filter(() => next() < 0.7));
        store.retainSites(keep);
        for (const key of [...latest.keys()]) {
          const id = key.slice(key.indexOf("|") + 1);
          if (id !== "global" && !keep.has(id)) latest.delete(key);
        }
      } else if (roll < 0.15) {
        const collector = pick(collectors);
        const samples = Array.from({ length: Math.floor(next() * 3) }, () => ({
          name: pick(account).name,
          labels: { kind: pick(["total", "billable"]) },
          value: Math.floor(next() * 100),
        }));
        store.replaceGlobal(collector, samples);
        if (samples.length > 0) latest.set(`${collector}|global`, samples);
        else latest.delete(`${collector}|global`);
      } else {
        const collector = pick(collectors);
        const site = pick(names); // a site may be renamed between runs
        const samples: Sample[] = Array.from({ length: Math.floor(next() * 6) }, () => {
          const family = pick(perSite);
          const labels: Record<string, string> = { site_id: siteId, site };
          for (const label of family.labels) labels[label] = pick(["a", "b", 'q"uote']);
          if (next() < 0.05) delete labels.site; // a sample lacking its site label is kept whole
          if (next() < 0.05) labels.site = `${site}-other`;
          return { name: family.name, labels, value: pick([0, 1, 2.5, NaN, Infinity]) };
        });
        store.replaceSite(collector, siteId, samples);
        if (samples.length > 0) latest.set(`${collector}|${siteId}`, samples);
        else latest.delete(`${collector}|${siteId}`);
      }
      if (op % 50 === 0 || op === 2999) {
        const expected = sorted(reference(latest));
        expect(sorted(parsed(store.render()))).toEqual(expected);
        const zipped = gunzipSync(Buffer.concat(store.gzipParts())).toString("utf8");
        expect(sorted(parsed(zipped))).toEqual(expected);
      }
    }
  });
});
