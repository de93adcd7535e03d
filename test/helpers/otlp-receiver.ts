/**
 * Test helper: a loopback OTLP/HTTP logs receiver. Protobuf requests are decoded
 * with the official opentelemetry-proto definitions of release v1.11.0
 * (test/fixtures/opentelemetry-proto, which has the log record's event_name), JSON
 * requests per the OTLP/JSON mapping.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { gunzipSync } from "node:zlib";
import protobuf from "protobufjs";

const PROTO_ROOT = resolve(import.meta.dirname, "../fixtures/opentelemetry-proto");

export interface ReceivedRecord {
  timeUnixNano: string;
  observedTimeUnixNano: string;
  severityNumber: number;
  severityText: string;
  /** The record's EventName field (OTLP event_name); "" when not set. */
  eventName: string;
  body: unknown;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
}

/** How a hostile or picky receiver answers one request (see `setAnswer`). */
export interface ReceiverAnswer {
  status: number;
  contentType?: string;
  body?: string | Uint8Array;
  /** The records of the request the receiver stores (none unless given). */
  keep?: readonly ReceivedRecord[];
}

export interface OtlpReceiver {
  url: string;
  /** Endpoint for OTEL_EXPORTER_OTLP_LOGS_ENDPOINT. */
  logsEndpoint: string;
  records: ReceivedRecord[];
  /** `answered`: requests answered by the function given to `setAnswer`. */
  requests: { protobuf: number; json: number; refused: number; answered: number };
  /** Answer every request with this status (e.g. 503) until set back to null. */
  setFailing(status: number | null): void;
  /**
   * Answer each request as `answer` says for its records (undefined: as usual), until set back to
   * null: a receiver that refuses with 400, answers an HTML page, or rejects records in a partial
   * success.
   */
  setAnswer(answer: ((records: ReceivedRecord[]) => ReceiverAnswer | undefined) | null): void;
  close(): Promise<void>;
}

/** An ExportLogsServiceResponse with a partial success, in protobuf. */
export function partialSuccess(rejected: number, message: string): Uint8Array {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => join(PROTO_ROOT, target);
  root.loadSync("opentelemetry/proto/collector/logs/v1/logs_service.proto");
  const type = root.lookupType("opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse");
  return type
    .encode(type.fromObject({ partialSuccess: { rejectedLogRecords: rejected, errorMessage: message } }))
    .finish();
}

/** The records of an ExportLogsServiceRequest in protobuf (a gRPC receiver's request). */
export function decodeExportRequest(body: Uint8Array): ReceivedRecord[] {
  const type = requestType();
  const obj = type.toObject(type.decode(body), {
    longs: String,
    enums: Number,
    bytes: String,
    defaults: false,
  });
  return normalise(obj as ExportRequest);
}

let exportRequestType: protobuf.Type | undefined;

function requestType(): protobuf.Type {
  if (!exportRequestType) {
    const root = new protobuf.Root();
    root.resolvePath = (_origin, target) => join(PROTO_ROOT, target);
    root.loadSync("opentelemetry/proto/collector/logs/v1/logs_service.proto");
    exportRequestType = root.lookupType("opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest");
  }
  return exportRequestType;
}

type AnyValue = Record<string, unknown>;

function anyValue(v: AnyValue | undefined): unknown {
  if (!v) return undefined;
  if ("stringValue" in v) return v.stringValue;
  if ("intValue" in v) return Number(v.intValue);
  if ("doubleValue" in v) return Number(v.doubleValue);
  if ("boolValue" in v) return v.boolValue;
  if ("arrayValue" in v) return ((v.arrayValue as { values?: AnyValue[] }).values ?? []).map(anyValue);
  if ("kvlistValue" in v) return attributes((v.kvlistValue as { values?: KeyValue[] }).values);
  return undefined;
}

interface KeyValue {
  key: string;
  value?: AnyValue;
}

function attributes(list: KeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of list ?? []) out[kv.key] = anyValue(kv.value);
  return out;
}

interface ExportRequest {
  resourceLogs?: Array<{
    resource?: { attributes?: KeyValue[] };
    scopeLogs?: Array<{
      logRecords?: Array<{
        timeUnixNano?: string | number;
        observedTimeUnixNano?: string | number;
        severityNumber?: number | string;
        severityText?: string;
        eventName?: string;
        body?: AnyValue;
        attributes?: KeyValue[];
      }>;
    }>;
  }>;
}

const SEVERITY_NAMES: Record<string, number> = Object.fromEntries(
  [
    "UNSPECIFIED",
    "TRACE",
    "TRACE2",
    "TRACE3",
    "TRACE4",
    "DEBUG",
    "DEBUG2",
    "DEBUG3",
    "DEBUG4",
    "INFO",
    "INFO2",
    "INFO3",
    "INFO4",
    "WARN",
    "WARN2",
    "WARN3",
    "WARN4",
    "ERROR",
    "ERROR2",
    "ERROR3",
    "ERROR4",
    "FATAL",
    "FATAL2",
    "FATAL3",
    "FATAL4",
  ].map((n, i) => [`SEVERITY_NUMBER_${n}`, i]),
);

function normalise(req: ExportRequest): ReceivedRecord[] {
  const out: ReceivedRecord[] = [];
  for (const rl of req.resourceLogs ?? []) {
    const resource = attributes(rl.resource?.attributes);
    for (const sl of rl.scopeLogs ?? []) {
      for (const r of sl.logRecords ?? []) {
        const sev = r.severityNumber;
        out.push({
          timeUnixNano: String(r.timeUnixNano ?? "0"),
          observedTimeUnixNano: String(r.observedTimeUnixNano ?? "0"),
          severityNumber: typeof sev === "string" ? (SEVERITY_NAMES[sev] ?? Number(sev)) : (sev ?? 0),
          severityText: r.severityText ?? "",
          eventName: r.eventName ?? "",
          body: anyValue(r.body),
          attributes: attributes(r.attributes),
          resource,
        });
      }
    }
  }
  return out;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const raw = Buffer.concat(chunks);
  return req.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const records: ReceivedRecord[] = [];
  const requests = { protobuf: 0, json: 0, refused: 0, answered: 0 };
  let failing: number | null = null;
  let answer: ((records: ReceivedRecord[]) => ReceiverAnswer | undefined) | null = null;
  const type = requestType();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    if (req.method !== "POST" || !req.url?.startsWith("/v1/logs")) {
      res.writeHead(404).end();
      return;
    }
    if (failing !== null) {
      requests.refused += 1;
      res.writeHead(failing, { "content-type": "text/plain" }).end("unavailable");
      return;
    }
    const contentType = req.headers["content-type"] ?? "";
    if (answer) {
      const sent = contentType.includes("json")
        ? normalise(JSON.parse(body.toString("utf8")) as ExportRequest)
        : decodeExportRequest(body);
      const a = answer(sent);
      if (a) {
        requests.answered += 1;
        records.push(...(a.keep ?? []));
        res.writeHead(a.status, a.contentType ? { "content-type": a.contentType } : {}).end(a.body ?? "");
        return;
      }
    }
    if (contentType.includes("json")) {
      requests.json += 1;
      records.push(...normalise(JSON.parse(body.toString("utf8")) as ExportRequest));
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    } else {
      requests.protobuf += 1;
      const message = type.decode(body);
      const obj = type.toObject(message, { longs: String, enums: Number, bytes: String, defaults: false });
      records.push(...normalise(obj as ExportRequest));
      res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.writeHead(400).end());
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    logsEndpoint: `${url}/v1/logs`,
    records,
    requests,
    setFailing: (status) => {
      failing = status;
    },
    setAnswer: (a) => {
      answer = a;
    },
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
