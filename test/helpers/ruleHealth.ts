/**
 * Test helper: the rule files that ship with sitehost-exporter, and the health Prometheus reports for
 * each loaded rule (GET /api/v1/rules).
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";

const ROOT = join(import.meta.dirname, "..", "..");

/**
 * Every rule file a user loads: config/alerts/*.rules.yaml as shipped, and the SLO rules generated for
 * the default slos section, copied into `dir` with their groups' own intervals at the test's
 * evaluation interval (`evenIntervals`).
 */
export async function shippedRuleFiles(dir: string): Promise<string[]> {
  const dirs = [join(ROOT, "config", "alerts"), join(ROOT, "config", "slo")];
  const files = await Promise.all(
    dirs.map(async (d) => (await readdir(d)).filter((f) => f.endsWith(".rules.yaml")).map((f) => join(d, f))),
  );
  return Promise.all(files.flat().map((f) => evenIntervals(f, dir)));
}

/**
 * A copy of a rule file (in `dir`) whose groups all run at Prometheus's evaluation interval: the same
 * rules, evaluated within a test's seconds (the SLO rules' long windows are a group evaluated every
 * 2m30s). The file itself when no group has an interval of its own.
 */
export async function evenIntervals(file: string, dir: string): Promise<string> {
  const text = await readFile(file, "utf8");
  const even = text.replace(/^(\s+)interval: \S+\n/gm, "");
  if (even === text) return file;
  const copy = join(dir, `even-${basename(file)}`);
  await writeFile(copy, even);
  return copy;
}

export interface RuleStatus {
  file: string;
  group: string;
  name: string;
  type: "alerting" | "recording";
  health: "ok" | "err" | "unknown";
  lastError?: string;
  /** When Prometheus last evaluated the rule (ms since the epoch; 0 = never). */
  lastEvaluationMs: number;
}

interface RulesAnswer {
  status: string;
  data?: {
    groups: Array<{
      name: string;
      file: string;
      rules: Array<{
        name: string;
        type: RuleStatus["type"];
        health: RuleStatus["health"];
        lastError?: string;
        lastEvaluation: string;
      }>;
    }>;
  };
}

/** Every rule Prometheus has loaded, with its health. */
export async function ruleStatuses(prometheusUrl: string): Promise<RuleStatus[]> {
  const res = await fetch(`${prometheusUrl}/api/v1/rules`);
  const body = (await res.json()) as RulesAnswer;
  if (body.status !== "success" || !body.data) throw new Error(`GET /api/v1/rules answered ${res.status}`);
  return body.data.groups.flatMap((g) =>
    g.rules.map((r) => ({
      file: g.file,
      group: g.name,
      name: r.name,
      type: r.type,
      health: r.health,
      ...(r.lastError ? { lastError: r.lastError } : {}),
      lastEvaluationMs: Math.max(0, Date.parse(r.lastEvaluation) || 0),
    })),
  );
}
