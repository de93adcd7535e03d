/** The doctor's report as text a person can read (and paste into a support ticket), or as JSON. */
import { SECTION_TITLES, type DoctorReport, type Section, type Verdict } from "./types.js";

const MARK: Record<Verdict, string> = { pass: "ok  ", info: "note", warn: "WARN", fail: "FAIL" };

export function renderText(report: DoctorReport, apiUrl: string): string {
  const lines = [
    `sitehost-exporter ${report.version} doctor, ${report.generatedAt}, Node.js ${report.node}`,
    `config: ${report.configFile ?? "(none: defaults and environment)"}; API: ${apiUrl}; ${report.apiRequests} API requests made`,
  ];
  for (const section of Object.keys(SECTION_TITLES) as Section[]) {
    const findings = report.findings.filter((f) => f.section === section);
    if (findings.length === 0) continue;
    lines.push("", SECTION_TITLES[section]);
    for (const f of findings) {
      lines.push(`  [${MARK[f.verdict]}] ${f.title}: ${f.summary}`);
      if (f.fix && (f.verdict === "fail" || f.verdict === "warn")) lines.push(`         fix: ${f.fix}`);
    }
  }
  const fails = report.findings.filter((f) => f.verdict === "fail").length;
  const warns = report.findings.filter((f) => f.verdict === "warn").length;
  lines.push(
    "",
    fails > 0
      ? `${fails} check(s) failed${warns > 0 ? `, ${warns} warning(s)` : ""}: fix what the FAIL lines say (exit 1)`
      : `every check passed${warns > 0 ? ` (${warns} warning(s))` : ""} (exit 0)`,
  );
  return `${lines.join("\n")}\n`;
}

export function renderJson(report: DoctorReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
