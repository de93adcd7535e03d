/**
 * The OpenTelemetry SDK variables that apply to a log exporter, checked when the configuration is
 * loaded: the OpenTelemetry exporters would otherwise fail only after the daemon started (an unknown
 * protocol) or fall back to a default without a word (an unparseable endpoint, timeout or compression).
 * Each variable of the specification's list is honoured, or refused with the reason (REFUSED).
 */
import type { Attributes } from "@opentelemetry/api";
import { resourceAttributesEnvDetector } from "@opentelemetry/resources";
import { redactUrl } from "./redact.js";

export const OTLP_PROTOCOLS = ["http/protobuf", "http/json", "grpc"] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/**
 * The attributes of the instrumentation scope of every record (the exporter's pod and shard, in the
 * chart), written as OTEL_RESOURCE_ATTRIBUTES is: unlike the resource's, Loki never indexes them.
 */
export const SCOPE_ATTRIBUTES = "SITEHOST_LOG_SCOPE_ATTRIBUTES";

const ENDPOINT_VARS = ["OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"] as const;

/** A set variable's trimmed value; empty counts as unset, as everywhere else. */
function setValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

/** The variable that chooses the protocol (the logs-specific one first) and its value, if any. */
function protocolSetting(env: NodeJS.ProcessEnv): { name: string; value: string } | undefined {
  for (const name of ["OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"]) {
    const value = setValue(env, name);
    if (value !== undefined) return { name, value };
  }
  return undefined;
}

function isProtocol(value: string): value is OtlpProtocol {
  return (OTLP_PROTOCOLS as readonly string[]).includes(value);
}

function protocolProblem(env: NodeJS.ProcessEnv): string | undefined {
  const chosen = protocolSetting(env);
  if (!chosen || isProtocol(chosen.value)) return undefined;
  return `${chosen.name}: ${JSON.stringify(chosen.value)} is not one of ${OTLP_PROTOCOLS.join(", ")}`;
}

/** The log export protocol: `http/protobuf` unless a variable chooses another; throws on an unknown one. */
export function otlpProtocol(env: NodeJS.ProcessEnv = process.env): OtlpProtocol {
  const problem = protocolProblem(env);
  if (problem) throw new Error(problem);
  const value = protocolSetting(env)?.value ?? "http/protobuf";
  return value as OtlpProtocol;
}

function endpointProblem(
  name: string,
  value: string,
  protocol: OtlpProtocol | undefined,
): string | undefined {
  // The gRPC exporter also takes `host:port` without a scheme (read as https) and unix: sockets.
  const text = protocol === "grpc" && !/^\w{1,8}:\/\//.test(value) ? `https://${value}` : value;
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  const ok =
    url !== undefined &&
    (((url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "") ||
      (protocol === "grpc" && url.protocol === "unix:"));
  if (ok) return undefined;
  const expected =
    protocol === "grpc"
      ? "an http(s) URL, host:port or a unix: socket"
      : "an absolute http(s) URL such as http://otel-collector:4318";
  return `${name}: ${JSON.stringify(redactUrl(value))} is not ${expected}`;
}

/** Every problem with the OTLP variables, one line each naming the variable. */
export function otlpEnvProblems(env: NodeJS.ProcessEnv = process.env): string[] {
  const problems: string[] = [...sdkEnvProblems(env)];
  const protocol = protocolProblem(env);
  if (protocol) problems.push(protocol);
  const chosen = protocol ? undefined : otlpProtocol(env);
  for (const name of ENDPOINT_VARS) {
    const value = setValue(env, name);
    const problem = value === undefined ? undefined : endpointProblem(name, value, chosen);
    if (problem) problems.push(problem);
  }
  return problems;
}

/**
 * Variables of the OpenTelemetry SDK specification that apply to log exporters but not to this one,
 * with what to do instead: a value the exporter would not honour is refused at start, not ignored.
 */
const REFUSED: Readonly<Record<string, string>> = {
  OTEL_BLRP_SCHEDULE_DELAY:
    "there is no batch log record processor: records are exported per stream as they are read (at most 2,000 records or about 1 MiB per export, see docs/logs.md); remove it",
  OTEL_BLRP_EXPORT_TIMEOUT:
    "an export's timeout is OTEL_EXPORTER_OTLP_LOGS_TIMEOUT (or OTEL_EXPORTER_OTLP_TIMEOUT)",
  OTEL_BLRP_MAX_QUEUE_SIZE:
    "there is no in-memory queue to bound: reading stops while an export waits (backpressure), and the checkpoints hold the rest; remove it",
  OTEL_BLRP_MAX_EXPORT_BATCH_SIZE:
    "exports hold at most 2,000 records or about 1 MiB (docs/logs.md); remove it",
  OTEL_LOGRECORD_ATTRIBUTE_COUNT_LIMIT:
    "records carry the fixed set of attributes of docs/logs.md, which is never cut; remove it",
  OTEL_LOGRECORD_ATTRIBUTE_VALUE_LENGTH_LIMIT: "attribute values are shipped whole (docs/logs.md); remove it",
  OTEL_ATTRIBUTE_COUNT_LIMIT:
    "records carry the fixed set of attributes of docs/logs.md, which is never cut; remove it",
  OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: "attribute values are shipped whole (docs/logs.md); remove it",
  OTEL_LOG_LEVEL: "the exporter's own log level is --log.level",
  OTEL_CONFIG_FILE:
    "declarative configuration files are not read; use the configuration file and OTEL_* variables",
};

const BOOLEAN = /^(true|false)$/i;

function valueProblem(env: NodeJS.ProcessEnv, name: string, ok: (v: string) => boolean, want: string) {
  const value = setValue(env, name);
  return value === undefined || ok(value) ? undefined : `${name}: ${JSON.stringify(value)} is not ${want}`;
}

/** The variables besides protocol and endpoint: values checked, and those refused. */
function sdkEnvProblems(env: NodeJS.ProcessEnv): string[] {
  const problems: Array<string | undefined> = [
    valueProblem(env, "OTEL_SDK_DISABLED", (v) => BOOLEAN.test(v), "true or false"),
    valueProblem(
      env,
      "OTEL_LOGS_EXPORTER",
      (v) => v === "otlp" || v === "none",
      "otlp or none (the only log exporters there are)",
    ),
  ];
  for (const prefix of ["OTEL_EXPORTER_OTLP_LOGS_", "OTEL_EXPORTER_OTLP_"]) {
    problems.push(
      valueProblem(env, `${prefix}COMPRESSION`, (v) => v === "gzip" || v === "none", "gzip or none"),
      valueProblem(
        env,
        `${prefix}TIMEOUT`,
        (v) => /^[1-9][0-9]*$/.test(v),
        "a whole number of milliseconds above 0",
      ),
      valueProblem(env, `${prefix}INSECURE`, (v) => BOOLEAN.test(v), "true or false"),
    );
    const insecure = setValue(env, `${prefix}INSECURE`);
    if (insecure !== undefined && protocolSetting(env)?.value !== "grpc") {
      problems.push(
        `${prefix}INSECURE: applies to grpc only; with http the endpoint's scheme (http:// or https://) decides`,
      );
    }
  }
  for (const name of ["OTEL_RESOURCE_ATTRIBUTES", SCOPE_ATTRIBUTES]) {
    const text = setValue(env, name);
    if (text === undefined) continue;
    try {
      ENV_ATTRIBUTES.parse(text);
    } catch (err) {
      problems.push(`${name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  for (const [name, instead] of Object.entries(REFUSED)) {
    if (setValue(env, name) !== undefined) problems.push(`${name}: not supported: ${instead}`);
  }
  return problems.filter((p): p is string => p !== undefined);
}

/**
 * The variable that turns the log export off (records are then read and counted, as with
 * logs.ship: false): OTEL_SDK_DISABLED=true or OTEL_LOGS_EXPORTER=none.
 */
export function logExportDisabledBy(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (setValue(env, "OTEL_SDK_DISABLED")?.toLowerCase() === "true") return "OTEL_SDK_DISABLED=true";
  if (setValue(env, "OTEL_LOGS_EXPORTER") === "none") return "OTEL_LOGS_EXPORTER=none";
  return undefined;
}

/**
 * The parser @opentelemetry/resources' detector applies to OTEL_RESOURCE_ATTRIBUTES. Its detect()
 * reads process.env only; the exporter takes the environment as an argument (tests, check-config),
 * so it calls the parser itself (test/unit/config/otelEnv.test.ts checks both agree).
 */
const ENV_ATTRIBUTES = {
  parse(text: string): Attributes {
    const detector = resourceAttributesEnvDetector as unknown as {
      _parseResourceAttributes(text: string): Attributes;
    };
    return detector._parseResourceAttributes(text);
  },
};

/**
 * OTEL_RESOURCE_ATTRIBUTES as @opentelemetry/resources' detector reads it (percent-decoded, keys and
 * values of at most 255 characters); a malformed value is refused when the configuration is loaded.
 */
export function resourceAttributesFromEnv(env: NodeJS.ProcessEnv = process.env): Attributes {
  const text = setValue(env, "OTEL_RESOURCE_ATTRIBUTES");
  return text === undefined ? {} : ENV_ATTRIBUTES.parse(text);
}

/** SITEHOST_LOG_SCOPE_ATTRIBUTES, read as OTEL_RESOURCE_ATTRIBUTES is. */
export function scopeAttributesFromEnv(env: NodeJS.ProcessEnv = process.env): Attributes {
  const text = setValue(env, SCOPE_ATTRIBUTES);
  return text === undefined ? {} : ENV_ATTRIBUTES.parse(text);
}

/**
 * OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS (comma-separated, case-sensitive): the HTTP methods the
 * web-server records name as they are; others become _OTHER. Unset: the semantic conventions' list.
 */
export function knownHttpMethods(env: NodeJS.ProcessEnv = process.env): ReadonlySet<string> | undefined {
  const text = setValue(env, "OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS");
  if (text === undefined) return undefined;
  return new Set(
    text
      .split(",")
      .map((m) => m.trim())
      .filter((m) => m !== ""),
  );
}
