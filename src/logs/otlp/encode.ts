/**
 * OTLP/protobuf encoding of log records, straight from the exporter's own record shape: no
 * intermediate SDK objects, the resource and scope encoded once, each record encoded as it joins a
 * batch. The bytes are those of the OpenTelemetry JS serializer for the same records (a test checks
 * it), so any OTLP receiver reads them alike.
 *
 * ExportLogsServiceRequest { 1: ResourceLogs { 1: Resource, 2: ScopeLogs { 1: Scope, 2: LogRecord* } } }
 */
import type { AttributeValue, Attributes } from "@opentelemetry/api";
import { ProtoWriter } from "./protoWriter.js";
import { ownedBytes } from "../../util/ownedBytes.js";

/** A record as shipped: the entry's time, what it says, and its attributes (in insertion order). */
export interface OutgoingRecord {
  timeMs: number;
  observedMs: number;
  /** 0 = unspecified (not written). */
  severityNumber: number;
  severityText: string;
  body: string;
  attributes: Attributes;
  /** OTLP's event_name, for records that are events. */
  eventName?: string;
}

const MIN_INT64 = -(2 ** 63);

function varintSize(n: number): number {
  return n < 128 ? 1 : n < 16384 ? 2 : n < 2097152 ? 3 : n < 268435456 ? 4 : 5;
}
const MAX_INT64 = 2 ** 63;

function anyValue(w: ProtoWriter, value: AttributeValue | null | undefined): void {
  if (typeof value === "string") {
    w.tag(1, 2);
    w.string(value);
  } else if (typeof value === "boolean") {
    w.tag(2, 0);
    w.varint(value ? 1 : 0);
  } else if (typeof value === "number") {
    if (Number.isInteger(value) && value >= MIN_INT64 && value < MAX_INT64) {
      w.tag(3, 0);
      w.varint(value);
    } else {
      w.tag(4, 1);
      w.double(value);
    }
  } else if (Array.isArray(value)) {
    w.tag(5, 2);
    const array = w.begin();
    for (const item of value) {
      w.tag(1, 2);
      const at = w.begin();
      anyValue(w, item);
      w.end(at);
    }
    w.end(array);
  }
}

/**
 * Attribute keys as encoded (field 1 of a KeyValue: tag, length, UTF-8 bytes): a record repeats the
 * same few dozen keys, copied from here rather than encoded each time. Bounded, since keys can come
 * from outside (webhook payloads): past the limit a key is simply encoded.
 */
const encodedKeys = new Map<string, Buffer>();
const ENCODED_KEYS_MAX = 512;

function encodedKey(key: string): Buffer | undefined {
  let bytes = encodedKeys.get(key);
  if (bytes === undefined && encodedKeys.size < ENCODED_KEYS_MAX) {
    const w = new ProtoWriter(16 + 3 * key.length);
    w.tag(1, 2);
    w.string(key);
    bytes = ownedBytes(w.view());
    encodedKeys.set(key, bytes);
  }
  return bytes;
}

/** One KeyValue entry of repeated field `field`. */
function keyValue(
  w: ProtoWriter,
  field: number,
  key: string,
  value: AttributeValue | null | undefined,
): void {
  w.tag(field, 2);
  const kv = w.begin();
  const keyBytes = encodedKey(key);
  if (keyBytes) w.raw(keyBytes);
  else {
    w.tag(1, 2);
    w.string(key);
  }
  w.tag(2, 2);
  const at = w.begin();
  anyValue(w, value);
  w.end(at);
  w.end(kv);
}

/** Each own attribute of the object, in insertion order. */
function forEachAttribute(attributes: Attributes, each: (key: string, value: AttributeValue) => void): void {
  for (const key in attributes) {
    if (!Object.prototype.hasOwnProperty.call(attributes, key)) continue;
    each(key, attributes[key] as AttributeValue);
  }
}

export function encodeAttributes(w: ProtoWriter, attributes: Attributes, field: number): void {
  forEachAttribute(attributes, (key, value) => keyValue(w, field, key, value));
}

/** What a record says apart from its attributes. */
export type RecordHead = Omit<OutgoingRecord, "attributes">;

/**
 * Where a record's attributes go, in order: an object, or (the log path's hot loop) straight into
 * the record's protobuf encoding, so no attribute object is built per record.
 */
export interface AttributeWriter {
  add(key: string, value: AttributeValue): void;
}

/** Collects attributes into an object (records for the SDK exporters, tests). */
export class AttributeObject implements AttributeWriter {
  readonly attributes: Attributes = {};
  add(key: string, value: AttributeValue): void {
    this.attributes[key] = value;
  }
}

/** Writes a LogRecord's attributes (field 6) as they are added. */
class RecordAttributes implements AttributeWriter {
  constructor(private readonly w: ProtoWriter) {}
  add(key: string, value: AttributeValue): void {
    keyValue(this.w, 6, key, value);
  }
}

/**
 * One LogRecord as a ScopeLogs entry (tag, length, fields), appended to `w`; `attributes` adds the
 * record's attributes, in order, to the writer it is given (no attribute object is built).
 */
export function encodeLogRecordFrom(
  w: ProtoWriter,
  r: RecordHead,
  attributes: (out: AttributeWriter) => void,
): void {
  w.tag(2, 2);
  const at = w.begin();
  w.tag(1, 1);
  w.fixed64TimeMs(r.timeMs);
  if (r.severityNumber !== 0) {
    w.tag(2, 0);
    w.varint(r.severityNumber);
  }
  if (r.severityText) {
    w.tag(3, 2);
    w.string(r.severityText);
  }
  w.tag(5, 2);
  const body = w.begin();
  anyValue(w, r.body);
  w.end(body);
  attributes(new RecordAttributes(w));
  w.tag(7, 0); // dropped_attributes_count
  w.varint(0);
  w.tag(11, 1);
  w.fixed64TimeMs(r.observedMs);
  if (r.eventName) {
    w.tag(12, 2);
    w.string(r.eventName);
  }
  w.end(at);
}

/** One LogRecord as a ScopeLogs entry (tag, length, fields), appended to `w`. */
export function encodeLogRecord(w: ProtoWriter, r: OutgoingRecord): void {
  encodeLogRecordFrom(w, r, (out) => forEachAttribute(r.attributes, (key, value) => out.add(key, value)));
}

export interface ResourceAndScope {
  resource: Attributes;
  resourceSchemaUrl?: string;
  scopeName: string;
  scopeVersion?: string;
  scopeAttributes?: Attributes;
}

/** The constant parts of every request: the Resource field and the Scope field, encoded once. */
export class RequestFrame {
  private readonly resourceField: Buffer;
  private readonly scopeField: Buffer;
  private readonly schemaUrlField: Buffer;

  constructor(head: ResourceAndScope) {
    const w = new ProtoWriter(1024);
    w.tag(1, 2);
    const resource = w.begin();
    encodeAttributes(w, head.resource, 1);
    w.tag(2, 0);
    w.varint(0);
    w.end(resource);
    this.resourceField = ownedBytes(w.view());
    w.reset();
    w.tag(1, 2);
    const scope = w.begin();
    w.tag(1, 2);
    w.string(head.scopeName);
    if (head.scopeVersion) {
      w.tag(2, 2);
      w.string(head.scopeVersion);
    }
    if (head.scopeAttributes && Object.keys(head.scopeAttributes).length > 0) {
      encodeAttributes(w, head.scopeAttributes, 3);
    }
    w.end(scope);
    this.scopeField = ownedBytes(w.view());
    w.reset();
    if (head.resourceSchemaUrl) {
      w.tag(3, 2);
      w.string(head.resourceSchemaUrl);
    }
    this.schemaUrlField = ownedBytes(w.view());
  }

  /** The whole request around `records` (encoded LogRecord entries, see encodeLogRecord). */
  wrap(records: Uint8Array): Buffer {
    return this.wrapParts([records]);
  }

  /**
   * The request around records given in parts (a batch's pages), as the parts to send one after the
   * other: the frame's head, the parts themselves (not copied), and its tail.
   */
  partsAround(parts: readonly Uint8Array[]): Uint8Array[] {
    let recordBytes = 0;
    for (const p of parts) recordBytes += p.length;
    const scopeLength = this.scopeField.length + recordBytes;
    const resourceLength =
      this.resourceField.length + 1 + varintSize(scopeLength) + scopeLength + this.schemaUrlField.length;
    const w = new ProtoWriter(
      2 +
        varintSize(resourceLength) +
        varintSize(scopeLength) +
        this.resourceField.length +
        this.scopeField.length,
    );
    w.tag(1, 2);
    w.varint(resourceLength);
    w.raw(this.resourceField);
    w.tag(2, 2);
    w.varint(scopeLength);
    w.raw(this.scopeField);
    const out = [w.view(), ...parts];
    if (this.schemaUrlField.length > 0) out.push(this.schemaUrlField);
    return out;
  }

  /** The same, as one buffer. */
  wrapParts(parts: readonly Uint8Array[]): Buffer {
    return Buffer.concat(this.partsAround(parts));
  }
}
