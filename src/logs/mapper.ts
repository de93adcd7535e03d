/**
 * Maps API log entries to OpenTelemetry log records (body, severity, semantic-convention attributes)
 * and to the log-derived counter labels.
 */
import { SeverityNumber, type Attributes } from "@opentelemetry/api";
import type { ActivityEntry, PhpLogEntry, ScrollStream, ServerLogEntry } from "../api/schemas.js";
import { AttributeObject, type AttributeWriter } from "./otlp/encode.js";

/** What a record says, apart from its attributes. */
export interface MappedHead {
  timeMs: number;
  severityNumber: SeverityNumber;
  severityText: string;
  body: string;
  /** OTLP's event_name, for entries that are events (activity). */
  eventName?: string;
}

export interface MappedRecord extends MappedHead {
  attributes: Attributes;
}

/** How entries of one kind become records: the head, then the attributes written in order. */
export interface EntryMapping<E> {
  head(entry: E, timeMs: number): MappedHead;
  attributes(entry: E, out: AttributeWriter): void;
}

/** The record as an object: head and attributes. */
export function mapEntry<E>(mapping: EntryMapping<E>, entry: E, timeMs: number): MappedRecord {
  const out = new AttributeObject();
  mapping.attributes(entry, out);
  return { ...mapping.head(entry, timeMs), attributes: out.attributes };
}

function str(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  const s = String(value);
  return s === "" || s === "-" ? undefined : s;
}

function set(out: AttributeWriter, key: string, value: string | number | undefined): void {
  if (value !== undefined) out.add(key, value);
}

export function serverSeverity(status: number): { number: SeverityNumber; text: string } {
  if (status >= 500) return { number: SeverityNumber.ERROR, text: "ERROR" };
  if (status >= 400) return { number: SeverityNumber.WARN, text: "WARN" };
  return { number: SeverityNumber.INFO, text: "INFO" };
}

/** "HTTP/2.0" → "2.0", "HTTP/1.1" → "1.1". */
function protocolVersion(text: string | undefined): string | undefined {
  if (!text) return undefined;
  const m = /^HTTP\/(.+)$/i.exec(text.trim());
  return m ? m[1] : text;
}

/**
 * HTTP methods known to the semantic conventions (RFC 9110's, PATCH and QUERY); any other is
 * recorded as `_OTHER` with the method as sent in `http.request.method_original`.
 */
export const KNOWN_HTTP_METHODS: ReadonlySet<string> = new Set([
  "CONNECT",
  "DELETE",
  "GET",
  "HEAD",
  "OPTIONS",
  "PATCH",
  "POST",
  "PUT",
  "QUERY",
  "TRACE",
]);

/** Methods are case-sensitive: "get" is not GET. */
function addMethod(out: AttributeWriter, method: string | undefined, known: ReadonlySet<string>): void {
  if (method === undefined) return;
  if (known.has(method)) {
    out.add("http.request.method", method);
    return;
  }
  out.add("http.request.method", "_OTHER");
  out.add("http.request.method_original", method);
}

const DEFAULT_PORTS: Readonly<Record<string, number>> = { http: 80, https: 443 };

/**
 * A Host header as `server.address` and `server.port`: "shop.example:8443" → shop.example and 8443,
 * "[2001:db8::1]:8080" → 2001:db8::1 and 8080; without a port, the scheme's default port.
 */
export function hostAndPort(
  host: string | undefined,
  scheme: string | undefined,
): { address?: string; port?: number } {
  if (host === undefined) return {};
  if (!host.includes(":")) {
    const port = DEFAULT_PORTS[(scheme ?? "").toLowerCase()];
    return port === undefined ? { address: host } : { address: host, port };
  }
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(host);
  const plain = bracketed ? undefined : /^([^:]+):(\d+)$/.exec(host);
  const address = bracketed?.[1] ?? plain?.[1] ?? host;
  const given = bracketed?.[2] ?? plain?.[2];
  const port = given !== undefined ? Number(given) : DEFAULT_PORTS[(scheme ?? "").toLowerCase()];
  return port !== undefined && port > 0 && port < 65536 ? { address, port } : { address };
}

/** The request line's parts: the body is "METHOD url version" of those present. */
function serverBody(entry: ServerLogEntry): string {
  const method = str(entry.request_type);
  const url = str(entry.request_url) ?? "/";
  const version = str(entry.http_version);
  let body = method ?? "-";
  body += ` ${url}`;
  if (version) body += ` ${version}`;
  return body;
}

/** Web-server entries; `knownMethods` overrides the known HTTP methods (OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS). */
export function serverMapping(
  knownMethods: ReadonlySet<string> = KNOWN_HTTP_METHODS,
): EntryMapping<ServerLogEntry> {
  return {
    head: serverHead,
    attributes: (entry, out) => serverAttributes(entry, out, knownMethods),
  };
}

function serverHead(entry: ServerLogEntry, timeMs: number): MappedHead {
  const sev = serverSeverity(entry.status);
  return { timeMs, severityNumber: sev.number, severityText: sev.text, body: serverBody(entry) };
}

function serverAttributes(
  entry: ServerLogEntry,
  out: AttributeWriter,
  knownMethods: ReadonlySet<string>,
): void {
  const url = str(entry.request_url) ?? "/";
  const q = url.indexOf("?");
  addMethod(out, str(entry.request_type), knownMethods);
  set(out, "url.path", q >= 0 ? url.slice(0, q) : url);
  set(out, "url.query", q >= 0 ? url.slice(q + 1) : undefined);
  const scheme = str(entry.scheme);
  set(out, "url.scheme", scheme);
  const server = hostAndPort(str(entry.http_host), scheme);
  set(out, "server.address", server.address);
  set(out, "server.port", server.port);
  out.add("http.response.status_code", entry.status);
  if (typeof entry.body_bytes_sent === "number") out.add("http.response.body.size", entry.body_bytes_sent);
  set(out, "client.address", str(entry.user_ip));
  set(out, "user_agent.original", str(entry.http_user_agent));
  set(out, "network.protocol.version", protocolVersion(str(entry.http_version)));
  // Semantic conventions: request headers are string arrays.
  const referer = str(entry.http_referer);
  if (referer) out.add("http.request.header.referer", [referer]);
  const xff = str(entry.http_x_forwarded_for);
  if (xff) out.add("http.request.header.x-forwarded-for", [xff]);
  if (typeof entry.request_time === "number") out.add("sitehost.http.request_time", entry.request_time);
  set(out, "sitehost.http.cached", str(entry.cached));
  set(out, "sitehost.http.renderer", str(entry.renderer));
  set(out, "sitehost.http.request_completion", str(entry.request_completion));
}

export const SERVER_MAPPING: EntryMapping<ServerLogEntry> = serverMapping();

export function mapServerEntry(entry: ServerLogEntry, timeMs: number): MappedRecord {
  return mapEntry(SERVER_MAPPING, entry, timeMs);
}

/** The counter labels of PHP severities: every one `phpSeverity` gives. */
export const PHP_SEVERITY_LABELS = [
  "fatal",
  "parse",
  "error",
  "warning",
  "notice",
  "deprecated",
  "other",
] as const;
export type PhpSeverityLabel = (typeof PHP_SEVERITY_LABELS)[number];

/** PHP severity words → counter label and OpenTelemetry severity number. */
export function phpSeverity(text: string | null | undefined): {
  label: PhpSeverityLabel;
  number: SeverityNumber;
} {
  const s = (text ?? "").trim().toLowerCase();
  if (s.startsWith("fatal")) return { label: "fatal", number: SeverityNumber.FATAL };
  if (s.startsWith("parse")) return { label: "parse", number: SeverityNumber.FATAL };
  if (s.startsWith("warning")) return { label: "warning", number: SeverityNumber.WARN };
  if (s.startsWith("notice")) return { label: "notice", number: SeverityNumber.INFO2 };
  if (s.startsWith("deprecated")) return { label: "deprecated", number: SeverityNumber.INFO2 };
  if (s.startsWith("strict")) return { label: "other", number: SeverityNumber.INFO2 };
  if (s === "error" || s.startsWith("recoverable") || s.startsWith("catchable")) {
    return { label: "error", number: SeverityNumber.ERROR };
  }
  return { label: "other", number: SeverityNumber.UNSPECIFIED };
}

/**
 * "PHP Fatal error:  Uncaught RuntimeException: boom in /x.php:12\nStack trace:\n#0 ..."
 * → exception type, message and stack trace.
 */
export function parseUncaughtException(
  message: string,
): { type: string; message: string; stacktrace: string | undefined } | undefined {
  const m =
    /Uncaught\s+([A-Za-z_\\][\w\\]*)(?::\s*([\s\S]*?))?(?:\s+in\s+(\S+?):(\d+))?\s*(?:\nStack trace:\n([\s\S]*))?$/.exec(
      message,
    );
  if (!m) return undefined;
  const stack = m[5]?.trimEnd();
  return {
    type: m[1] as string,
    message: (m[2] ?? "").trim(),
    stacktrace: stack ? `Stack trace:\n${stack}` : undefined,
  };
}

export const PHP_MAPPING: EntryMapping<PhpLogEntry> = {
  head(entry, timeMs) {
    return {
      timeMs,
      severityNumber: phpSeverity(entry.severity).number,
      severityText: entry.severity ?? "",
      body: entry.message,
    };
  },
  attributes(entry, out) {
    set(out, "code.file.path", str(entry.file));
    if (typeof entry.line === "number") out.add("code.line.number", entry.line);
    const exception = parseUncaughtException(entry.message);
    if (exception) {
      out.add("exception.type", exception.type);
      out.add("exception.message", exception.message);
      if (exception.stacktrace) out.add("exception.stacktrace", exception.stacktrace);
    }
  },
};

export function mapPhpEntry(entry: PhpLogEntry, timeMs: number): MappedRecord {
  return mapEntry(PHP_MAPPING, entry, timeMs);
}

/**
 * An activity log entry (who did what, from where): the record's EventName is the action (no
 * `event.name` attribute: the semantic conventions deprecated it for the field), the message is the
 * body, `user.email` the account e-mail, `client.address` the IP address.
 */
export const ACTIVITY_MAPPING: EntryMapping<ActivityEntry> = {
  head(entry, timeMs) {
    return {
      timeMs,
      severityNumber: SeverityNumber.INFO,
      severityText: "INFO",
      body: entry.message ?? entry.description ?? entry.name,
      eventName: entry.name,
    };
  },
  attributes(entry, out) {
    set(out, "user.email", str(entry.accountEmail));
    set(out, "client.address", str(entry.ipAddress));
    set(out, "user_agent.original", str(entry.userAgent));
    set(out, "sitehost.activity.source", str(entry.source));
    set(out, "sitehost.activity.description", str(entry.description));
    out.add("sitehost.activity.id", String(entry.id));
  },
};

export function mapActivityEntry(entry: ActivityEntry, timeMs: number): MappedRecord {
  return mapEntry(ACTIVITY_MAPPING, entry, timeMs);
}

/** `<class>|<cached>` by index class × 2 + cached; class 0 stands for a status outside 100–599. */
export const SERVER_COUNTER_KEYS = [0, 1, 2, 3, 4, 5].flatMap((c) =>
  [false, true].map((cached) => `${c === 0 ? "other" : `${c}xx`}|${cached}`),
);

/** A web-server entry's index in SERVER_COUNTER_KEYS (odd: served from the cache). */
export function serverCounterIndex(e: ServerLogEntry): number {
  const cls = e.status >= 100 && e.status < 600 ? Math.floor(e.status / 100) : 0;
  const cached = String(e.cached ?? "").toUpperCase();
  return cls * 2 + (cached === "HIT" || cached === "TRUE" ? 1 : 0);
}

/** Counter key of an entry: `status_class|cached` for server lines, the severity label for PHP. */
export function counterKey(stream: ScrollStream, entry: PhpLogEntry | ServerLogEntry): string {
  // One of a dozen keys: taken from a table, not built for every line.
  if (stream === "server") return SERVER_COUNTER_KEYS[serverCounterIndex(entry as ServerLogEntry)] as string;
  return phpSeverity((entry as PhpLogEntry).severity).label;
}
