/**
 * What `sitehost-exporter doctor` reports: findings, each with a verdict, what was seen and, when
 * something is wrong, the fix. Checks are small functions that return findings.
 */

/** pass: as it should be; info: counted, not a failure (a site not enrolled in git); warn: works, but look; fail: fix it. */
export type Verdict = "pass" | "info" | "warn" | "fail";

export type Section = "platform" | "endpoints" | "budget" | "otlp" | "exporter";

export const SECTION_TITLES: Record<Section, string> = {
  platform: "Platform access",
  endpoints: "Endpoints the enabled collectors and log streams use",
  budget: "Rate limits and the request budget",
  otlp: "Log shipping (OTLP)",
  exporter: "The exporter's own setup",
};

export interface Finding {
  /** Stable id for scripts (`token`, `endpoint:/sites/{id}/domains`, `otlp`, …). */
  id: string;
  section: Section;
  title: string;
  verdict: Verdict;
  /** What was seen, one line. */
  summary: string;
  /** What to do about it (fail and warn). */
  fix?: string;
  /** Facts for the JSON output (latency, status, fields, …); never secrets. */
  details?: Record<string, unknown>;
}

export interface DoctorReport {
  version: string;
  generatedAt: string;
  node: string;
  configFile: string | undefined;
  findings: Finding[];
  /** API requests the checks made (the token's included). */
  apiRequests: number;
  /** 0 every check passed (warnings and counted facts included), 1 something failed. */
  exitCode: 0 | 1;
}

export const failed = (findings: readonly Finding[]): boolean => findings.some((f) => f.verdict === "fail");
