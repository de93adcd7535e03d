/**
 * The slos section: validation that names what to fix, each site's objectives (default, overrides by
 * name, pattern, tag and kind, the last one winning), the objective series, and the generated rules:
 * the committed default file is what `slo-rules` prints, promtool accepts it and its unit tests pass.
 */
import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ConfigSchema } from "../../../src/config/schema.js";
import { SlosSchema } from "../../../src/config/slos.js";
import { objectiveSamples, objectivesFor } from "../../../src/slo/objectives.js";
import { sloRuleFile } from "../../../src/slo/ruleFile.js";
import { sloRuleGroups } from "../../../src/slo/rules.js";
import { makeSite } from "../collectors/fixtures.js";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "..", "..", "..");
const RULES = join(ROOT, "config", "slo", "sitehost-slo.rules.yaml");
const PROMTOOL = process.env.PROMTOOL ?? "/usr/bin/promtool";
const TESTS = join(ROOT, "config", "slo", "tests");
const CUSTOM = join(TESTS, "custom");

function problems(slos: unknown): string[] {
  const parsed = SlosSchema.safeParse(slos);
  return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
}

describe("slos configuration", () => {
  it("defaults: 99.5 % available, 95 % within 1 s, paging and ticket alerts", () => {
    const slos = ConfigSchema.parse({}).slos;
    expect(slos.availability).toEqual({ objective: 99.5 });
    expect(slos.latency).toEqual({ objective: 95, threshold: "1s" });
    expect(Object.keys(slos.alerts).sort()).toEqual(["page", "ticket"]);
  });

  it.each([
    [
      { latency: { objective: 95, threshold: "300ms" } },
      /latency\.threshold: "300ms" is not a bucket bound .*250ms, 500ms/,
    ],
    [{ availability: { objective: 100 } }, /availability\.objective/],
    [
      { alerts: { page: { severity: "critical", windows: [{ burnRate: 14.4, long: "2w", short: "5m" }] } } },
      /alerts\.page\.windows\.0\.long: 2w is not one of slos\.windows/,
    ],
    [
      { overrides: [{ match: {}, availability: false }] },
      /overrides\.0\.match: an override needs at least one/,
    ],
    [{ overrides: [{ match: { kinds: ["prod"] } }] }, /overrides\.0\.match\.kinds\.0/],
    [
      { groupingLabels: ["job", "instance"], probes: { groupingLabels: ["cluster"] } },
      /probes\.groupingLabels\.0: cluster is not one of slos\.groupingLabels \(job, instance\)/,
    ],
  ])("%j is refused: %s", (slos, message) => {
    expect(problems(slos).join("\n")).toMatch(message);
  });
});

describe("objectives per site", () => {
  const slos = SlosSchema.parse({
    overrides: [
      { match: { tags: ["shop"] }, availability: { objective: 99.9 } },
      { match: { namePatterns: ["blog-*"] }, latency: { objective: 90, threshold: "2.5s" } },
      { match: { kinds: ["staging"] }, availability: false, latency: false },
      { match: { names: ["vip"] }, availability: { objective: 99.95 } },
    ],
  });
  const tagged = (name: string, tag: string) => makeSite(1, { name, tags: [{ id: 1, name: tag }] });

  it.each([
    ["no override", makeSite(1, { name: "plain" }), { objective: 99.5 }, { objective: 95, threshold: "1s" }],
    ["by tag", tagged("store", "shop"), { objective: 99.9 }, { objective: 95, threshold: "1s" }],
    [
      "by name pattern",
      makeSite(1, { name: "blog-news" }),
      { objective: 99.5 },
      { objective: 90, threshold: "2.5s" },
    ],
    ["by kind, disabled", makeSite(1, { name: "plain", staging: true }), false, false],
    ["the last match wins", tagged("vip", "shop"), { objective: 99.95 }, { objective: 95, threshold: "1s" }],
  ])("%s", (_, site, availability, latency) => {
    expect(objectivesFor(site, slos)).toEqual({ availability, latency });
  });

  it("are series: availability alone, latency with its threshold in seconds", () => {
    const samples = objectiveSamples(makeSite(4, { name: "b" }), {
      availability: { objective: 99.5 },
      latency: { objective: 95, threshold: "250ms" },
    });
    expect(samples).toEqual([
      {
        name: "sitehost_site_slo_objective_ratio",
        labels: { site_id: "4", site: "b", slo: "availability" },
        value: 0.995,
      },
      {
        name: "sitehost_site_slo_objective_ratio",
        labels: { site_id: "4", site: "b", slo: "latency", threshold_seconds: "0.25" },
        value: 0.95,
      },
    ]);
  });
});

describe("generated SLO rules", () => {
  it("config/slo/sitehost-slo.rules.yaml is what slo-rules prints for the defaults (npm run slo:rules)", async () => {
    expect(await readFile(RULES, "utf8")).toBe(sloRuleFile(ConfigSchema.parse({}).slos));
  });

  it("record every SLI over every window and alert with summary, description and runbook entry", async () => {
    const file = parse(await readFile(RULES, "utf8")) as {
      groups: Array<{
        rules: Array<{ record?: string; alert?: string; annotations?: Record<string, string> }>;
      }>;
    };
    const rules = file.groups.flatMap((g) => g.rules);
    const records = new Set(rules.flatMap((r) => (r.record ? [r.record] : [])));
    for (const w of ["5m", "30m", "1h", "2h", "6h", "1d", "3d", "28d"]) {
      expect(records).toContain(`sitehost_site_slo:requests:increase${w}`);
      expect(records).toContain(`sitehost_site_slo:errors:increase${w}`);
    }
    const runbook = await readFile(join(ROOT, "docs", "runbook.md"), "utf8");
    for (const a of rules.filter((r) => r.alert)) {
      expect(a.annotations?.summary).toBeTruthy();
      expect(a.annotations?.description).toMatch(/\{\{ \$labels\.site \}\}/);
      expect(runbook).toContain(`## ${a.alert}\n`);
    }
  });

  it("config/slo/tests/custom/sitehost-slo.rules.yaml is what slo-rules prints for the slos.yaml beside it", async () => {
    const config = parse(await readFile(join(CUSTOM, "slos.yaml"), "utf8")) as unknown;
    expect(await readFile(join(CUSTOM, "sitehost-slo.rules.yaml"), "utf8")).toBe(
      sloRuleFile(ConfigSchema.parse(config).slos),
    );
  });

  it("pass promtool check rules and their promtool unit tests", async () => {
    const check = await run(PROMTOOL, ["check", "rules", RULES]);
    expect(check.stdout).toContain("SUCCESS: 60 rules found");
    const yamlIn = async (dir: string, suffix: string) =>
      (await readdir(dir)).filter((f) => f.endsWith(suffix)).map((f) => join(dir, f));
    const files = [...(await yamlIn(TESTS, ".yaml")), ...(await yamlIn(CUSTOM, ".test.yaml"))];
    expect(files.length).toBeGreaterThanOrEqual(2);
    const { stdout } = await run(PROMTOOL, ["test", "rules", ...files]);
    expect(stdout).toContain("SUCCESS");
    expect(stdout).not.toContain("FAILED");
  });

  it("an slos section with enabled: false prints no rule", () => {
    expect(parse(sloRuleFile(SlosSchema.parse({ enabled: false })))).toEqual({ groups: [] });
  });

  it("the probe SLI: summed by site_id and the grouping labels probes share (not job, instance); off with probes.enabled: false", () => {
    const rules = (slos: unknown) => sloRuleGroups(SlosSchema.parse(slos)).flatMap((g) => g.rules);
    const probeRules = (slos: unknown) =>
      rules(slos).filter((r) =>
        "record" in r ? r.labels.slo === "probe" : r.alert === "SitehostSiteProbeBudgetBurn",
      );
    const raw = probeRules({}).find(
      (r) => "record" in r && r.record === "sitehost_site_slo:requests:increase5m",
    );
    expect(raw?.expr).toContain(
      'sum by (cluster, site_id) (count_over_time(probe_success{site_id!=""}[5m]))',
    );
    expect(raw?.expr).toContain(
      "max by (cluster, job, instance, site_id, site) (sitehost_site_slo_objective_ratio",
    );
    // Two alerts (quiet, busy) per window of every class, and both SLIs recorded over every window.
    expect(probeRules({}).filter((r) => "alert" in r)).toHaveLength(6);
    expect(probeRules({}).filter((r) => "record" in r)).toHaveLength(16);
    expect(probeRules({ groupingLabels: ["namespace"] })[0]?.expr).toContain("sum by (namespace, site_id)");
    const alerts = probeRules({}).flatMap((r) => ("alert" in r ? [r] : []));
    expect(alerts.filter((a) => a.labels.traffic === "quiet").map((a) => a.labels.severity)).toEqual([
      "critical",
      "critical",
      "warning",
    ]);
    expect(new Set(alerts.filter((a) => a.labels.traffic === "busy").map((a) => a.labels.severity))).toEqual(
      new Set(["warning"]),
    );
    for (const a of alerts) {
      expect(a.annotations.description).toMatch(
        a.labels.traffic === "quiet"
          ? /the probes are the only word on it\.$/
          : /or the prober is in trouble\.$/,
      );
    }
    expect(probeRules({ probes: { enabled: false } })).toEqual([]);
    expect(rules({ probes: { enabled: false } })).toHaveLength(rules({}).length - 22);
  });
});
