/**
 * The sink log records go to: the one the standard OTEL_* variables choose (http/protobuf is the
 * exporter's own, http/json and grpc the OpenTelemetry JS exporters), or one a test injects; and the
 * counting sink of `logs.ship: false`.
 */
import type { LogRecordExporter } from "@opentelemetry/sdk-logs";
import { createResource, logScope } from "../resource.js";
import { createSdkExporter, SdkSink } from "./sdkSink.js";
import { headerRedactor, otlpSettings } from "./settings.js";
import { ProtobufHttpSink, type LogSink } from "./sink.js";

export interface SinkChoice {
  env: NodeJS.ProcessEnv;
  /** A ready sink (tests). */
  sink?: LogSink;
  /** An OpenTelemetry exporter to wrap (tests). */
  exporter?: LogRecordExporter;
}

export async function createLogSink(choice: SinkChoice): Promise<LogSink> {
  if (choice.sink) return choice.sink;
  const resource = createResource(choice.env);
  const scope = logScope(choice.env);
  if (choice.exporter) return new SdkSink(choice.exporter, resource, scope, false);
  const settings = otlpSettings(choice.env);
  if (settings.protocol === "http/protobuf") return new ProtobufHttpSink(settings, resource, scope);
  return new SdkSink(
    await createSdkExporter(settings),
    resource,
    scope,
    settings.protocol === "grpc",
    headerRedactor(settings.headers),
  );
}

/** With logs.ship false: records are read and counted only; every batch is "accepted" at once. */
export const countingSink: LogSink = {
  encode: () => undefined,
  send: async () => ({ kind: "accepted", rejected: 0 }),
  shutdown: async () => undefined,
};
