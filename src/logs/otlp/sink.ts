/**
 * Where batches of log records go. `http/protobuf` (the default) is the exporter's own: records are
 * encoded as they join a batch, sent with one HTTP request, and the answer is read: only an OTLP
 * response (its partial success counted) acknowledges them (answer.ts). `http/json` and `grpc` go
 * through the OpenTelemetry JS exporters.
 */
import { gzip } from "node:zlib";
import { Readable } from "node:stream";
import { promisify } from "node:util";
import type { Resource } from "@opentelemetry/resources";
import { displayUrl } from "../../api/redact.js";
import { Agent, request } from "../../util/undici.js";
import { parseRetryAfter } from "../../util/retryAfter.js";
import type { LogScope } from "../resource.js";
import { VERSION } from "../../version.js";
import type { Batch } from "./batch.js";
import {
  encodeLogRecord,
  encodeLogRecordFrom,
  RequestFrame,
  type AttributeWriter,
  type OutgoingRecord,
  type RecordHead,
} from "./encode.js";
import { readAnswer } from "./answer.js";
import { classifyHttpStatus, redactOutcome, type ExportOutcome } from "./outcome.js";
import type { ProtoWriter } from "./protoWriter.js";
import { headerRedactor, tlsOptions, type OtlpSettings } from "./settings.js";

const gzipAsync = promisify(gzip);

/** What a stream's shipper sends its batches through. */
export interface BatchSender {
  send(batch: Batch, signal: AbortSignal): Promise<ExportOutcome>;
}

export interface LogSink extends BatchSender {
  /** Append one record's encoding to `w` (done as the record is read; shipping copies the bytes). */
  encode(w: ProtoWriter, record: OutgoingRecord): void;
  /**
   * The same for a record given as its head and a function adding its attributes, for a sink that
   * writes them as they come (no attribute object per record). Without it, `encode` gets an object.
   */
  encodeFrom?(w: ProtoWriter, head: RecordHead, attributes: (out: AttributeWriter) => void): void;
  shutdown(): Promise<void>;
  /**
   * The same sink sending under another resource (one per site): it shares the connection, and needs
   * no shutdown of its own. Sinks without it send everything under their own resource.
   */
  forResource?(resource: Resource): LogSink;
}

/** Largest answer read from the collector. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** The connection pool, shared by a sink and its per-resource views. */
interface Connection {
  agent: Agent | undefined;
}

export class ProtobufHttpSink implements LogSink {
  private readonly frame: RequestFrame;
  /** Keeps the headers' credentials out of reasons quoting what the endpoint answered. */
  private readonly redact: (text: string) => string;

  constructor(
    private readonly settings: OtlpSettings,
    resource: Resource,
    private readonly scope: LogScope,
    private readonly connection: Connection = { agent: undefined },
  ) {
    this.redact = headerRedactor(settings.headers);
    this.frame = new RequestFrame({
      resource: resource.attributes,
      resourceSchemaUrl: resource.schemaUrl,
      scopeName: scope.name,
      scopeVersion: scope.version,
      scopeAttributes: scope.attributes,
    });
  }

  encode(w: ProtoWriter, record: OutgoingRecord): void {
    encodeLogRecord(w, record);
  }

  encodeFrom(w: ProtoWriter, head: RecordHead, attributes: (out: AttributeWriter) => void): void {
    encodeLogRecordFrom(w, head, attributes);
  }

  forResource(resource: Resource): LogSink {
    return new ProtobufHttpSink(this.settings, resource, this.scope, this.connection);
  }

  private async dispatcher(): Promise<Agent> {
    if (this.connection.agent) return this.connection.agent;
    const tls = await tlsOptions(this.settings);
    this.connection.agent ??= new Agent({
      keepAliveTimeout: 30_000,
      connections: 32,
      ...(tls ? { connect: tls } : {}),
    });
    return this.connection.agent;
  }

  async send(batch: Batch, signal: AbortSignal): Promise<ExportOutcome> {
    const pages = batch.pages.map((p) => p.bytes);
    const gzipped = this.settings.compression === "gzip";
    // Uncompressed, the pages go out as they are, one after the other: no copy of the batch into
    // one request buffer (that copy held each export's bytes twice while it was in flight).
    const parts = gzipped ? [await gzipAsync(this.frame.wrapParts(pages))] : this.frame.partsAround(pages);
    let length = 0;
    for (const part of parts) length += part.length;
    const body = parts.length === 1 ? (parts[0] as Uint8Array) : Readable.from(parts, { objectMode: false });
    const deadline = AbortSignal.timeout(this.settings.timeoutMs);
    try {
      const res = await request(this.settings.url, {
        method: "POST",
        dispatcher: await this.dispatcher(),
        headers: {
          ...this.settings.headers,
          "content-type": "application/x-protobuf",
          "content-length": String(length),
          "user-agent": `sitehost-exporter/${VERSION}`,
          ...(gzipped ? { "content-encoding": "gzip" } : {}),
        },
        body,
        signal: AbortSignal.any([signal, deadline]),
      });
      const answer = await readLimited(res.body);
      if (res.statusCode >= 200 && res.statusCode < 300) {
        // Only an OTLP response says the records were taken (an HTML page from a proxy does not).
        const read = readAnswer(
          `HTTP ${res.statusCode}`,
          header(res.headers["content-type"]),
          answer,
          "protobuf",
        );
        return redactOutcome(read, this.redact);
      }
      const location = header(res.headers.location);
      const outcome = classifyHttpStatus(
        res.statusCode,
        location && res.statusCode < 400 ? `redirects to ${displayUrl(location)}` : statusMessage(answer),
        parseRetryAfter(res.headers["retry-after"], Date.now()),
      );
      return redactOutcome(outcome, this.redact);
    } catch (err) {
      if (signal.aborted) throw signal.reason ?? err;
      const code = (err as { code?: string }).code ?? (err as Error).name;
      return {
        kind: "retry",
        reason: deadline.aborted ? `no answer within ${this.settings.timeoutMs} ms` : String(code),
      };
    }
  }

  async shutdown(): Promise<void> {
    await this.connection.agent?.close();
  }
}

async function readLimited(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) {
      body.destroy();
      break;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** A short reason from an error answer: its text when it is readable text, else nothing. */
function statusMessage(answer: Buffer): string {
  const text = answer.subarray(0, 300).toString("utf8");
  // A protobuf google.rpc.Status has binary framing; keep only printable text.
  const printable = text.replace(/[^\x20-\x7e]+/g, " ").trim();
  return printable.length >= 3 ? printable.slice(0, 200) : "";
}
