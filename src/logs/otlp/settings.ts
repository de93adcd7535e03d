/**
 * Where and how log records are exported, from the standard OpenTelemetry variables:
 * OTEL_EXPORTER_OTLP_[LOGS_]{PROTOCOL, ENDPOINT, HEADERS, COMPRESSION, TIMEOUT, CERTIFICATE,
 * CLIENT_KEY, CLIENT_CERTIFICATE}; the LOGS_ form wins over the general one. Their values were checked
 * when the configuration was loaded (config/otelEnv.ts); INSECURE is read by the gRPC exporter itself.
 */
import { readFile } from "node:fs/promises";
import { SecretRedactor } from "../../api/redact.js";
import { otlpProtocol, type OtlpProtocol } from "../../config/otelEnv.js";

export interface OtlpSettings {
  protocol: OtlpProtocol;
  /** The full URL (HTTP: .../v1/logs) or, for gRPC, the endpoint as given. */
  url: string;
  headers: Record<string, string>;
  compression: "gzip" | "none";
  timeoutMs: number;
  /** PEM file paths for TLS. */
  certificate?: string;
  clientKey?: string;
  clientCertificate?: string;
}

/** The TLS files of the settings, read, for undici's `connect`; undefined when none is set. */
export async function tlsOptions(
  settings: Pick<OtlpSettings, "certificate" | "clientKey" | "clientCertificate">,
): Promise<{ ca?: Buffer; key?: Buffer; cert?: Buffer } | undefined> {
  const { certificate, clientKey, clientCertificate } = settings;
  if (!certificate && !clientKey && !clientCertificate) return undefined;
  return {
    ca: certificate ? await readFile(certificate) : undefined,
    key: clientKey ? await readFile(clientKey) : undefined,
    cert: clientCertificate ? await readFile(clientCertificate) : undefined,
  };
}

function pick(env: NodeJS.ProcessEnv, suffix: string): string | undefined {
  const value = env[`OTEL_EXPORTER_OTLP_LOGS_${suffix}`] ?? env[`OTEL_EXPORTER_OTLP_${suffix}`];
  const trimmed = value?.trim();
  return trimmed === "" ? undefined : trimmed;
}

/** `key=value,key2=value2`, URL-decoded; a malformed pair is ignored, as the SDK does. */
export function parseKeyValueList(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (text ?? "").split(",")) {
    const eq = pair.indexOf("=");
    if (eq <= 0) continue;
    try {
      out[decodeURIComponent(pair.slice(0, eq).trim())] = decodeURIComponent(pair.slice(eq + 1).trim());
    } catch {
      // a malformed pair is ignored
    }
  }
  return out;
}

export function otlpSettings(env: NodeJS.ProcessEnv = process.env): OtlpSettings {
  const protocol = otlpProtocol(env);
  const signal = env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const defaultBase = protocol === "grpc" ? "http://localhost:4317" : "http://localhost:4318";
  const url = signal
    ? signal
    : protocol === "grpc"
      ? (base ?? defaultBase)
      : `${(base ?? defaultBase).replace(/\/+$/, "")}/v1/logs`;
  const headers = {
    ...parseKeyValueList(env.OTEL_EXPORTER_OTLP_HEADERS),
    ...parseKeyValueList(env.OTEL_EXPORTER_OTLP_LOGS_HEADERS),
  };
  const timeout = Number(pick(env, "TIMEOUT"));
  const settings: OtlpSettings = {
    protocol,
    url,
    headers,
    compression: pick(env, "COMPRESSION") === "gzip" ? "gzip" : "none",
    timeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout : 10_000,
  };
  const certificate = pick(env, "CERTIFICATE");
  const clientKey = pick(env, "CLIENT_KEY");
  const clientCertificate = pick(env, "CLIENT_CERTIFICATE");
  if (certificate) settings.certificate = certificate;
  if (clientKey) settings.clientKey = clientKey;
  if (clientCertificate) settings.clientCertificate = clientCertificate;
  return settings;
}

/**
 * When an OTLP/HTTP URL's path holds `/v1/logs` twice (an OTEL_EXPORTER_OTLP_ENDPOINT given with the
 * signal path, to which the exporter adds it again): what to do about it, else undefined.
 */
export function repeatedLogsPath(url: string): string | undefined {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return undefined;
  }
  if (!/\/v1\/logs\/?.*\/v1\/logs/.test(path)) return undefined;
  return "the path repeats /v1/logs: OTEL_EXPORTER_OTLP_ENDPOINT is the collector's base URL (http://collector:4318), the exporter adds /v1/logs; or give the full URL in OTEL_EXPORTER_OTLP_LOGS_ENDPOINT";
}

/**
 * Removes the values of the OTLP headers (credentials, tenant tokens) from text an endpoint sent back,
 * before it reaches a log line or the status page: an echo server or a debug proxy answers with the
 * request's headers. The credentials of a `Bearer <token>` value are removed on their own too.
 */
export function headerRedactor(headers: Record<string, string>): (text: string) => string {
  const redactor = new SecretRedactor();
  for (const value of Object.values(headers)) {
    const credentials = value.trim().split(/\s+/).at(-1) ?? "";
    for (const secret of [value, credentials]) if (secret.length >= 6) redactor.addSecret(secret);
  }
  return redactor.redact;
}
