/** Log shipping: where records go (from config and the OTEL_* variables) and whether that endpoint takes an export. */
import { otlpSummary } from "./otlpSummary.js";
import type { Config } from "../config/schema.js";
import { describeExportFailure } from "../logs/otlp/exportHealth.js";
import { probeOtlpEndpoint } from "../logs/otlp/probe.js";
import { otlpSettings } from "../logs/otlp/settings.js";
import type { Finding } from "./types.js";

export async function checkOtlp(config: Config, env: NodeJS.ProcessEnv): Promise<Finding[]> {
  const title = "OTLP endpoint";
  const shipsLogs = config.logs.enabled && config.logs.ship;
  if (!shipsLogs && !config.webhooks.enabled) {
    return [
      {
        id: "otlp",
        section: "otlp",
        title,
        verdict: "pass",
        summary: "nothing is shipped (logs.enabled or logs.ship is false, webhooks off)",
      },
    ];
  }
  const summary = otlpSummary(config, env);
  const details = { ...summary };
  const settings = otlpSettings(env);
  const probe = await probeOtlpEndpoint(settings);
  const where = `${summary.protocol} to ${summary.endpoint} (${summary.endpointFrom === "default" ? "the default: no OTEL_EXPORTER_OTLP_ENDPOINT set" : `from ${summary.endpointFrom}`})`;
  if (probe.result !== "failed") {
    return [
      {
        id: "otlp",
        section: "otlp",
        title,
        verdict: summary.warnings.length > 0 ? "warn" : "pass",
        summary: `${where}: ${probe.result === "accepted" ? `an empty export was accepted (HTTP ${probe.status})` : "the gRPC endpoint accepts connections (no export sent)"} in ${Math.round(probe.latencyMs)} ms${summary.warnings.length > 0 ? `; ${summary.warnings.join("; ")}` : ""}`,
        details,
      },
    ];
  }
  return [
    {
      id: "otlp",
      section: "otlp",
      title,
      verdict: "fail",
      summary: `${where}: ${describeExportFailure(settings.url, probe.outcome ?? { reason: "failed" })}`,
      fix: "start the OpenTelemetry Collector, or set OTEL_EXPORTER_OTLP_ENDPOINT to its base URL (http://collector:4318); records wait meanwhile (reading stops), or set logs.ship: false",
      details: { ...details, status: probe.status },
    },
  ];
}
