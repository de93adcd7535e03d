/** The sink the OTEL_* variables choose; shared by the log pipeline and the webhook queue. */
import type { LogRecordExporter } from "@opentelemetry/sdk-logs";
import { createResource } from "../resource.js";
import { createSdkExporter, SdkSink } from "./sdkSink.js";
import { otlpSettings } from "./settings.js";
import { ProtobufHttpSink, type LogSink } from "./sink.js";

/** `exporter`: an SDK exporter to use instead (tests). */
export async function createLogSink(env: NodeJS.ProcessEnv, exporter?: LogRecordExporter): Promise<LogSink> {
  const resource = createResource(env);
  if (exporter) return new SdkSink(exporter, resource, false);
  const settings = otlpSettings(env);
  if (settings.protocol === "http/protobuf") return new ProtobufHttpSink(settings, resource);
  return new SdkSink(await createSdkExporter(settings), resource, settings.protocol === "grpc");
}
