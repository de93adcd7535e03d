/**
 * `sitehost-exporter doctor` (the built command) against the simulator: a healthy setup passes with
 * exit 0, and each fault a new user meets is a FAIL with its fix and exit 1: a wrong secret, a scope
 * the API application lacks, a field the platform renamed in one endpoint, an OTLP collector that is
 * not there. Read requests only, a bounded number of them, no secret in the report.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.js";
import { MAIN } from "../helpers/daemon.js";
import { startFaultProxy, type Faults } from "../helpers/faultProxy.js";
import { startOtlpReceiver, type OtlpReceiver } from "../helpers/otlp-receiver.js";
import { refusedPort } from "../helpers/ports.js";

let sim: RunningSimulator;
let receiver: OtlpReceiver;
let dir: string;

beforeAll(async () => {
  sim = await startSimulator({ sites: 6, seed: 11, logRatePerSite: 0 });
  receiver = await startOtlpReceiver();
  dir = await mkdtemp(join(tmpdir(), "sitehost-doctor-"));
}, 60_000);

afterAll(async () => {
  await receiver?.close();
  await sim?.close();
  await rm(dir, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function doctor(env: Record<string, string>, args: string[] = []): Promise<Run> {
  const child = spawn(process.execPath, [MAIN, "doctor", ...args], {
    env: {
      PATH: process.env.PATH ?? "",
      SITEHOST_API_URL: sim.apiUrl,
      SITEHOST_AUTH_URL: sim.authUrl,
      SITEHOST_CLIENT_ID: sim.clientId,
      SITEHOST_CLIENT_SECRET: sim.clientSecret,
      SITEHOST_CHECKPOINT_DIR: join(dir, "checkpoints"),
      OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: receiver.logsEndpoint,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

/** The report's line for a check, and the fix line under it. */
function lineOf(report: string, title: string): { line: string; fix: string | undefined } {
  const lines = report.split("\n");
  const i = lines.findIndex((l) => l.includes(`] ${title}`));
  expect(i, `no line for ${title} in:\n${report}`).toBeGreaterThanOrEqual(0);
  const next = lines[i + 1] ?? "";
  return { line: lines[i] as string, fix: next.trim().startsWith("fix:") ? next.trim() : undefined };
}

async function withProxy(faults: Faults, run: (env: Record<string, string>) => Promise<void>): Promise<void> {
  const proxy = await startFaultProxy(sim.authUrl, faults);
  try {
    await run({ SITEHOST_API_URL: proxy.apiUrl, SITEHOST_AUTH_URL: proxy.authUrl });
  } finally {
    await proxy.close();
  }
}

describe("doctor", () => {
  it("a healthy setup: every check passes, exit 0; reads only, bounded, within the budget; no secret shown", async () => {
    sim.control.resetStats();
    const r = await doctor({}, ["--output", "json"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as {
      exitCode: number;
      apiRequests: number;
      findings: Array<{ id: string; verdict: string; summary: string }>;
    };
    expect(report.exitCode).toBe(0);
    expect(report.findings.filter((f) => f.verdict === "fail")).toEqual([]);
    expect(report.findings.map((f) => f.id)).toEqual(
      expect.arrayContaining([
        "token",
        "clock",
        "scopes",
        "endpoint:/sites",
        "endpoint:/sites/{id}/domains",
        "budget",
        "otlp",
        "checkpoints",
        "webhooks",
        "web",
      ]),
    );
    // One token, then each endpoint in use once: reads only (the two POSTs that are reads), nothing revoked.
    const stats = sim.control.stats();
    expect(stats.tokensIssued).toBe(1);
    expect(stats.tokensRevoked).toBe(0);
    expect(stats.totalRequests).toBeLessThanOrEqual(25);
    expect(report.apiRequests).toBe(stats.totalRequests);
    for (const key of Object.keys(stats.requests)) {
      expect(key).toMatch(
        /^(GET |POST \/auth\/token |POST \/sites\/\{id\}\/metrics |POST \/(sites\/\{id\}|account)\/logs\/activity )/,
      );
    }
    expect(r.stdout).not.toContain(sim.clientSecret);
    // The empty export reached the collector and wrote nothing.
    expect(receiver.records).toEqual([]);
  });

  it("the human report says the same, and ends with the verdict", async () => {
    const r = await doctor({});
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^sitehost-exporter \S+ doctor, /);
    expect(lineOf(r.stdout, "OTLP endpoint").line).toContain(`an empty export was accepted (HTTP 200)`);
    expect(r.stdout.trim().split("\n").at(-1)).toMatch(/^every check passed/);
  });

  it("a wrong client secret: FAIL naming the token URL and the settings to check, exit 1", async () => {
    const r = await doctor({ SITEHOST_CLIENT_SECRET: "not-the-secret-4477" });
    expect(r.code).toBe(1);
    const { line, fix } = lineOf(r.stdout, "Token endpoint and credentials");
    expect(line).toContain(
      `[FAIL] Token endpoint and credentials: POST ${sim.authUrl}/auth/token: the platform rejected the client credentials (HTTP 401); check api.clientId and the client secret`,
    );
    expect(fix).toBeDefined();
    expect(r.stdout).not.toContain("not-the-secret-4477");
  });

  it("a scope the API application lacks (403 on one endpoint): FAIL naming it and what uses it, exit 1", async () => {
    await withProxy({ forbid: /^\/v1\/sites\/\d+\/security-alerts\/plugins$/ }, async (env) => {
      const r = await doctor(env);
      expect(r.code).toBe(1);
      const endpoint = lineOf(r.stdout, "GET /sites/{id}/security-alerts/plugins");
      expect(endpoint.line).toContain("[FAIL]");
      expect(endpoint.line).toContain(
        "HTTP 403: the API application lacks a scope or role this endpoint needs",
      );
      expect(endpoint.fix).toContain(
        "grant the API application access to /sites/{id}/security-alerts/plugins",
      );
      expect(endpoint.fix).toContain("collectors.security");
      const scopes = lineOf(r.stdout, "Scopes granted against what the enabled collectors need");
      expect(scopes.line).toContain("[FAIL]");
      expect(scopes.fix).toContain("or disable collectors.security");
    });
  });

  it("the traffic start_at: the phrase taken and an hour answered; a platform that takes only a time: WARN naming the form the collector moves to, exit 0", async () => {
    const taken = lineOf((await doctor({})).stdout, "Traffic start_at form and window");
    expect(taken.line).toContain(
      '[ok  ] Traffic start_at form and window: start_at "1 hour ago" is taken; the answer covers 60 minutes',
    );
    sim.control.setBehaviour({ trafficStartAt: "timestamp" });
    try {
      const r = await doctor({});
      expect(r.code, r.stdout).toBe(0);
      const moved = lineOf(r.stdout, "Traffic start_at form and window");
      expect(moved.line).toContain(
        '[WARN] Traffic start_at form and window: the platform refuses start_at "1 hour ago" but takes "',
      );
      expect(moved.line).toContain(
        'the traffic collector moves to it by itself (sitehost_exporter_traffic_start_at_form{form="timestamp"}); the answer covers 60 minutes',
      );
      // The endpoint's own line says the phrase was refused and points at the finding.
      const endpoint = lineOf(r.stdout, "POST /sites/{id}/metrics");
      expect(endpoint.line).toContain(
        '[WARN] POST /sites/{id}/metrics: HTTP 400: the metrics endpoint refuses start_at "1 hour ago"',
      );
      expect(endpoint.fix).toContain("see the traffic start_at finding");
    } finally {
      sim.control.setBehaviour({ trafficStartAt: "phrase" });
    }
  });

  it("an endpoint whose answers carry Deprecation and Sunset headers: a warning naming it, its sunset and the link, exit 0", async () => {
    const headers = {
      deprecation: "@1798761600",
      sunset: "Sat, 01 Jan 2028 00:00:00 GMT",
      link: '<https://docs.example/api/changes>; rel="sunset"',
    };
    await withProxy({ addHeaders: { path: /^\/v1\/sites\/\d+\/domains$/, headers } }, async (env) => {
      const r = await doctor(env);
      expect(r.code, r.stdout).toBe(0);
      const notice = lineOf(r.stdout, "Endpoints the platform says are going away");
      expect(notice.line).toContain("[WARN]");
      expect(notice.line).toContain(
        "/sites/{id}/domains (sunset 2028-01-01; deprecated from 2027-01-01; see https://docs.example/api/changes)",
      );
      expect(notice.fix).toContain("nothing breaks before the sunset date");
    });
  });

  it("a field renamed in one endpoint's answers (schema drift): FAIL naming the field and its likely new name, exit 1", async () => {
    const rename = (json: unknown) => {
      const body = json as { data: Array<Record<string, unknown>> };
      return { ...body, data: body.data.map(({ healthy, ...rest }) => ({ ...rest, is_healthy: healthy })) };
    };
    await withProxy({ rewrite: { path: /^\/v1\/sites\/\d+\/domains$/, body: rename } }, async (env) => {
      const r = await doctor(env);
      expect(r.code).toBe(1);
      const { line, fix } = lineOf(r.stdout, "GET /sites/{id}/domains");
      expect(line).toContain("[FAIL]");
      expect(line).toMatch(/fields missing or unreadable: healthy \(\d+ of \d+\)/);
      expect(line).toMatch(/fields the exporter does not know \(a rename\?\): .*\bis_healthy\b/);
      expect(fix).toContain("report it to the exporter's maintainers");
      // Only that endpoint fails.
      expect(r.stdout.split("\n").filter((l) => l.includes("[FAIL]"))).toHaveLength(1);
    });
  });

  it("an OTLP endpoint nothing listens on: FAIL naming the URL, exit 1", async () => {
    const port = await refusedPort();
    const r = await doctor({
      OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: "",
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
    });
    expect(r.code).toBe(1);
    const { line, fix } = lineOf(r.stdout, "OTLP endpoint");
    expect(line).toContain(
      `[FAIL] OTLP endpoint: http/protobuf to http://127.0.0.1:${port}/v1/logs (from OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/logs)): OTLP export to http://127.0.0.1:${port}/v1/logs failed: connection refused: nothing listens at 127.0.0.1:${port} (ECONNREFUSED)`,
    );
    expect(fix).toContain("start the OpenTelemetry Collector");
  });

  it("the README's variables alone (no SITEHOST_AUTH_URL): the token endpoint is found on the API's host", async () => {
    const example = join(import.meta.dirname, "../../config/example.yaml");
    const r = await doctor({ SITEHOST_AUTH_URL: "" }, ["--config", example]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(lineOf(r.stdout, "Token endpoint and credentials").line).toContain(
      `[ok  ] Token endpoint and credentials: credentials accepted by POST ${sim.authUrl}/auth/token`,
    );
  });

  it("an API URL nothing listens on: FAIL within seconds (no retries) naming the URL and the fix, exit 1", async () => {
    const port = await refusedPort();
    const started = performance.now();
    const r = await doctor({ SITEHOST_API_URL: `http://127.0.0.1:${port}/v1`, SITEHOST_AUTH_URL: "" });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(r.code).toBe(1);
    expect(lineOf(r.stdout, "Token endpoint and credentials").line).toContain(
      `[FAIL] Token endpoint and credentials: POST http://127.0.0.1:${port}/auth/token: connection refused: nothing listens at 127.0.0.1:${port} (ECONNREFUSED); check the host and port in api.url (SITEHOST_API_URL; the token endpoint is on its host), and that the server there is up`,
    );
  });

  it("an https:// API URL to the plain HTTP simulator: FAIL at once, check the scheme of api.url", async () => {
    const apiUrl = sim.apiUrl.replace("http://", "https://");
    const started = performance.now();
    const r = await doctor({ SITEHOST_API_URL: apiUrl, SITEHOST_AUTH_URL: "" });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(r.code).toBe(1);
    const { line } = lineOf(r.stdout, "Token endpoint and credentials");
    expect(line).toContain(
      `[FAIL] Token endpoint and credentials: POST ${apiUrl.replace(/\/v1$/, "")}/auth/token:`,
    );
    expect(line).toContain("does not speak TLS");
    expect(line).toContain("check the scheme (https:// or http://) of api.url (SITEHOST_API_URL;");
  });

  it("a bad configuration is exit 2 with the problem named, before any request", async () => {
    sim.control.resetStats();
    const r = await doctor({ SITEHOST_CLIENT_ID: "<CLIENT_ID>" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('api.clientId: "<CLIENT_ID>" is a placeholder');
    expect(sim.control.stats().totalRequests).toBe(0);
  });
});
