/**
 * The standard OTLP exporter variables the log export depends on, checked when the configuration
 * is loaded: the OpenTelemetry exporters would otherwise fail only after the daemon started
 * (an unknown protocol) or fall back to localhost without a word (an unparseable endpoint).
 */
import { redactUrl } from "./redact.js";

export const OTLP_PROTOCOLS = ["http/protobuf", "http/json", "grpc"] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

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
  const problems: string[] = [];
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
