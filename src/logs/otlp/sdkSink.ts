/**
 * `http/json` and `grpc` export through the OpenTelemetry JS exporters. Only the chosen exporter is
 * loaded (the gRPC one alone weighs tens of MB). Their answer is a success or an error carrying the
 * HTTP status or gRPC code, from which the outcome is told; the body of a success is read as the
 * `http/protobuf` sink reads it (sdkAnswers.ts): a partial success is counted, and a body that is not
 * an OTLP response is a failure.
 */
import type { HrTime } from "@opentelemetry/api";
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import { CompressionAlgorithm } from "@opentelemetry/otlp-exporter-base";
import type { Resource } from "@opentelemetry/resources";
import type { LogRecordExporter, ReadableLogRecord } from "@opentelemetry/sdk-logs";
import type { OutgoingRecord } from "./encode.js";
import { readAnswer } from "./answer.js";
import { classifyGrpcCode, classifyHttpStatus, redactOutcome, type ExportOutcome } from "./outcome.js";
import { answerTap } from "./sdkAnswers.js";
import type { OtlpSettings } from "./settings.js";
import type { Batch } from "./batch.js";
import type { ProtoWriter } from "./protoWriter.js";
import type { LogSink } from "./sink.js";
import type { LogScope } from "../resource.js";

function hrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
}

/**
 * The SDK's scope type has no attributes, but its serializers write those a scope object carries:
 * `scope` is given whole.
 */
export function toReadable(r: OutgoingRecord, resource: Resource, scope: LogScope): ReadableLogRecord {
  return {
    hrTime: hrTime(r.timeMs),
    hrTimeObserved: hrTime(r.observedMs),
    severityNumber: r.severityNumber,
    severityText: r.severityText,
    body: r.body,
    resource,
    instrumentationScope: scope,
    attributes: r.attributes,
    droppedAttributesCount: 0,
    ...(r.eventName ? { eventName: r.eventName } : {}),
  };
}

export async function createSdkExporter(settings: OtlpSettings): Promise<LogRecordExporter> {
  const config = {
    url: settings.url,
    headers: settings.headers,
    compression: settings.compression === "gzip" ? CompressionAlgorithm.GZIP : CompressionAlgorithm.NONE,
    timeoutMillis: settings.timeoutMs,
  };
  if (settings.protocol === "grpc") {
    return new (await import("@opentelemetry/exporter-logs-otlp-grpc")).OTLPLogExporter(config);
  }
  return new (await import("@opentelemetry/exporter-logs-otlp-http")).OTLPLogExporter(config);
}

export class SdkSink implements LogSink {
  constructor(
    private readonly exporter: LogRecordExporter,
    private readonly resource: Resource,
    private readonly scope: LogScope,
    private readonly grpc: boolean,
    /** Keeps the headers' credentials out of reasons quoting what the endpoint answered. */
    private readonly redact: (text: string) => string = (text) => text,
  ) {
    // Before the first export, so that its answer is read too.
    answerTap(exporter);
  }

  forResource(resource: Resource): LogSink {
    return new SdkSink(this.exporter, resource, this.scope, this.grpc, this.redact);
  }

  /** Records held as JSON (one line each): the SDK exporters take objects, not bytes. */
  encode(w: ProtoWriter, record: OutgoingRecord): void {
    w.raw(Buffer.from(`${JSON.stringify(record)}\n`, "utf8"));
  }

  send(batch: Batch, signal: AbortSignal): Promise<ExportOutcome> {
    const readable = batch
      .concat()
      .toString("utf8")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => toReadable(JSON.parse(line) as OutgoingRecord, this.resource, this.scope));
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(signal.reason ?? new Error("export abandoned"));
      signal.addEventListener("abort", onAbort, { once: true });
      this.exporter.export(readable, (result: ExportResult) => {
        signal.removeEventListener("abort", onAbort);
        resolve(this.outcome(result));
      });
    });
  }

  private outcome(result: ExportResult): ExportOutcome {
    return redactOutcome(this.read(result), this.redact);
  }

  private read(result: ExportResult): ExportOutcome {
    // Taken whatever the result, so that no answer is left for the next export to read.
    const answer = answerTap(this.exporter)?.take();
    if (result.code === ExportResultCode.SUCCESS) {
      if (answer === undefined) return { kind: "accepted", rejected: 0 };
      return this.grpc
        ? readAnswer("gRPC OK", undefined, answer, "protobuf")
        : readAnswer("HTTP 2xx", undefined, answer, "json");
    }
    const err = result.error as (Error & { code?: unknown }) | undefined;
    const message = err?.message ?? "export failed";
    const code = typeof err?.code === "number" ? err.code : undefined;
    if (code === undefined) return { kind: "retry", reason: message };
    return this.grpc ? classifyGrpcCode(code, message) : classifyHttpStatus(code, message);
  }

  async shutdown(): Promise<void> {
    await this.exporter.shutdown();
  }
}
