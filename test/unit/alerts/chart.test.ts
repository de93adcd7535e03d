/**
 * The rule files and the chart's PrometheusRule come from one definition (config/alerts/src): the
 * committed files are what `npm run alerts` writes, and `helm template` renders exactly the rules of
 * config/alerts/ with default values and those of tests/custom/ with tests/custom/values.yaml.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { SlosSchema } from "../../../src/config/slos.js";
import { sloRuleGroups } from "../../../src/slo/rules.js";
import { parse, parseAllDocuments } from "yaml";
import { outputs } from "../../../config/alerts/src/generate.js";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "..", "..", "..");
const CHART = join(ROOT, "helm", "sitehost-exporter");
const ALERTS = join(ROOT, "config", "alerts");
const CUSTOM = join(ALERTS, "tests", "custom");

interface RuleFile {
  groups: Array<{ name: string; rules: Array<Record<string, unknown>> }>;
}

let helm: string;
beforeAll(async () => {
  helm = (
    await run("bash", [join(ROOT, "scripts", "ci", "helm-binary.sh")], { timeout: 180_000 })
  ).stdout.trim();
}, 200_000);

/** The spec of the PrometheusRule `helm template` renders with these arguments. */
async function renderedRules(...args: string[]): Promise<RuleFile> {
  const { stdout } = await run(
    helm,
    ["template", "x", CHART, "--set", "prometheusRule.enabled=true", ...args],
    {
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  const rule = parseAllDocuments(stdout)
    .map((d) => d.toJS() as { kind?: string; spec?: RuleFile } | null)
    .find((d) => d?.kind === "PrometheusRule");
  expect(rule, "a PrometheusRule").toBeDefined();
  return rule?.spec as RuleFile;
}

async function ruleFile(path: string): Promise<RuleFile> {
  return parse(await readFile(path, "utf8")) as RuleFile;
}

const alertNames = (f: RuleFile): string[] => f.groups.flatMap((g) => g.rules.map((r) => String(r.alert)));

/** The SLO groups (rendered from config.slos, compared with slo-rules below) and the others. */
const isSlo = (g: RuleFile["groups"][number]) => g.name.startsWith("sitehost-slo");
const withoutSlo = (f: RuleFile): RuleFile => ({ ...f, groups: f.groups.filter((g) => !isSlo(g)) });

describe("SLO rules from config.slos", () => {
  it.each([
    ["the default values", undefined],
    ["ci/slo-values.yaml", join(CHART, "ci", "slo-values.yaml")],
  ])(
    "with %s the chart renders what slo-rules prints for the same slos",
    async (_, values) => {
      const rendered = await renderedRules(...(values ? ["-f", values] : []));
      const slos = values
        ? (parse(await readFile(values, "utf8")) as { config?: { slos?: unknown } }).config?.slos
        : undefined;
      const expected = sloRuleGroups(SlosSchema.parse(slos ?? {}));
      // The SLIs, the windows over 6 hours (their own group, every 2m30s), the alerts.
      expect(expected.map((g) => g.name)).toEqual([
        "sitehost-slo-sli",
        "sitehost-slo-sli-long",
        "sitehost-slo-alerts",
      ]);
      expect(rendered.groups.filter(isSlo)).toEqual(JSON.parse(JSON.stringify(expected)));
    },
    60_000,
  );
});

describe("rules from one definition", () => {
  it("the committed rule files, the chart's copy, values schema and README are what npm run alerts writes", async () => {
    for (const [path, text] of await outputs()) expect(await readFile(path, "utf8"), path).toBe(text);
  });

  it("helm template with default values renders exactly the rules of config/alerts", async () => {
    const expected = await ruleFile(join(ALERTS, "sitehost-exporter.rules.yaml"));
    expect(alertNames(expected).length).toBeGreaterThan(25);
    expect(withoutSlo(await renderedRules())).toEqual(expected);
  }, 60_000);

  it("helm template with tests/custom/values.yaml renders exactly the customised rules", async () => {
    const expected = await ruleFile(join(CUSTOM, "sitehost-exporter.rules.yaml"));
    expect(withoutSlo(await renderedRules("-f", join(CUSTOM, "values.yaml")))).toEqual(expected);
    // What the customised set must show: one rule off, the selector everywhere, the settings applied.
    const defaults = await ruleFile(join(ALERTS, "sitehost-exporter.rules.yaml"));
    expect(alertNames(defaults)).toContain("SitehostSitePerformanceScoreLow");
    expect(alertNames(expected)).not.toContain("SitehostSitePerformanceScoreLow");
    const rules = expected.groups.flatMap((g) => g.rules);
    for (const r of rules) {
      const job = String(r.alert).startsWith("SitehostOtelCollector") ? "sites-otel-collector" : "sites";
      expect(String(r.expr), String(r.alert)).toContain(`job="${job}", namespace="monitoring"`);
    }
    expect(rules.find((r) => r.alert === "SitehostExporterDown")).toMatchObject({
      for: "2m",
      labels: { severity: "warning", team: "web" },
    });
    expect(String(rules.find((r) => r.alert === "SitehostCertificateExpiringSoon")?.expr)).toContain(
      ">= 7 * 86400",
    );
    // groupingLabels [region, namespace, job, instance]: every clause by it; the shard alert without
    // instance, namespace once.
    expect(String(rules.find((r) => r.alert === "SitehostExporterShardServedTwice")?.expr)).toMatch(
      /^count by \(region, namespace, job, shard\) /,
    );
    expect(String(rules.find((r) => r.alert === "SitehostSiteHighHttp5xxRate")?.expr)).toContain(
      "and on (region, namespace, job, instance, site_id)",
    );
  }, 60_000);

  it("prometheusRule.groupingLabels must be label names, at least one, each once", async () => {
    await expect(
      renderedRules("--set", "prometheusRule.groupingLabels={cluster,k8s-cluster}"),
    ).rejects.toThrow(/groupingLabels/);
    await expect(renderedRules("--set-json", "prometheusRule.groupingLabels=[]")).rejects.toThrow(
      /groupingLabels/,
    );
    await expect(renderedRules("--set", "prometheusRule.groupingLabels={job,job}")).rejects.toThrow(
      /groupingLabels/,
    );
  }, 60_000);

  it("an override of false, 0 or an empty for is applied (not lost to a merge of defaults)", async () => {
    const spec = await renderedRules(
      "--set",
      "prometheusRule.rules.SitehostExporterDown.enabled=false",
      "--set",
      "prometheusRule.rules.SitehostSiteBackupStale.hours=0",
      "--set",
      "prometheusRule.rules.SitehostSiteDisabled.for=",
    );
    const rules = spec.groups.flatMap((g) => g.rules);
    expect(alertNames(spec)).not.toContain("SitehostExporterDown");
    expect(String(rules.find((r) => r.alert === "SitehostSiteBackupStale")?.expr)).toMatch(/> 0 \* 3600$/);
    expect(rules.find((r) => r.alert === "SitehostSiteDisabled")).not.toHaveProperty("for");
  }, 60_000);

  it("without prometheusRule.selector the rules select the job the ServiceMonitor or PodMonitor gives", async () => {
    const exprOf = async (...args: string[]) =>
      String((await renderedRules(...args)).groups[0]?.rules[0]?.expr);
    expect(await exprOf("--set", "nameOverride=sites")).toBe('up{job="sites"} == 0');
    const collectorRule = (await renderedRules("--set", "nameOverride=sites")).groups
      .flatMap((g) => g.rules)
      .find((r) => r.alert === "SitehostOtelCollectorExportFailing");
    expect(String(collectorRule?.expr)).toContain('{job="sites-otel-collector"}');
    expect(await exprOf("--set", "serviceMonitor.jobLabel=")).toBe('up{job="x-sitehost-exporter"} == 0');
    expect(
      await exprOf("--set", "podMonitor.enabled=true", "--set", "podMonitor.jobLabel=", "--namespace", "mon"),
    ).toBe('up{job="mon/x-sitehost-exporter"} == 0');
    expect(await exprOf("--set", 'prometheusRule.selector=job="a"\\,env="b"')).toBe(
      'up{job="a",env="b"} == 0',
    );
    await expect(renderedRules("--set", "serviceMonitor.jobLabel=team")).rejects.toThrow(
      /has no label team .* set prometheusRule.selector/,
    );
  }, 60_000);

  it("a rule or threshold the definitions do not have is refused", async () => {
    await expect(
      renderedRules("--set", "prometheusRule.rules.SitehostNoSuchAlert.enabled=false"),
    ).rejects.toThrow(/SitehostNoSuchAlert/);
    await expect(
      renderedRules("--set", "prometheusRule.rules.SitehostSiteBackupStale.days=3"),
    ).rejects.toThrow(/days/);
  }, 60_000);
});
