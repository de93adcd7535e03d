/**
 * What a generated SLO rule reads per series, for any windows a user may configure: a window is read
 * from the raw counters only up to an hour (120 samples at a 30 s scrape), longer ones add up recorded
 * 5-minute or hourly increases (864 steps for 3 days, 672 for 28; a 90-day budget 2,160), and no
 * recording rule reads a recorded window it is not evaluated after. So at 5,000 sites no rule comes
 * near Prometheus's `--query.max-samples` (50 million): a recorded window is one series per site, a
 * raw one about ten (the response counters by status class and cache state).
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { durationMs } from "../../../src/config/duration.js";
import { SlosSchema } from "../../../src/config/slos.js";
import { sloRuleGroups } from "../../../src/slo/rules.js";

const SCRAPE_MS = 30_000;

/** Samples each series of a selector `[range]` or `[range:step]` reads, at a 30 s scrape. */
function readsPerSeries(expr: string): number[] {
  return [...expr.matchAll(/\[(\w+)(?::(\w+))?\]/g)].map(([, range, step]) =>
    Math.ceil(durationMs(range as string) / (step ? durationMs(step) : SCRAPE_MS)),
  );
}

const configs = {
  defaults: {},
  "a 90-day budget and a 2-week ticket window": {
    period: "90d",
    windows: ["5m", "30m", "1h", "6h", "2w"],
    alerts: { ticket: { severity: "warning", windows: [{ burnRate: 1, long: "2w", short: "6h" }] } },
  },
  "odd windows (7m, 90m, 4w)": {
    windows: ["7m", "90m", "4w"],
    alerts: { page: { severity: "critical", windows: [{ burnRate: 14.4, long: "90m", short: "7m" }] } },
  },
};

describe.each(Object.entries(configs))("SLO rules with %s", (_, slos) => {
  const groups = sloRuleGroups(SlosSchema.parse(slos));
  const rules = groups.flatMap((g) => g.rules.map((r) => ({ group: g.name, ...r })));

  it("read at most 120 raw samples or 2,500 recorded steps per series", () => {
    for (const r of rules) {
      const reads = readsPerSeries(r.expr);
      const raw = /increase\(sitehost_site_http/.test(r.expr);
      for (const n of reads)
        expect(n, `${"record" in r ? r.record : ""}: ${r.expr}`).toBeLessThanOrEqual(raw ? 120 : 2500);
    }
  });

  it("record from windows of the fast group, or of their own group recorded before them", () => {
    const recordedIn = new Map<string, { group: string; index: number }>();
    rules.forEach((r, index) => {
      if (!("record" in r) || recordedIn.has(r.record)) return;
      recordedIn.set(r.record, { group: r.group, index });
    });
    rules.forEach((r, index) => {
      if (!("record" in r)) return;
      for (const [name] of r.expr.matchAll(/sitehost_site_slo:\w+:increase\w+/g)) {
        const at = recordedIn.get(name);
        expect(at, `${name} is recorded`).toBeDefined();
        if (at?.group === r.group) expect(at.index, `${name} before its reader`).toBeLessThan(index);
        else expect(at?.group).toBe("sitehost-slo-sli");
      }
    });
  });

  it("evaluate windows over 6 hours (and the 2-hour base of longer ones) every 2m30s, under Prometheus's 5-minute lookback", () => {
    const slow = groups.find((g) => g.name === "sitehost-slo-sli-long");
    expect(slow?.interval).toBe("2m30s");
    const longest = Math.max(
      ...rules.flatMap((r) => ("record" in r ? [durationMs(r.record.replace(/.*increase/, ""))] : [])),
    );
    for (const r of slow?.rules ?? []) {
      const w = ("record" in r ? r.record : "").replace(/.*increase/, "");
      if (w === "2h") expect(longest).toBeGreaterThan(3 * 86_400_000);
      else expect(durationMs(w)).toBeGreaterThan(6 * 3_600_000);
    }
  });
});

describe("the shipped alert rules", () => {
  it("read at most an hour of any series (120 samples at a 30 s scrape), so none nears the limit either", async () => {
    const file = join(
      import.meta.dirname,
      "..",
      "..",
      "..",
      "config",
      "alerts",
      "sitehost-exporter.rules.yaml",
    );
    const rules = (
      parse(await readFile(file, "utf8")) as { groups: Array<{ rules: Array<{ expr: string }> }> }
    ).groups.flatMap((g) => g.rules);
    expect(rules.length).toBeGreaterThan(25);
    for (const r of rules) for (const n of readsPerSeries(r.expr)) expect(n, r.expr).toBeLessThanOrEqual(120);
  });
});
