/**
 * The jsonnet mixin (mixin/), run with Debian's jsonnet: its prometheusAlerts are the shipped rules
 * (the defaults, and the customised set of config/alerts/tests/custom/values.yaml given as _config),
 * its prometheusRules the generated SLO rules, its grafanaDashboards the shipped dashboards; promtool
 * accepts what it renders.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "..", "..", "..");
const JSONNET = process.env.JSONNET_BIN ?? "/usr/bin/jsonnet";
const PROMTOOL = process.env.PROMTOOL ?? "/usr/bin/promtool";
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** `field` of the mixin, with `config` over its _config. */
async function mixin(field: string, config: unknown = {}): Promise<unknown> {
  const code = `((import 'mixin.libsonnet') + { _config+:: ${JSON.stringify(config)} }).${field}`;
  const { stdout } = await run(JSONNET, ["-J", join(ROOT, "mixin"), "-e", code], { maxBuffer: 64 << 20 });
  return JSON.parse(stdout) as unknown;
}

const yamlFile = async (...path: string[]) => parse(await readFile(join(ROOT, ...path), "utf8")) as unknown;

describe("the jsonnet mixin", () => {
  it("prometheusAlerts with the default _config are config/alerts/sitehost-exporter.rules.yaml", async () => {
    expect(await mixin("prometheusAlerts")).toEqual(
      await yamlFile("config/alerts/sitehost-exporter.rules.yaml"),
    );
  });

  it("prometheusAlerts with the chart's custom settings as _config are the customised rules", async () => {
    const { prometheusRule } = (await yamlFile("config/alerts/tests/custom/values.yaml")) as {
      prometheusRule: Record<string, unknown>;
    };
    expect(await mixin("prometheusAlerts", prometheusRule)).toEqual(
      await yamlFile("config/alerts/tests/custom/sitehost-exporter.rules.yaml"),
    );
  });

  it("prometheusRules are the SLO rules for the default slos section", async () => {
    expect(await mixin("prometheusRules")).toEqual(await yamlFile("config/slo/sitehost-slo.rules.yaml"));
  });

  it("grafanaDashboards are the shipped dashboards", async () => {
    const files = (await readdir(join(ROOT, "dashboards"))).filter((f) => f.endsWith(".json")).sort();
    const dashboards = (await mixin("grafanaDashboards")) as Record<string, unknown>;
    expect(Object.keys(dashboards).sort()).toEqual(files);
    for (const f of files)
      expect(dashboards[f]).toEqual(JSON.parse(await readFile(join(ROOT, "dashboards", f), "utf8")));
  });

  it("promtool check rules accepts its alerts and rules, a disabled rule is left out", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sitehost-mixin-"));
    dirs.push(dir);
    const config = { rules: { SitehostExporterDown: { enabled: false } } };
    const alerts = (await mixin("prometheusAlerts", config)) as {
      groups: Array<{ rules: Array<{ alert?: string }> }>;
    };
    expect(alerts.groups.flatMap((g) => g.rules).some((r) => r.alert === "SitehostExporterDown")).toBe(false);
    const files = [join(dir, "alerts.yaml"), join(dir, "rules.yaml")];
    await writeFile(files[0] as string, JSON.stringify(alerts));
    await writeFile(files[1] as string, JSON.stringify(await mixin("prometheusRules")));
    const { stdout } = await run(PROMTOOL, ["check", "rules", ...files]);
    expect(stdout.match(/SUCCESS/g)).toHaveLength(2);
  });
});
