/**
 * The OpenTelemetry SDK variables that apply to a log exporter: each honoured, or refused at start with
 * a line naming it (docs/configuration.md lists them).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resourceAttributesEnvDetector } from "@opentelemetry/resources";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import {
  knownHttpMethods,
  logExportDisabledBy,
  otlpEnvProblems,
  resourceAttributesFromEnv,
  scopeAttributesFromEnv,
} from "../../../src/config/otelEnv.js";
import { configProblems } from "../../helpers/config.js";

const dir = mkdtempSync(join(tmpdir(), "sitehost-otel-env-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const CREDENTIALS = {
  SITEHOST_CLIENT_ID: "id",
  SITEHOST_CLIENT_SECRET: "secret",
  SITEHOST_CHECKPOINT_DIR: dir,
};

describe("OTEL_SDK_DISABLED and OTEL_LOGS_EXPORTER", () => {
  it.each([
    [{ OTEL_SDK_DISABLED: "true" }, "OTEL_SDK_DISABLED=true"],
    [{ OTEL_SDK_DISABLED: "TRUE" }, "OTEL_SDK_DISABLED=true"],
    [{ OTEL_LOGS_EXPORTER: "none" }, "OTEL_LOGS_EXPORTER=none"],
    [{ OTEL_SDK_DISABLED: "false" }, undefined],
    [{ OTEL_LOGS_EXPORTER: "otlp" }, undefined],
    [{}, undefined],
  ])("%j turns the log export off: %s", (env, by) => {
    expect(logExportDisabledBy(env)).toBe(by);
  });

  it("with either, logs are read and counted but not shipped, and the OTLP variables are not checked", async () => {
    for (const off of [{ OTEL_SDK_DISABLED: "true" }, { OTEL_LOGS_EXPORTER: "none" }]) {
      const config = await loadConfig({
        env: { ...CREDENTIALS, ...off, OTEL_EXPORTER_OTLP_ENDPOINT: "not a url" },
        requireCredentials: true,
        checkRuntime: "probe",
      });
      expect(config.logs.ship).toBe(false);
    }
    const shipping = await loadConfig({ env: CREDENTIALS });
    expect(shipping.logs.ship).toBe(true);
  });

  it.each([
    [{ OTEL_LOGS_EXPORTER: "console" }, 'OTEL_LOGS_EXPORTER: "console" is not otlp or none'],
    [{ OTEL_LOGS_EXPORTER: "otlp,console" }, 'OTEL_LOGS_EXPORTER: "otlp,console" is not otlp or none'],
    [{ OTEL_SDK_DISABLED: "yes" }, 'OTEL_SDK_DISABLED: "yes" is not true or false'],
  ])("%j is refused", (env, problem) => {
    expect(otlpEnvProblems(env)[0]).toContain(problem);
  });
});

describe("the OTLP exporter variables", () => {
  it.each([
    ["OTEL_EXPORTER_OTLP_COMPRESSION", "zstd", "is not gzip or none"],
    ["OTEL_EXPORTER_OTLP_LOGS_COMPRESSION", "GZIP", "is not gzip or none"],
    ["OTEL_EXPORTER_OTLP_TIMEOUT", "10s", "is not a whole number of milliseconds"],
    ["OTEL_EXPORTER_OTLP_LOGS_TIMEOUT", "0", "is not a whole number of milliseconds"],
    ["OTEL_EXPORTER_OTLP_INSECURE", "maybe", "is not true or false"],
  ])("%s=%s is refused, not replaced by a default", (name, value, problem) => {
    const problems = otlpEnvProblems({ [name]: value });
    expect(problems.find((p) => p.startsWith(`${name}:`))).toContain(problem);
  });

  it("INSECURE applies to grpc only", () => {
    expect(otlpEnvProblems({ OTEL_EXPORTER_OTLP_LOGS_INSECURE: "true" })).toEqual([
      "OTEL_EXPORTER_OTLP_LOGS_INSECURE: applies to grpc only; with http the endpoint's scheme (http:// or https://) decides",
    ]);
    expect(
      otlpEnvProblems({ OTEL_EXPORTER_OTLP_LOGS_INSECURE: "true", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }),
    ).toEqual([]);
  });

  it("accepts the values the specification gives", () => {
    expect(
      otlpEnvProblems({
        OTEL_EXPORTER_OTLP_COMPRESSION: "gzip",
        OTEL_EXPORTER_OTLP_LOGS_COMPRESSION: "none",
        OTEL_EXPORTER_OTLP_TIMEOUT: "5000",
        OTEL_SDK_DISABLED: "false",
        OTEL_LOGS_EXPORTER: "otlp",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=prod,team=web%2Cops",
      }),
    ).toEqual([]);
  });

  it.each([
    "OTEL_BLRP_SCHEDULE_DELAY",
    "OTEL_BLRP_EXPORT_TIMEOUT",
    "OTEL_BLRP_MAX_QUEUE_SIZE",
    "OTEL_BLRP_MAX_EXPORT_BATCH_SIZE",
    "OTEL_LOGRECORD_ATTRIBUTE_COUNT_LIMIT",
    "OTEL_LOGRECORD_ATTRIBUTE_VALUE_LENGTH_LIMIT",
    "OTEL_ATTRIBUTE_COUNT_LIMIT",
    "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT",
    "OTEL_LOG_LEVEL",
    "OTEL_CONFIG_FILE",
  ])("%s, which this exporter would not honour, is refused with what to do", async (name) => {
    const problems = await configProblems(
      loadConfig({ env: { ...CREDENTIALS, [name]: "1" }, requireCredentials: true, checkRuntime: "probe" }),
    );
    const line = problems.find((p) => p.startsWith(`${name}: not supported: `));
    expect(line, problems.join("\n")).toBeDefined();
    expect((line ?? "").length).toBeGreaterThan(`${name}: not supported: `.length + 15);
  });
});

describe("OTEL_RESOURCE_ATTRIBUTES", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it.each([
    "deployment.environment.name=prod,k8s.pod.name=exporter-0",
    " team = web%2Cops , note=a%3Db ",
    "x=",
  ])("%j is read as @opentelemetry/resources' detector reads it", (text) => {
    vi.stubEnv("OTEL_RESOURCE_ATTRIBUTES", text);
    expect(resourceAttributesFromEnv({ OTEL_RESOURCE_ATTRIBUTES: text })).toEqual(
      resourceAttributesEnvDetector.detect().attributes,
    );
  });

  it("percent-decodes keys and values", () => {
    expect(resourceAttributesFromEnv({ OTEL_RESOURCE_ATTRIBUTES: "team=web%2Cops,note=a%3Db" })).toEqual({
      team: "web,ops",
      note: "a=b",
    });
  });

  it.each([
    ["a=b=c", /Invalid format/],
    ["=value", /empty attribute key/],
    ["k=%ZZ", /percent-decode/],
    [`k=${"v".repeat(256)}`, /maximum length of 255/],
  ])("%j is refused with the detector's reason, not dropped whole in silence", (text, reason) => {
    const problems = otlpEnvProblems({ OTEL_RESOURCE_ATTRIBUTES: text });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^OTEL_RESOURCE_ATTRIBUTES: /);
    expect(problems[0]).toMatch(reason);
  });
});

describe("SITEHOST_LOG_SCOPE_ATTRIBUTES", () => {
  it("is read as OTEL_RESOURCE_ATTRIBUTES is, and refused when malformed", () => {
    expect(
      scopeAttributesFromEnv({ SITEHOST_LOG_SCOPE_ATTRIBUTES: "k8s.pod.name=x-0,team=web%2Cops" }),
    ).toEqual({ "k8s.pod.name": "x-0", team: "web,ops" });
    expect(scopeAttributesFromEnv({ SITEHOST_LOG_SCOPE_ATTRIBUTES: " " })).toEqual({});
    const problems = otlpEnvProblems({ SITEHOST_LOG_SCOPE_ATTRIBUTES: "a=b=c" });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^SITEHOST_LOG_SCOPE_ATTRIBUTES: .*Invalid format/);
  });
});

describe("OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS", () => {
  it("is a full, case-sensitive list of methods; unset or empty keeps the default", () => {
    expect(knownHttpMethods({ OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS: "GET, PURGE,,get" })).toEqual(
      new Set(["GET", "PURGE", "get"]),
    );
    expect(knownHttpMethods({ OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS: "" })).toBeUndefined();
    expect(knownHttpMethods({})).toBeUndefined();
  });
});
