/**
 * The effective OTLP log export settings as check-config (and doctor) show them: where records go,
 * how, and which variable set what. Header values are never shown, nor a URL's password.
 */
import type { Config } from "../config/schema.js";
import { displayUrl } from "../api/redact.js";
import { otlpSettings, repeatedLogsPath } from "../logs/otlp/settings.js";

export interface OtlpSummary {
  /** Whether records are shipped at all (logs.enabled and logs.ship). */
  shipping: boolean;
  protocol: string;
  endpoint: string;
  /** Which variable gave the endpoint, or "default". */
  endpointFrom: string;
  headers: string[];
  compression: string;
  timeoutMs: number;
  tls: string[];
  /** Problems the settings show before anything is sent. */
  warnings: string[];
}

export function otlpSummary(config: Config, env: NodeJS.ProcessEnv): OtlpSummary {
  const s = otlpSettings(env);
  const set = (name: string) => (env[name]?.trim() ?? "") !== "";
  const endpointFrom = set("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT")
    ? "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"
    : set("OTEL_EXPORTER_OTLP_ENDPOINT")
      ? "OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/logs)"
      : "default";
  const warnings: string[] = [];
  const repeated = s.protocol === "grpc" ? undefined : repeatedLogsPath(s.url);
  if (repeated) warnings.push(`OTLP endpoint ${displayUrl(s.url)}: ${repeated}`);
  return {
    shipping: config.logs.enabled && config.logs.ship,
    protocol: s.protocol,
    endpoint: displayUrl(s.url),
    endpointFrom,
    headers: Object.keys(s.headers).sort(),
    compression: s.compression,
    timeoutMs: s.timeoutMs,
    tls: [
      s.certificate && `CA ${s.certificate}`,
      s.clientCertificate && `client certificate ${s.clientCertificate}`,
      s.clientKey && `client key ${s.clientKey}`,
    ].filter((x): x is string => Boolean(x)),
    warnings,
  };
}

/** The summary as YAML comment lines, for the end of check-config's output. */
export function otlpSummaryComment(summary: OtlpSummary): string {
  const lines = [
    "OTLP log export (from the OTEL_EXPORTER_OTLP_* environment, not config keys):",
    `  shipping: ${summary.shipping ? "yes" : "no (logs.enabled or logs.ship is false)"}`,
    `  protocol: ${summary.protocol}`,
    `  endpoint: ${summary.endpoint} (${summary.endpointFrom === "default" ? "the default: no OTEL_EXPORTER_OTLP_ENDPOINT set" : `from ${summary.endpointFrom}`})`,
    `  headers: ${summary.headers.length > 0 ? `${summary.headers.join(", ")} (values not shown)` : "none"}`,
    `  compression: ${summary.compression}`,
    `  timeout: ${summary.timeoutMs} ms`,
    ...(summary.tls.length > 0 ? [`  tls: ${summary.tls.join("; ")}`] : []),
  ];
  return lines.map((l) => `# ${l}\n`).join("");
}
