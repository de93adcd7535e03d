/**
 * `doctor --output json` (the built CLI, as a child process) is JSON on stdout whatever stops it,
 * with the text form's exit code: a YAML syntax error, a file that cannot be read, invalid values,
 * missing credentials, an unknown flag. None of these asks anything of the platform.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { DoctorErrorReport } from "../../../src/cli/doctorJson.js";
import { builtCli } from "../../helpers/builtCli.js";

const { dir, run, file } = builtCli("doctor-json");
/** Nothing listens here: were a request sent, it would fail, not hang. */
const ENV = {
  SITEHOST_API_URL: "http://127.0.0.1:9/v1",
  SITEHOST_CLIENT_ID: "my-id",
  SITEHOST_CLIENT_SECRET: "s3cret-s3cret",
};

const doctor = (args: string[], env: Record<string, string> = ENV) => run(["doctor", ...args], env);

/** Runs `doctor --output json`, checks stdout is one JSON report with its exit code, returns it. */
function jsonReport(args: string[], code: number, env?: Record<string, string>): DoctorErrorReport {
  const r = doctor(["--output", "json", ...args], env);
  expect(r.code, r.stderr).toBe(code);
  const report = JSON.parse(r.stdout) as DoctorErrorReport;
  expect(report.exitCode).toBe(code);
  expect(report.findings).toEqual([]);
  expect(report.apiRequests).toBe(0);
  return report;
}

describe("doctor --output json when the checks cannot run", () => {
  it("a YAML syntax error: exit 2, the problem with its line, column and snippet, nothing on stderr", () => {
    const cfg = file("syntax.yaml", "api:\n  clientId: my-id\n    url: http://x\n");
    const r = doctor(["--config", cfg, "--output", "json"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("");
    const report = JSON.parse(r.stdout) as DoctorErrorReport;
    expect(report.configFile).toBe(cfg);
    expect(report.error.kind).toBe("configuration");
    expect(report.error.problems).toHaveLength(1);
    const lines = report.error.problems[0]?.split("\n") ?? [];
    expect(lines[0]).toMatch(
      new RegExp(`^${cfg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:3:5: YAML syntax error`),
    );
    expect(lines).toContain("    3 |     url: http://x");
    // The text form says the same on stderr, also exit 2.
    const text = doctor(["--config", cfg]);
    expect(text.code).toBe(2);
    expect(text.stderr).toContain(`${cfg}:3:5: YAML syntax error`);
  });

  it("a config file that cannot be read: exit 2", () => {
    const missing = join(dir, "absent.yaml");
    const report = jsonReport(["--config", missing], 2);
    expect(report.error.problems).toEqual([`${missing}: cannot read the config file (ENOENT)`]);
  });

  it("invalid values and missing credentials: exit 2, one problem each", () => {
    const cfg = file("invalid.yaml", "api:\n  timeout: soon\n");
    const report = jsonReport(["--config", cfg], 2, { PATH: process.env.PATH ?? "" });
    expect(report.error.problems).toEqual([`api.timeout: "soon" is not a duration such as 30s or 5m`]);
    const noCredentials = jsonReport([], 2, { PATH: process.env.PATH ?? "" });
    expect(noCredentials.error.problems.map((p) => p.split(":")[0])).toEqual([
      "api.clientId",
      "api.clientSecret",
    ]);
  });

  it("an invalid OTLP variable: exit 2", () => {
    const report = jsonReport([], 2, { ...ENV, OTEL_EXPORTER_OTLP_PROTOCOL: "carrier-pigeon" });
    expect(report.error.kind).toBe("configuration");
    expect(report.error.problems.join("\n")).toContain("OTEL_EXPORTER_OTLP_PROTOCOL");
  });

  it("an unknown flag, before or after --output json (also as --output=json): exit 2, kind usage", () => {
    for (const args of [
      ["--bogus", "--output", "json"],
      ["--output=json", "--bogus"],
    ]) {
      const r = doctor(args);
      expect(r.code).toBe(2);
      const report = JSON.parse(r.stdout) as DoctorErrorReport;
      expect(report.error).toEqual({
        kind: "usage",
        message: "error: unknown option '--bogus'",
        problems: [],
      });
    }
  });
});
