/**
 * OTLP log export through the OpenTelemetry JS exporters. Records go straight
 * to `exporter.export()` and we wait for its result: no batch processor that
 * could drop on a full queue or report success it did not get.
 */
import type { Attributes, HrTime } from "@opentelemetry/api";
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import { defaultResource, resourceFromAttributes, type Resource } from "@opentelemetry/resources";
import type { LogRecordExporter, ReadableLogRecord } from "@opentelemetry/sdk-logs";
import { CompressionAlgorithm } from "@opentelemetry/otlp-exporter-base";
import { otlpProtocol as resolveOtlpProtocol, type OtlpProtocol } from "../config/otelEnv.js";
import { VERSION } from "../version.js";
import type { MappedRecord } from "./mapper.js";

export type { OtlpProtocol } from "../config/otelEnv.js";

/** The protocol the OTLP variables choose; the configuration check rejects an unknown one at start already. */
export function otlpProtocol(env: NodeJS.ProcessEnv = process.env): OtlpProtocol {
  return resolveOtlpProtocol(env);
}

/**
 * The OTLP exporter for the configured protocol; endpoint, headers, compression and timeout come
 * from OTEL_* variables. Only the chosen exporter is loaded (the gRPC one alone weighs tens of MB).
 */
export async function createOtlpExporter(env: NodeJS.ProcessEnv = process.env): Promise<LogRecordExporter> {
  const protocol = otlpProtocol(env);
  // The SDK exporters read process.env themselves; an explicitly passed environment (tests,
  // benchmarks, embedding) must win, so its endpoint, headers and compression are passed on.
  const config = env === process.env ? undefined : exporterConfig(env, protocol);
  if (protocol === "grpc")
    return new (await import("@opentelemetry/exporter-logs-otlp-grpc")).OTLPLogExporter(config);
  if (protocol === "http/json")
    return new (await import("@opentelemetry/exporter-logs-otlp-http")).OTLPLogExporter(config);
  return new (await import("@opentelemetry/exporter-logs-otlp-proto")).OTLPLogExporter(config);
}

function exporterConfig(
  env: NodeJS.ProcessEnv,
  protocol: OtlpProtocol,
): { url?: string; headers?: Record<string, string>; compression?: CompressionAlgorithm } {
  const config: { url?: string; headers?: Record<string, string>; compression?: CompressionAlgorithm } = {};
  const signal = env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (signal) config.url = signal;
  else if (base) config.url = protocol === "grpc" ? base : `${base.replace(/\/+$/, "")}/v1/logs`;
  const headers: Record<string, string> = {};
  for (const text of [env.OTEL_EXPORTER_OTLP_HEADERS, env.OTEL_EXPORTER_OTLP_LOGS_HEADERS]) {
    for (const pair of (text ?? "").split(",")) {
      const eq = pair.indexOf("=");
      if (eq <= 0) continue;
      try {
        headers[decodeURIComponent(pair.slice(0, eq).trim())] = decodeURIComponent(pair.slice(eq + 1).trim());
      } catch {
        // a malformed pair is ignored, as the SDK does
      }
    }
  }
  if (Object.keys(headers).length > 0) config.headers = headers;
  const compression = (env.OTEL_EXPORTER_OTLP_LOGS_COMPRESSION ?? env.OTEL_EXPORTER_OTLP_COMPRESSION)?.trim();
  if (compression === "gzip") config.compression = CompressionAlgorithm.GZIP;
  else if (compression === "none") config.compression = CompressionAlgorithm.NONE;
  return config;
}

/** service.name defaults to sitehost-exporter; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win. */
export function createResource(env: NodeJS.ProcessEnv = process.env): Resource {
  const fromEnv: Attributes = {};
  for (const pair of (env.OTEL_RESOURCE_ATTRIBUTES ?? "").split(",")) {
    const eq = pair.indexOf("=");
    if (eq <= 0) continue;
    try {
      fromEnv[decodeURIComponent(pair.slice(0, eq).trim())] = decodeURIComponent(pair.slice(eq + 1).trim());
    } catch {
      // a malformed pair is ignored, as the SDK does
    }
  }
  const serviceName =
    env.OTEL_SERVICE_NAME?.trim() || (fromEnv["service.name"] as string | undefined) || "sitehost-exporter";
  return defaultResource().merge(
    resourceFromAttributes({ ...fromEnv, "service.name": serviceName, "service.version": VERSION }),
  );
}

const SCOPE = { name: "sitehost-exporter", version: VERSION };

function hrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
}

export function toReadable(record: MappedRecord, resource: Resource, observedMs: number): ReadableLogRecord {
  return {
    hrTime: hrTime(record.timeMs),
    hrTimeObserved: hrTime(observedMs),
    severityNumber: record.severityNumber,
    severityText: record.severityText,
    body: record.body,
    resource,
    instrumentationScope: SCOPE,
    attributes: record.attributes,
    droppedAttributesCount: 0,
  };
}

/** Resolves when the collector acknowledged the export; rejects with its error otherwise. */
export function exportRecords(exporter: LogRecordExporter, records: ReadableLogRecord[]): Promise<void> {
  return new Promise((resolve, reject) => {
    exporter.export(records, (result: ExportResult) => {
      if (result.code === ExportResultCode.SUCCESS) resolve();
      else reject(result.error ?? new Error("OTLP export failed"));
    });
  });
}
