/**
 * Series per site, counted on the daemon's own exposition: the defaults (logs tailed and shipped,
 * every collector on) publish at most 90 `sitehost_site_*` series per site, and docs/sizing.md holds
 * what was measured, with what each optional family adds. Two daemons run side by side against one
 * simulated account and the same window of logs: one with the defaults, one with every optional family
 * on; what each switch adds alone is counted in the second one's exposition, and the test checks that
 * the defaults plus exactly those series are the second one's series.
 * Needs the build (`npm run build`: dist/src/cli/main.js).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AUDIT_STRATEGIES,
  DEFAULT_STATISTICS_PERIODS,
  STATISTICS_PERIODS,
} from "../../src/config/collectorOptions.js";
import { COLLECTOR_NAMES, ConfigSchema } from "../../src/config/schema.js";
import { DURATION_BUCKETS } from "../../src/config/slos.js";
import { histogramLayout } from "../../src/logs/histogramLayout.js";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.js";
import {
  scrape,
  startDaemonProcess,
  waitForReadsSince,
  waitReady,
  type DaemonProcess,
} from "../helpers/daemon.js";
import { startOtlpReceiver, type OtlpReceiver } from "../helpers/otlp-receiver.js";
import { renderSizing, SIZING_DOC, type SizingFigures } from "../helpers/sizing.js";

const ACCOUNT = { sites: 25, seed: 1, logRatePerSite: 0.2, logMinutes: 10 };
/** The goal: `sitehost_site_*` series per site at the defaults. */
const MAX_PER_SITE = 90;
/** Series naming no site are the exporter's own: a ceiling checked here and quoted by the docs. */
const UNSITED_AT_MOST = 1000;

/** Every optional family on: what the defaults leave out. */
const EVERYTHING = {
  metrics: { requestDurationCacheHits: true, requestDurationBuckets: [...DURATION_BUCKETS] },
  collectors: {
    performance: { strategies: [...AUDIT_STRATEGIES] },
    statistics: { periods: [...STATISTICS_PERIODS] },
  },
};

interface Series {
  /** `name{labels}` as exposed: the series' identity. */
  key: string;
  name: string;
  labels: Record<string, string>;
}

function seriesOf(exposition: string): Series[] {
  return exposition
    .split("\n")
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((line) => {
      const key = line.slice(0, line.lastIndexOf(" "));
      const brace = key.indexOf("{");
      const labels = Object.fromEntries(
        [...key.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1] as string, m[2] as string]),
      );
      return { key, name: brace < 0 ? key : key.slice(0, brace), labels };
    });
}

let sim: RunningSimulator;
let receiver: OtlpReceiver;
const daemons: DaemonProcess[] = [];
let defaults: Series[] = [];
let everything: Series[] = [];

beforeAll(async () => {
  sim = await startSimulator({
    sites: ACCOUNT.sites,
    seed: ACCOUNT.seed,
    logRatePerSite: ACCOUNT.logRatePerSite,
  });
  receiver = await startOtlpReceiver();
  // One window of logs for both: the same entries counted.
  const startFrom = new Date(Date.now() - ACCOUNT.logMinutes * 60_000).toISOString();
  const common = {
    logs: { ship: true, startFrom },
    // Ready only once every collector's first run is done, however long it takes.
    web: { readyTimeout: "0s" },
  };
  const env = { OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: receiver.logsEndpoint };
  for (const config of [common, { ...common, ...EVERYTHING }])
    daemons.push(await startDaemonProcess({ sim, config, env }));
  const started = Date.now();
  await Promise.all(
    daemons.map(async (d) => {
      await waitReady(d.url, 150_000);
      // Every PHP and web-server stream read to its end since both started: the whole window counted.
      await waitForReadsSince(d, started, 2 * ACCOUNT.sites, 150_000);
    }),
  );
  const [plain, all] = daemons as [DaemonProcess, DaemonProcess];
  [defaults, everything] = await Promise.all([scrape(plain), scrape(all)]).then(([a, b]) => [
    seriesOf(a),
    seriesOf(b),
  ]);
}, 360_000);

afterAll(async () => {
  for (const d of daemons) expect(await d.stop()).toBe(0);
  await receiver?.close();
  await sim?.close();
});

const sited = (list: Series[]) => list.filter((s) => s.name.startsWith("sitehost_site_"));
const perSite = (n: number) => Number((n / ACCOUNT.sites).toFixed(2));

describe("series per site", () => {
  it("every collector ran and every site is published, in both daemons", () => {
    for (const list of [defaults, everything]) {
      const succeeded = list
        .filter((s) => s.name === "sitehost_exporter_collector_last_success_timestamp_seconds")
        .map((s) => s.labels.collector);
      expect(succeeded.sort()).toEqual([...COLLECTOR_NAMES].sort());
      expect(list.filter((s) => s.name === "sitehost_site_info")).toHaveLength(ACCOUNT.sites);
      // Log-derived series of every site: its web-server and PHP counts.
      for (const family of ["sitehost_site_http_responses_total", "sitehost_site_php_log_entries_total"])
        expect(new Set(list.filter((s) => s.name === family).map((s) => s.labels.site_id)).size).toBe(
          ACCOUNT.sites,
        );
    }
  });

  it(`the defaults publish at most ${MAX_PER_SITE} sitehost_site_* series per site; docs/sizing.md holds the figures`, async () => {
    const published = sited(defaults);
    const all = sited(everything);
    const defaultLe = new Set(histogramLayout(ConfigSchema.parse({})).le);
    const defaultKeys = new Set(published.map((s) => s.key));
    const duration = "sitehost_site_http_request_duration_seconds";
    const isDuration = (s: Series) => s.name.startsWith(duration);
    const inDefaultBuckets = (s: Series) =>
      s.name !== `${duration}_bucket` || defaultLe.has(s.labels.le ?? "");

    // What each switch adds alone, as series of the "everything" exposition.
    const added = {
      desktopAudits: all.filter(
        (s) => s.name.startsWith("sitehost_site_audit_") && s.labels.strategy === "desktop",
      ),
      allPeriods: all.filter(
        (s) =>
          (s.name === "sitehost_site_page_views" || s.name === "sitehost_site_unique_visits") &&
          !(DEFAULT_STATISTICS_PERIODS as readonly string[]).includes(s.labels.period ?? ""),
      ),
      cacheHits: all.filter(
        (s) =>
          s.labels.cached === "true" &&
          ((isDuration(s) && inDefaultBuckets(s)) ||
            (s.name === "sitehost_site_http_requests_without_duration_total" && !defaultKeys.has(s.key))),
      ),
      allBuckets: all.filter((s) => isDuration(s) && s.labels.cached === "false" && !inDefaultBuckets(s)),
    };
    // Both switches on: the cached="true" half's buckets beyond the defaults.
    const both = all.filter((s) => isDuration(s) && s.labels.cached === "true" && !inDefaultBuckets(s));
    const switched = new Set([...Object.values(added), both].flat().map((s) => s.key));
    expect(switched.size).toBe([...Object.values(added), both].flat().length);
    const keys = (list: Series[]) => list.map((s) => s.key).sort();
    expect(keys(all.filter((s) => !switched.has(s.key)))).toEqual(keys(published));
    // Each switch adds something on this account.
    for (const [name, list] of Object.entries(added)) expect(list.length, name).toBeGreaterThan(0);

    const unsited = defaults.filter((s) => s.labels.site_id === undefined).length;
    expect(unsited).toBeLessThanOrEqual(UNSITED_AT_MOST);
    const figures: SizingFigures = {
      account: ACCOUNT,
      defaults: perSite(published.length),
      namingASite: perSite(defaults.length - unsited),
      variants: {
        cacheHits: perSite(added.cacheHits.length),
        desktopAudits: perSite(added.desktopAudits.length),
        allPeriods: perSite(added.allPeriods.length),
        allBuckets: perSite(added.allBuckets.length),
      },
      everything: perSite(all.length),
      unsitedAtMost: UNSITED_AT_MOST,
    };
    expect(figures.defaults).toBeLessThanOrEqual(MAX_PER_SITE);

    const doc = await renderSizing(figures);
    if (process.env.SITEHOST_WRITE_SIZING === "1") writeFileSync(SIZING_DOC, doc);
    expect(
      readFileSync(SIZING_DOC, "utf8"),
      "docs/sizing.md is not what was measured: run this test with SITEHOST_WRITE_SIZING=1, then update the docs that quote it",
    ).toBe(doc);
  });
});
