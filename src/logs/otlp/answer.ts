/**
 * What a 2xx answer to an export says. Only an OTLP ExportLogsServiceResponse means an OTLP receiver
 * took the records: an empty body (the empty response; 204 included), or the message in protobuf or
 * JSON, whose partial success tells how many records were rejected. Anything else — a proxy's HTML
 * page, a web server's "OK", bytes that do not decode — means the request reached something that is
 * not an OTLP receiver, and the export is not counted as delivered.
 *
 * ExportLogsServiceResponse { 1: partial_success { 1: rejected_log_records int64, 2: error_message } }
 */
import type { ExportOutcome } from "./outcome.js";

export type AnswerOutcome = Extract<ExportOutcome, { kind: "accepted" | "invalid" }>;

interface PartialSuccess {
  rejected: number;
  message?: string;
}

/** Protobuf wire reading that fails on anything a well-formed message cannot hold. */
class Wire {
  pos = 0;
  constructor(private readonly bytes: Uint8Array) {}

  get done(): boolean {
    return this.pos >= this.bytes.length;
  }

  varint(): number {
    let result = 0;
    for (let shift = 0; shift < 70; shift += 7) {
      if (this.pos >= this.bytes.length) throw new Error("truncated varint");
      const b = this.bytes[this.pos++] as number;
      result += (b & 127) * 2 ** shift;
      if (b < 128) return result;
    }
    throw new Error("varint too long");
  }

  take(length: number): Uint8Array {
    if (length > this.bytes.length - this.pos) throw new Error("length past the end");
    const out = this.bytes.subarray(this.pos, this.pos + length);
    this.pos += length;
    return out;
  }

  /** Skip a field of an unknown number (groups and unknown wire types are not allowed). */
  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 1) this.take(8);
    else if (wire === 2) this.take(this.varint());
    else if (wire === 5) this.take(4);
    else throw new Error(`wire type ${wire}`);
  }

  /** The next field's number and wire type. */
  key(): [number, number] {
    const key = this.varint();
    const field = Math.floor(key / 8);
    if (field === 0) throw new Error("field 0");
    return [field, key & 7];
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function decodePartial(bytes: Uint8Array): PartialSuccess {
  const r = new Wire(bytes);
  const out: PartialSuccess = { rejected: 0 };
  while (!r.done) {
    const [field, wire] = r.key();
    if (field === 1 && wire === 0) out.rejected = r.varint();
    else if (field === 2 && wire === 2) out.message = utf8.decode(r.take(r.varint()));
    else if (field === 1 || field === 2) throw new Error(`field ${field} with wire type ${wire}`);
    else r.skip(wire);
  }
  return out;
}

/** The response in protobuf; throws when the bytes are not one. */
export function decodeProtobufAnswer(bytes: Uint8Array): PartialSuccess {
  const r = new Wire(bytes);
  let partial: PartialSuccess = { rejected: 0 };
  while (!r.done) {
    const [field, wire] = r.key();
    if (field === 1 && wire === 2) partial = decodePartial(r.take(r.varint()));
    else if (field === 1) throw new Error(`field 1 with wire type ${wire}`);
    else r.skip(wire);
  }
  return partial;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The response in OTLP/JSON (lowerCamelCase, or the proto's own names); throws when it is not one. */
export function decodeJsonAnswer(bytes: Uint8Array): PartialSuccess {
  const parsed: unknown = JSON.parse(utf8.decode(bytes));
  if (!isObject(parsed)) throw new Error("not a JSON object");
  const partial = parsed.partialSuccess ?? parsed.partial_success;
  if (partial === undefined || partial === null) return { rejected: 0 };
  if (!isObject(partial)) throw new Error("partialSuccess is not an object");
  const count = partial.rejectedLogRecords ?? partial.rejected_log_records ?? 0;
  const message = partial.errorMessage ?? partial.error_message;
  const rejected = typeof count === "string" && /^\d+$/.test(count) ? Number(count) : count;
  if (typeof rejected !== "number" || !Number.isFinite(rejected) || rejected < 0)
    throw new Error("rejectedLogRecords is not a count");
  if (message !== undefined && typeof message !== "string") throw new Error("errorMessage is not a string");
  return message ? { rejected, message } : { rejected };
}

function mediaType(contentType: string | undefined): string {
  return (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/** A few words of what came instead: an HTML page's title, else the start of the text. */
function glimpse(bytes: Uint8Array): string {
  const text = Buffer.from(bytes.subarray(0, 2048)).toString("utf8");
  const title = /<title[^>]*>([^<]*)</i.exec(text)?.[1];
  const shown = (title ?? text.replace(/<[^>]*>/g, " "))
    .replace(/[^\x20-\x7e]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return shown.length > 80 ? `${shown.slice(0, 77)}...` : shown;
}

/**
 * The outcome of a successful answer (`what`: "HTTP 200", "gRPC OK"). `contentType` is the answer's
 * Content-Type header (undefined when the sink does not see it: the bytes are then read as `expected`).
 */
export function readAnswer(
  what: string,
  contentType: string | undefined,
  body: Uint8Array,
  expected: "protobuf" | "json",
): AnswerOutcome {
  if (body.length === 0) return { kind: "accepted", rejected: 0 };
  const type = mediaType(contentType);
  const json = /^application\/([\w.-]+\+)?json$/.test(type);
  const protobuf = type === "application/x-protobuf" || type === "application/protobuf";
  const as = json ? "json" : protobuf ? "protobuf" : type === "" ? expected : undefined;
  const shown = contentType === undefined ? "" : `${type || "no Content-Type"}, `;
  if (as === undefined) {
    const words = glimpse(body);
    return {
      kind: "invalid",
      reason: `${what} with ${type} instead of an OTLP response${words ? ` ("${words}")` : ""}`,
    };
  }
  try {
    const partial = as === "json" ? decodeJsonAnswer(body) : decodeProtobufAnswer(body);
    return { kind: "accepted", ...partial };
  } catch {
    const words = glimpse(body);
    return {
      kind: "invalid",
      reason: `${what} with a body that is not an OTLP response (${shown}${body.length} bytes${words ? `: "${words}"` : ""})`,
    };
  }
}
