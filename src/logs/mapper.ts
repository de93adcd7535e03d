/**
 * Maps API log entries to OpenTelemetry log records (body, severity, semantic-convention attributes)
 * and to the log-derived counter labels.
 */
import { SeverityNumber, type Attributes } from "@opentelemetry/api";
import type { ActivityEntry, PhpLogEntry, ScrollStream, ServerLogEntry } from "../api/schemas.js";

export interface MappedRecord {
  timeMs: number;
  severityNumber: SeverityNumber;
  severityText: string;
  body: string;
  attributes: Attributes;
  /** OTLP's event_name, for entries that are events (activity). */
  eventName?: string;
}

function str(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  const s = String(value);
  return s === "" || s === "-" ? undefined : s;
}

function set(attrs: Attributes, key: string, value: string | number | boolean | string[] | undefined): void {
  if (value !== undefined) attrs[key] = value;
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

export function mapServerEntry(entry: ServerLogEntry, timeMs: number): MappedRecord {
  const url = str(entry.request_url) ?? "/";
  const q = url.indexOf("?");
  const path = q >= 0 ? url.slice(0, q) : url;
  const query = q >= 0 ? url.slice(q + 1) : undefined;
  const method = str(entry.request_type);
  const version = str(entry.http_version);
  const attrs: Attributes = {};
  set(attrs, "http.request.method", method);
  set(attrs, "url.path", path);
  set(attrs, "url.query", query);
  set(attrs, "url.scheme", str(entry.scheme));
  set(attrs, "server.address", str(entry.http_host));
  attrs["http.response.status_code"] = entry.status;
  if (typeof entry.body_bytes_sent === "number") attrs["http.response.body.size"] = entry.body_bytes_sent;
  set(attrs, "client.address", str(entry.user_ip));
  set(attrs, "user_agent.original", str(entry.http_user_agent));
  set(attrs, "network.protocol.version", protocolVersion(version));
  // Semantic conventions: request headers are string arrays.
  const referer = str(entry.http_referer);
  if (referer) attrs["http.request.header.referer"] = [referer];
  const xff = str(entry.http_x_forwarded_for);
  if (xff) attrs["http.request.header.x-forwarded-for"] = [xff];
  if (typeof entry.request_time === "number") attrs["sitehost.http.request_time"] = entry.request_time;
  set(attrs, "sitehost.http.cached", str(entry.cached));
  set(attrs, "sitehost.http.renderer", str(entry.renderer));
  set(attrs, "sitehost.http.request_completion", str(entry.request_completion));
  const sev = serverSeverity(entry.status);
  return {
    timeMs,
    severityNumber: sev.number,
    severityText: sev.text,
    body: [method ?? "-", url, version].filter(Boolean).join(" "),
    attributes: attrs,
  };
}

/** PHP severity words → counter label and OpenTelemetry severity number. */
export function phpSeverity(text: string | null | undefined): { label: string; number: SeverityNumber } {
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

export function mapPhpEntry(entry: PhpLogEntry, timeMs: number): MappedRecord {
  const attrs: Attributes = {};
  set(attrs, "code.file.path", str(entry.file));
  if (typeof entry.line === "number") attrs["code.line.number"] = entry.line;
  const exception = parseUncaughtException(entry.message);
  if (exception) {
    attrs["exception.type"] = exception.type;
    attrs["exception.message"] = exception.message;
    if (exception.stacktrace) attrs["exception.stacktrace"] = exception.stacktrace;
  }
  const sev = phpSeverity(entry.severity);
  return {
    timeMs,
    severityNumber: sev.number,
    severityText: entry.severity ?? "",
    body: entry.message,
    attributes: attrs,
  };
}

/**
 * An activity log entry (who did what, from where): `event.name` is the action, the message is the
 * body, `enduser.id` the account e-mail, `client.address` the IP address.
 */
export function mapActivityEntry(entry: ActivityEntry, timeMs: number): MappedRecord {
  const attrs: Attributes = {};
  attrs["event.name"] = entry.name;
  set(attrs, "enduser.id", str(entry.accountEmail));
  set(attrs, "client.address", str(entry.ipAddress));
  set(attrs, "user_agent.original", str(entry.userAgent));
  set(attrs, "sitehost.activity.source", str(entry.source));
  set(attrs, "sitehost.activity.description", str(entry.description));
  attrs["sitehost.activity.id"] = String(entry.id);
  return {
    timeMs,
    severityNumber: SeverityNumber.INFO,
    severityText: "INFO",
    body: entry.message ?? entry.description ?? entry.name,
    attributes: attrs,
    eventName: entry.name,
  };
}

/** Counter key of an entry: `status_class|cached` for server lines, the severity label for PHP. */
export function counterKey(stream: ScrollStream, entry: PhpLogEntry | ServerLogEntry): string {
  if (stream === "server") {
    const e = entry as ServerLogEntry;
    const cls = e.status >= 100 && e.status < 600 ? `${Math.floor(e.status / 100)}xx` : "other";
    const cached = String(e.cached ?? "").toUpperCase();
    return `${cls}|${cached === "HIT" || cached === "TRUE" ? "true" : "false"}`;
  }
  return phpSeverity((entry as PhpLogEntry).severity).label;
}
