import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { RenderedRule, RuleFile } from "../../../config/alerts/src/render.js";
import { RUNBOOK_BASE } from "../../../config/alerts/src/rule.js";
import { KNOWN_METRICS, metricSelectors } from "./contract.js";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "..", "..", "..");
const RULES = join(ROOT, "config", "alerts", "sitehost-exporter.rules.yaml");
const TESTS_DIR = join(ROOT, "config", "alerts", "tests");
const RUNBOOK = join(ROOT, "docs", "runbook.md");
const PROMTOOL = process.env.PROMTOOL ?? "/usr/bin/promtool";

type Rule = RenderedRule;
interface PromtoolTestFile {
  tests: Array<{ alert_rule_test?: Array<{ alertname: string; exp_alerts?: unknown[] }> }>;
}

/** The generated SLO rules (the defaults, see config/slo) are shipped alerts too, with runbook sections. */
const SLO_RULES = join(ROOT, "config", "slo", "sitehost-slo.rules.yaml");
const rules = (parse(await readFile(RULES, "utf8")) as RuleFile).groups.flatMap((g) => g.rules);
const sloAlerts = (parse(await readFile(SLO_RULES, "utf8")) as RuleFile).groups
  .flatMap((g) => g.rules)
  .filter((r): r is Rule & { alert: string } => typeof r.alert === "string");
const alerts = rules.filter((r): r is Rule & { alert: string } => typeof r.alert === "string");
/** Every shipped alert name once. */
const alertNames = [...new Set([...alerts, ...sloAlerts].map((a) => a.alert))];
const testFiles = (await readdir(TESTS_DIR))
  .filter((f) => f.endsWith(".test.yaml"))
  .map((f) => join(TESTS_DIR, f));
/** The customised rule set (tests/custom/values.yaml) and its own promtool tests. */
const CUSTOM_DIR = join(TESTS_DIR, "custom");
const customTestFiles = (await readdir(CUSTOM_DIR))
  .filter((f) => f.endsWith(".test.yaml"))
  .map((f) => join(CUSTOM_DIR, f));

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes. */
function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  for (const m of markdown.matchAll(/^#{1,6}\s+(.+?)\s*$/gm)) {
    out.add(
      (m[1] as string)
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, "")
        .replace(/\s/g, "-"),
    );
  }
  return out;
}

describe("alert rules", () => {
  it("promtool is installed (.ci/run installs the prometheus package)", () => {
    expect(existsSync(PROMTOOL), `${PROMTOOL} missing: apt-get install prometheus`).toBe(true);
  });

  it("pass promtool check rules", async () => {
    const { stdout } = await run(PROMTOOL, ["check", "rules", RULES]);
    expect(stdout).toContain(`SUCCESS: ${rules.length} rules found`);
  });

  it("pass their promtool unit tests", async () => {
    expect(testFiles.length).toBeGreaterThan(0);
    // promtool resolves rule_files relative to the test file; it exits non-zero on any failed case.
    const { stdout } = await run(PROMTOOL, ["test", "rules", ...testFiles], { maxBuffer: 16 * 1024 * 1024 });
    expect(stdout).toContain("SUCCESS");
    expect(stdout).not.toContain("FAILED");
  }, 180_000);

  it("the customised rule set passes promtool check rules and its own unit tests", async () => {
    expect(customTestFiles.length).toBeGreaterThan(0);
    await run(PROMTOOL, ["check", "rules", join(CUSTOM_DIR, "sitehost-exporter.rules.yaml")]);
    const { stdout } = await run(PROMTOOL, ["test", "rules", ...customTestFiles], {
      maxBuffer: 16 * 1024 * 1024,
    });
    expect(stdout).toContain("SUCCESS");
    expect(stdout).not.toContain("FAILED");
  }, 60_000);

  it("has exactly the alerts the runbook describes, each with a section its runbook_url points at", async () => {
    const runbook = await readFile(resolve(import.meta.dirname, "../../../docs/runbook.md"), "utf8");
    const sections = [...runbook.matchAll(/^## (Sitehost\w+)$/gm)].map((m) => m[1] as string);
    expect(sections.length).toBeGreaterThan(15);
    expect([...alertNames].sort()).toEqual([...sections].sort());
    for (const a of alerts) {
      expect(a.annotations?.runbook_url).toMatch(
        new RegExp(`/docs/runbook\\.md#${(a.alert as string).toLowerCase()}$`),
      );
    }
  });

  it.each(alerts.map((a) => [a.alert, a] as const))(
    "%s follows the mixin conventions: CamelCase name, severity, summary, templated description",
    (name, a) => {
      expect(name).toMatch(/^Sitehost[A-Z][A-Za-z0-9]+$/);
      expect(["critical", "warning", "info"]).toContain(a.labels?.severity);
      expect(a.annotations?.summary?.trim().length ?? 0).toBeGreaterThan(10);
      const description = a.annotations?.description ?? "";
      expect(description.trim().length).toBeGreaterThan(20);
      // absent() has no labels to show; every other alert names what it is about.
      if (name !== "SitehostExporterAbsent") expect(description).toMatch(/\{\{ \$(labels\.\w+|value)/);
    },
  );

  it.each(alerts.map((a) => [a.alert, a] as const))(
    "%s links to an existing runbook section",
    async (name, a) => {
      const url = a.annotations?.runbook_url ?? "";
      expect(url.startsWith(RUNBOOK_BASE), url).toBe(true);
      const anchor = url.slice(RUNBOOK_BASE.length);
      expect(anchor).toBe(name.toLowerCase());
      expect(anchors(await readFile(RUNBOOK, "utf8")).has(anchor), `docs/runbook.md has no #${anchor}`).toBe(
        true,
      );
    },
  );

  it("the runbook has no section for an alert that does not exist", async () => {
    const names = new Set(alertNames);
    const sections = [...(await readFile(RUNBOOK, "utf8")).matchAll(/^## (Sitehost\w+)\s*$/gm)].map(
      (m) => m[1],
    );
    expect(sections.filter((s) => !names.has(s as string))).toEqual([]);
    expect(sections.length).toBe(alertNames.length);
  });

  it("every alert has a promtool case where it fires and one where it must not", async () => {
    const cases = new Map<string, { fires: number; quiet: number }>();
    for (const file of testFiles) {
      const parsed = parse(await readFile(file, "utf8")) as PromtoolTestFile;
      for (const t of parsed.tests) {
        for (const c of t.alert_rule_test ?? []) {
          const entry = cases.get(c.alertname) ?? { fires: 0, quiet: 0 };
          if ((c.exp_alerts ?? []).length > 0) entry.fires++;
          else entry.quiet++;
          cases.set(c.alertname, entry);
        }
      }
    }
    for (const a of alerts) {
      expect(cases.get(a.alert)?.fires ?? 0, `${a.alert} never fires in a test`).toBeGreaterThan(0);
      expect(cases.get(a.alert)?.quiet ?? 0, `${a.alert} has no case where it stays quiet`).toBeGreaterThan(
        0,
      );
    }
  });

  it("every metric the rules use is part of the documented contract", () => {
    for (const r of rules) {
      const sels = metricSelectors(r.expr);
      expect(sels.length, r.expr).toBeGreaterThan(0);
      for (const s of sels)
        expect(KNOWN_METRICS.has(s.name), `${s.name} in ${r.alert ?? r.record}`).toBe(true);
    }
  });
});
