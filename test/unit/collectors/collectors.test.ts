import { describe, expect, it } from "vitest";
import type {
  Account,
  MetricsResult,
  PerformanceReport,
  UsageReportEntry,
} from "../../../src/api/schemas.js";
import type { SecurityAlertGroup } from "../../../src/collectors/security.js";
import { collectBackups } from "../../../src/collectors/backups.js";
import { STATISTICS_PERIODS } from "../../../src/config/collectorOptions.js";
import { parseBackupTimestamp } from "../../../src/api/times.js";
import { collectDomains } from "../../../src/collectors/domains.js";
import { collectAccount, collectSite } from "../../../src/discovery/inventory.js";
import { collectPerformance } from "../../../src/collectors/performance.js";
import { collectSecurity } from "../../../src/collectors/security.js";
import { collectStatistics } from "../../../src/collectors/statistics.js";
import { collectTraffic } from "../../../src/collectors/traffic.js";
import { collectUsage } from "../../../src/collectors/usage.js";
import { makeSite, one, values } from "./fixtures.js";

const NOW = Date.UTC(2026, 2, 15, 12, 0); // 2026-03-15T12:00Z
const NOW_S = NOW / 1000;

describe("inventory", () => {
  it("publishes site_info with the contract labels; kit wins over sandbox and staging", () => {
    const site = makeSite(7, { staging: true, sandbox: true, kit: true, phpVersion: "8.3" });
    const s = collectSite(site, NOW);
    const info = s.filter((x) => x.name === "sitehost_site_info");
    expect(info).toHaveLength(1);
    expect(info[0]?.labels).toEqual({
      site_id: "7",
      site: "site-7",
      display_name: "Site 7",
      url: "https://site-7.example",
      datacenter: "us-east",
      php_version: "8.3",
      environment: "production",
      kind: "kit",
    });
    expect(info[0]?.value).toBe(1);
  });

  it("kind precedence: sandbox over staging, staging over live; php_version empty when null", () => {
    const kind = (over: Parameters<typeof makeSite>[1]) =>
      collectSite(makeSite(1, over), NOW).find((x) => x.name === "sitehost_site_info")?.labels.kind;
    expect(kind({ staging: true, sandbox: true })).toBe("sandbox");
    expect(kind({ staging: true })).toBe("staging");
    expect(kind({})).toBe("live");
    const info = collectSite(makeSite(1, { phpVersion: null }), NOW).find(
      (x) => x.name === "sitehost_site_info",
    );
    expect(info?.labels.php_version).toBe("");
  });

  it("state set: 1 for the current state, 0 for the other known ones; an unknown state is kept", () => {
    const s = collectSite(makeSite(1, { state: "migrating" }), NOW);
    const states = Object.fromEntries(
      s.filter((x) => x.name === "sitehost_site_state").map((x) => [x.labels.state, x.value]),
    );
    expect(states).toEqual({ live: 0, deploying: 0, cloning: 0, disabled: 0, migrating: 1 });
    const live = collectSite(makeSite(1), NOW).filter((x) => x.name === "sitehost_site_state");
    expect(live.map((x) => [x.labels.state, x.value])).toEqual([
      ["live", 1],
      ["deploying", 0],
      ["cloning", 0],
      ["disabled", 0],
    ]);
  });

  it("storage: used always; limit and headroom only when set", () => {
    const s = collectSite(
      makeSite(1, {
        fileSystemUsageBytes: 5_000,
        databaseUsageBytes: 700,
        maxFileSystemUsageBytes: 10_000,
        warningHeadroomFileSystemUsageBytes: 1_000,
        maxDatabaseUsageBytes: null,
        warningHeadroomDatabaseUsageBytes: undefined,
      }),
      NOW,
    );
    expect(one(s, "sitehost_site_storage_used_bytes", { store: "filesystem" })).toBe(5000);
    expect(one(s, "sitehost_site_storage_used_bytes", { store: "database" })).toBe(700);
    expect(one(s, "sitehost_site_storage_limit_bytes", { store: "filesystem" })).toBe(10000);
    expect(one(s, "sitehost_site_storage_warning_headroom_bytes", { store: "filesystem" })).toBe(1000);
    expect(values(s, "sitehost_site_storage_limit_bytes", { store: "database" })).toEqual([]);
    expect(values(s, "sitehost_site_storage_warning_headroom_bytes", { store: "database" })).toEqual([]);
  });

  it("edge cache and defensive mode: an until in the past means 0, in the future or null means 1", () => {
    const at = (over: Parameters<typeof makeSite>[1]) => collectSite(makeSite(1, over), NOW);
    expect(one(at({ edgeCache: "enabled" }), "sitehost_site_edge_cache_enabled")).toBe(1);
    expect(one(at({ edgeCache: "disabled" }), "sitehost_site_edge_cache_enabled")).toBe(0);
    const dm = "sitehost_site_edge_cache_defensive_mode_enabled";
    // until = now − 60 s: over, although the flag still says true
    expect(one(at({ edgeCacheDefensiveMode: true, edgeCacheDefensiveModeUntil: NOW_S - 60 }), dm)).toBe(0);
    expect(one(at({ edgeCacheDefensiveMode: true, edgeCacheDefensiveModeUntil: NOW_S + 60 }), dm)).toBe(1);
    expect(one(at({ edgeCacheDefensiveMode: true, edgeCacheDefensiveModeUntil: null }), dm)).toBe(1);
    expect(one(at({ edgeCacheDefensiveMode: false, edgeCacheDefensiveModeUntil: NOW_S + 60 }), dm)).toBe(0);
  });

  it("account: sites by kind, capacity by kind, max sites, without site labels", () => {
    const account: Account = {
      maxSites: 50,
      capacity: { sites: { maxBillable: 40, maxStaging: 10, billable: 12, staging: 3, total: 15 } },
    };
    const s = collectAccount(account);
    expect(one(s, "sitehost_account_sites", { kind: "billable" })).toBe(12);
    expect(one(s, "sitehost_account_sites", { kind: "staging" })).toBe(3);
    expect(one(s, "sitehost_account_sites", { kind: "total" })).toBe(15);
    expect(one(s, "sitehost_account_site_capacity", { kind: "billable" })).toBe(40);
    expect(one(s, "sitehost_account_site_capacity", { kind: "staging" })).toBe(10);
    expect(one(s, "sitehost_account_max_sites")).toBe(50);
    expect(s.every((x) => x.labels.site_id === undefined)).toBe(true);
  });
});

describe("statistics", () => {
  it("maps camelCase period keys to snake_case period labels; absent periods publish nothing", () => {
    const s = collectStatistics(
      makeSite(3),
      {
        pageViews: {
          today: { views: 11, people: 5 },
          currentMonth: { views: 300, people: 120 },
          twoMonthsAgo: { views: 250, people: 90 },
          lastTwoYears: { views: 9000, people: 4000 },
        },
      },
      STATISTICS_PERIODS,
    );
    expect(one(s, "sitehost_site_page_views", { period: "today" })).toBe(11);
    expect(one(s, "sitehost_site_unique_visits", { period: "today" })).toBe(5);
    expect(one(s, "sitehost_site_page_views", { period: "current_month" })).toBe(300);
    expect(one(s, "sitehost_site_unique_visits", { period: "two_months_ago" })).toBe(90);
    expect(one(s, "sitehost_site_page_views", { period: "last_two_years" })).toBe(9000);
    expect(values(s, "sitehost_site_page_views", { period: "yesterday" })).toEqual([]);
    // 4 periods × 2 families
    expect(s).toHaveLength(8);
    expect(s.every((x) => !/[A-Z]/.test(x.labels.period ?? ""))).toBe(true);
  });
});

describe("usage", () => {
  const entry = (start: string, gib: number, visits: number): UsageReportEntry => ({
    billing_cycle: {
      start_date: start,
      end_date: start,
      site: { daily_average_visits: visits, daily_average_storage_usage_in_gigabytes: gib },
    },
  });
  it("uses the latest billing cycle whatever the order; GiB are 1024³ bytes", () => {
    const s = collectUsage(makeSite(1), [
      entry("2026-01-01", 9, 900),
      entry("2026-03-01", 1.5, 42), // newest, in the middle of the list
      entry("2026-02-01", 3, 300),
    ]);
    // 1.5 × 1024³ = 1.5 × 1073741824 = 1610612736
    expect(one(s, "sitehost_site_usage_storage_daily_average_bytes")).toBe(1610612736);
    expect(one(s, "sitehost_site_usage_daily_average_visits")).toBe(42);
  });
  it("keeps the fraction of a byte: 1.2345 GiB is 1,325,534,281.728 bytes", () => {
    // 1073741824 × 1.2345 = 1073741824 + 1073741824 × 0.2345 = 1073741824 + 251792457.728
    const s = collectUsage(makeSite(1), [entry("2026-03-01", 1.2345, 7)]);
    expect(one(s, "sitehost_site_usage_storage_daily_average_bytes")).toBeCloseTo(1_325_534_281.728, 3);
  });
  it("an empty report publishes nothing", () => {
    expect(collectUsage(makeSite(1), [])).toEqual([]);
  });
});

describe("performance", () => {
  const report: PerformanceReport = {
    desktop_report: {
      fetch_time: "2024-06-01T10:00:00Z",
      created_at: "2024-06-02T00:00:00Z",
      performance_score: 0.93,
      accessibility_score: 1,
      best_practices_score: 0,
      seo_score: 0.5,
      first_contentful_paint_numeric_value: "1234.5",
      first_contentful_paint_numeric_unit: "millisecond",
      total_blocking_time_numeric_value: "0",
      total_blocking_time_numeric_unit: "millisecond",
      speed_index_numeric_value: "not measured",
      speed_index_numeric_unit: "millisecond",
      cumulative_layout_shift_numeric_value: "0.12",
      cumulative_layout_shift_numeric_unit: "unitless",
    },
    mobile_report: null,
  };
  const s = collectPerformance(makeSite(1), report, ["mobile", "desktop"]);

  it("keeps scores as 0–1 ratios", () => {
    const d = { strategy: "desktop" };
    expect(one(s, "sitehost_site_audit_score", { ...d, category: "performance" })).toBe(0.93);
    expect(one(s, "sitehost_site_audit_score", { ...d, category: "accessibility" })).toBe(1);
    expect(one(s, "sitehost_site_audit_score", { ...d, category: "best_practices" })).toBe(0);
    expect(one(s, "sitehost_site_audit_score", { ...d, category: "seo" })).toBe(0.5);
  });
  it('converts "1234.5" millisecond to 1.2345 s; CLS stays unitless', () => {
    const fcp = one(s, "sitehost_site_audit_timing_seconds", {
      strategy: "desktop",
      audit: "first_contentful_paint",
    });
    // 1234.5 ms / 1000 = 1.2345 s
    expect(fcp).toBeCloseTo(1.2345, 10);
    expect(
      one(s, "sitehost_site_audit_timing_seconds", { strategy: "desktop", audit: "total_blocking_time" }),
    ).toBe(0);
    expect(one(s, "sitehost_site_audit_cumulative_layout_shift", { strategy: "desktop" })).toBe(0.12);
  });
  it("takes the audit timestamp from fetch_time", () => {
    // 2024-06-01T10:00:00Z = 1717236000 s
    expect(one(s, "sitehost_site_audit_timestamp_seconds", { strategy: "desktop" })).toBe(1717236000);
  });
  it("a missing strategy publishes no samples, and no value is ever NaN", () => {
    expect(s.filter((x) => x.labels.strategy === "mobile")).toEqual([]);
    // speed_index "not measured" is dropped rather than published as NaN
    expect(values(s, "sitehost_site_audit_timing_seconds", { audit: "speed_index" })).toEqual([]);
    expect(s.every((x) => Number.isFinite(x.value))).toBe(true);
    expect(collectPerformance(makeSite(1), {}, ["mobile", "desktop"])).toEqual([]);
  });
});

describe("traffic", () => {
  const period = (timestamp: number, reqTrue: number, reqFalse: number, bytesTrue: number) => ({
    timestamp,
    page_is_cached: {
      requests_persec: { true: reqTrue, false: reqFalse },
      response_bytes_persec: { true: bytesTrue, false: 10 },
    },
  });
  it("uses the newest complete period of unsorted periods, not the one still filling", () => {
    const result: MetricsResult = {
      // endAt 1000 with resolution 60: the period at 960 ends at 1020 > 1000, still filling;
      // the one at 900 ends at 960 ≤ 1000 and is the newest complete one.
      search: { startAt: 0, endAt: 1000, resolution: 60 },
      periods: [
        period(840, 1, 1, 1),
        period(960, 99, 99, 99),
        period(900, 4.5, 0.5, 2048),
        period(780, 2, 2, 2),
      ],
    };
    const s = collectTraffic(makeSite(1), result);
    expect(one(s, "sitehost_site_requests_per_second", { cached: "true" })).toBe(4.5);
    expect(one(s, "sitehost_site_requests_per_second", { cached: "false" })).toBe(0.5);
    expect(one(s, "sitehost_site_response_bytes_per_second", { cached: "true" })).toBe(2048);
    expect(one(s, "sitehost_site_response_bytes_per_second", { cached: "false" })).toBe(10);
    expect(s).toHaveLength(4);
  });
  it("without endAt/resolution the newest period is treated as filling", () => {
    const s = collectTraffic(makeSite(1), { periods: [period(200, 7, 7, 7), period(100, 3, 1, 5)] });
    expect(one(s, "sitehost_site_requests_per_second", { cached: "true" })).toBe(3);
  });
  it("reads a resolution given in minutes or milliseconds from the periods' spacing", () => {
    // Epoch seconds B+840, B+900, B+960, 60 s apart; endAt B+1000. Whatever unit the resolution is in,
    // the period at B+960 is still filling and the one at B+900 is the newest complete one (4.5).
    const B = 1_763_900_000;
    const periods = [period(B + 840, 1, 1, 1), period(B + 900, 4.5, 0.5, 2048), period(B + 960, 99, 99, 99)];
    for (const resolution of [1, 60, 60_000]) {
      const s = collectTraffic(makeSite(1), { search: { endAt: B + 1000, resolution }, periods });
      expect(
        one(s, "sitehost_site_requests_per_second", { cached: "true" }),
        `resolution ${resolution}`,
      ).toBe(4.5);
    }
    // endAt in epoch milliseconds: the same answer.
    const ms = collectTraffic(makeSite(1), { search: { endAt: (B + 1000) * 1000, resolution: 60 }, periods });
    expect(one(ms, "sitehost_site_requests_per_second", { cached: "true" })).toBe(4.5);
  });
  it("reads page_is_cached values spelled 1 and 0", () => {
    const s = collectTraffic(makeSite(1), {
      search: { endAt: 1000, resolution: 60 },
      periods: [
        { timestamp: 900, page_is_cached: { requests_persec: { "1": 3.25, "0": 1.5 } } },
        { timestamp: 960, page_is_cached: { requests_persec: { "1": 9, "0": 9 } } },
      ],
    });
    expect(one(s, "sitehost_site_requests_per_second", { cached: "true" })).toBe(3.25);
    expect(one(s, "sitehost_site_requests_per_second", { cached: "false" })).toBe(1.5);
    // No bytes were given: no bytes series, not a 0.
    expect(s).toHaveLength(2);
  });
  it("a cache status the period does not give has no series; one given twice is summed", () => {
    const s = collectTraffic(makeSite(1), {
      search: { endAt: 1000, resolution: 60 },
      periods: [
        { timestamp: 900, page_is_cached: { requests_persec: { true: 2, "1": 0.5 } } },
        { timestamp: 960, page_is_cached: { requests_persec: { true: 9, false: 9 } } },
      ],
    });
    expect(s.map((x) => [x.labels.cached, x.value])).toEqual([["true", 2.5]]);
  });
  it("no complete period → no samples", () => {
    expect(collectTraffic(makeSite(1), { periods: [period(100, 3, 1, 5)] })).toEqual([]);
  });
});

describe("security", () => {
  const item = (
    name: string,
    over: Partial<SecurityAlertGroup["item"]> = {},
  ): SecurityAlertGroup["item"] => ({
    name,
    version: "1.0",
    security_alerts: [],
    ...over,
  });
  const groups: SecurityAlertGroup[] = [
    { group: "active", item: item("akismet", { status: "active", update_available: true }) },
    {
      group: "active",
      item: item("forms", {
        status: "active",
        version: "2.1",
        security_alerts: [
          { severity: "low", fixed_in: "2.2" },
          { severity: "high", fixed_in: "2.3" },
        ],
      }),
    },
    // the same extension listed again under another group: counted once
    {
      group: "active-network",
      item: item("forms", {
        status: "active",
        version: "2.1",
        security_alerts: [
          { severity: "low", fixed_in: "2.2" },
          { severity: "high", fixed_in: "2.3" },
        ],
      }),
    },
    {
      group: "inactive",
      item: item("legacy", {
        status: "inactive",
        update_available: "none",
        security_alerts: [{ severity: null, fixed_in: null }],
      }),
    },
    { group: "frozen", item: item("odd", { status: "frozen", update_available: "available" }) },
  ];
  const s = collectSecurity(makeSite(2), "plugin", groups);

  it("counts extensions by status (unknown status kept), each extension once", () => {
    // active: akismet, forms (duplicate skipped) = 2; inactive: legacy = 1; frozen: odd = 1
    expect(one(s, "sitehost_site_extensions", { type: "plugin", status: "active" })).toBe(2);
    expect(one(s, "sitehost_site_extensions", { type: "plugin", status: "inactive" })).toBe(1);
    expect(one(s, "sitehost_site_extensions", { type: "plugin", status: "frozen" })).toBe(1);
    expect(values(s, "sitehost_site_extensions", { status: "active-network" })).toEqual([]);
  });
  it("counts updates available (true, 'available'; not 'none'); none: no series", () => {
    // akismet (true) + odd ("available") = 2
    expect(one(s, "sitehost_site_extension_updates_available", { type: "plugin" })).toBe(2);
    const current = collectSecurity(makeSite(2), "theme", [
      { group: "active", item: item("storefront", { status: "active", update_available: false }) },
    ]);
    expect(one(current, "sitehost_site_extensions", { type: "theme", status: "active" })).toBe(1);
    expect(values(current, "sitehost_site_extension_updates_available")).toEqual([]);
  });
  it("counts only 'available' (or true) as an update: 'version higher than expected' and other words apart", () => {
    const words = collectSecurity(makeSite(3), "plugin", [
      { group: "active", item: item("ahead", { update_available: "version higher than expected" }) },
      { group: "active", item: item("custom", { update_available: "pending review" }) },
      { group: "active", item: item("listed", { update_available: " Available " }) },
      { group: "active", item: item("current", { update_available: "None" }) },
      { group: "active", item: item("unsaid", { update_available: null, update_version: "3.0" }) },
      { group: "active", item: item("silent", { update_available: null, update_version: null }) },
    ]);
    // listed ("Available") and unsaid (no word, an update_version) are updates; ahead and custom are not.
    expect(one(words, "sitehost_site_extension_updates_available", { type: "plugin" })).toBe(2);
    expect(one(words, "sitehost_site_extension_updates_unclear", { type: "plugin" })).toBe(2);
    expect(values(s, "sitehost_site_extension_updates_unclear")).toEqual([]);
  });
  it("counts vulnerable extensions by their highest severity; null severity → unknown", () => {
    // forms: max(low, high) = high → 1; legacy: null → unknown → 1
    expect(one(s, "sitehost_site_vulnerable_extensions", { type: "plugin", severity: "high" })).toBe(1);
    expect(one(s, "sitehost_site_vulnerable_extensions", { type: "plugin", severity: "unknown" })).toBe(1);
    expect(values(s, "sitehost_site_vulnerable_extensions", { severity: "low" })).toEqual([]);
  });
  it("publishes one vulnerability_info per alert, not per listing", () => {
    const info = s.filter((x) => x.name === "sitehost_site_vulnerability_info");
    // forms: 2 alerts, legacy: 1 alert = 3 (the duplicate listing of forms adds none)
    expect(info.map((x) => x.labels)).toEqual([
      {
        site_id: "2",
        site: "site-2",
        type: "plugin",
        extension: "forms",
        version: "2.1",
        fixed_in: "2.2",
        severity: "low",
      },
      {
        site_id: "2",
        site: "site-2",
        type: "plugin",
        extension: "forms",
        version: "2.1",
        fixed_in: "2.3",
        severity: "high",
      },
      {
        site_id: "2",
        site: "site-2",
        type: "plugin",
        extension: "legacy",
        version: "1.0",
        fixed_in: "",
        severity: "unknown",
      },
    ]);
    expect(info.every((x) => x.value === 1)).toBe(true);
  });
});

describe("domains", () => {
  it("labels primary and merges a repeated domain (healthy only if every record is)", () => {
    const s = collectDomains(makeSite(4), [
      { domainName: "a.example", primary: true, healthy: true, dnsConfirmed: true, provisioned: true },
      { domainName: "b.example", primary: false, healthy: true, dnsConfirmed: true, provisioned: false },
      { domainName: "b.example", primary: false, healthy: false, dnsConfirmed: true, provisioned: false },
    ]);
    expect(one(s, "sitehost_site_domain_healthy", { domain: "a.example", primary: "true" })).toBe(1);
    expect(one(s, "sitehost_site_domain_healthy", { domain: "b.example", primary: "false" })).toBe(0);
    expect(one(s, "sitehost_site_domain_dns_confirmed", { domain: "b.example" })).toBe(1);
    expect(one(s, "sitehost_site_domain_provisioned", { domain: "b.example" })).toBe(0);
    // 2 distinct domains × 3 families
    expect(s).toHaveLength(6);
  });
});

describe("backups", () => {
  it("parses 'YYYY-MM-DD-HH-MM' as UTC; filesystem and database newest differ", () => {
    const s = collectBackups(makeSite(5), [
      { timestamp: "2026-03-14-02-30", filesystemBackupId: 10, databaseBackupId: 11 },
      // newest entry has no filesystem backup
      { timestamp: "2026-03-15-02-30", filesystemBackupId: null, databaseBackupId: 12 },
      { timestamp: "2026-03-01-02-30", filesystemBackupId: 8, databaseBackupId: 9 },
    ]);
    // 2026-03-15: 56 years since 1970 with 14 leap days = 20454 days to 2026-01-01, + 31 + 28 + 14 = 20527
    // days; 20527 × 86400 = 1773532800; + 2 h 30 min (9000 s) = 1773541800
    expect(one(s, "sitehost_site_backup_last_timestamp_seconds", { type: "database" })).toBe(1773541800);
    // one day earlier: 1773541800 − 86400 = 1773455400
    expect(one(s, "sitehost_site_backup_last_timestamp_seconds", { type: "filesystem" })).toBe(1773455400);
  });
  it("reads the same time given with seconds, in ISO form or with an offset", () => {
    // 2026-03-15 02:30:00 UTC = 1773541800 (worked out above)
    for (const text of [
      "2026-03-15-02-30",
      "2026-03-15-02-30-00",
      "2026-03-15T02:30:00Z",
      "2026-03-15 02:30:00",
      "2026-03-15T04:30:00+02:00",
    ]) {
      expect(parseBackupTimestamp(text), text).toBe(1773541800);
    }
    expect(parseBackupTimestamp("2026-03-15-02-30-45")).toBe(1773541845);
    expect(parseBackupTimestamp("15/03/2026")).toBeUndefined();
    expect(parseBackupTimestamp("2026-13-15-02-30")).toBeUndefined();
  });
  it("no backups → no samples", () => {
    expect(collectBackups(makeSite(5), [])).toEqual([]);
  });
});
