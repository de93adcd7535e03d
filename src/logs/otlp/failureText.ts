/**
 * A failed export in words: what the endpoint answered and its likely cause, naming the setting to
 * check. Shared by the exporter's warnings, the status page, `/-/ready` and `doctor`.
 */
import { describeNetworkError, networkErrorFix } from "../../api/errors.js";
import { displayUrl } from "../../api/redact.js";
import { repeatedLogsPath } from "./settings.js";

/** The settings an OTLP logs URL comes from. */
const OTLP_SETTING = "OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_LOGS_ENDPOINT)";

const WRONG_PROTOCOL =
  "a wrong OTEL_EXPORTER_OTLP_PROTOCOL (a gRPC port, 4317, given http/protobuf, or an HTTP port, 4318, given grpc)";

/** What to check for an answer that refuses the export (undefined: nothing to add). */
function likelyCause(url: string, outcome: { reason: string; kind?: string; partial?: boolean }): string {
  const { reason, kind } = outcome;
  const status = /^HTTP (\d{3})/.exec(reason)?.[1];
  const grpc = /^gRPC status (\d+)/.exec(reason)?.[1];
  const repeated = repeatedLogsPath(url);
  if (kind === "invalid") {
    return `something other than an OTLP receiver answers at that URL (a proxy's or web server's page, a wrong host, port or path${repeated ? "; the path repeats /v1/logs" : ""}): point OTEL_EXPORTER_OTLP_ENDPOINT at the collector's OTLP port`;
  }
  if (status === "404" || grpc === "5") {
    return (
      repeated ?? "check OTEL_EXPORTER_OTLP_ENDPOINT (the collector's base URL; the exporter adds /v1/logs)"
    );
  }
  if (["401", "403", "407"].includes(status ?? "") || grpc === "7" || grpc === "16") {
    return "the collector refuses the credentials: check OTEL_EXPORTER_OTLP_HEADERS (missing or expired)";
  }
  if (status === "405" || grpc === "12") {
    return `that URL does not take OTLP log exports: check OTEL_EXPORTER_OTLP_ENDPOINT, or ${WRONG_PROTOCOL}`;
  }
  if (status === "415") {
    return `the endpoint does not take this encoding: ${WRONG_PROTOCOL}, or a path that is not an OTLP one`;
  }
  if (status?.startsWith("3")) {
    return "the URL redirects: give OTEL_EXPORTER_OTLP_ENDPOINT the URL it redirects to (https?)";
  }
  if (kind !== "refused") return "";
  if (outcome.partial) {
    return "the endpoint took the request but rejected every record: a backend limit every record hits (too old, too large, a rate or tenant limit), or a path or tenant it does not know";
  }
  if (status === "413") {
    return "the backend refuses the size of every request, whatever its records: raise its limit (an OpenTelemetry Collector's max_request_body_size, a proxy's body size)";
  }
  return `the endpoint refused every record: usually a wrong path (${repeated ?? "a backend whose OTLP path is not /v1/logs: give the full URL in OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"}), ${WRONG_PROTOCOL}, or a backend limit every record hits (size, age, rate)`;
}

/** What a failed export means, in words that name the endpoint and what to check. */
export function describeExportFailure(
  url: string,
  outcome: { reason: string; kind?: string; partial?: boolean },
): string {
  const shown = displayUrl(url);
  const { reason } = outcome;
  let what = reason;
  let check: string;
  if (/^[A-Z][A-Z0-9_]+$/.test(reason)) {
    what = describeNetworkError(reason, url);
    // Refused: the collector's state as likely as the URL; otherwise a fix naming the URL's setting.
    const fix = reason === "ECONNREFUSED" ? undefined : networkErrorFix(reason, url, OTLP_SETTING);
    check = fix ?? "is the collector running and is OTEL_EXPORTER_OTLP_ENDPOINT right?";
  } else if (/^no answer within/.test(reason)) {
    check = "raise OTEL_EXPORTER_OTLP_TIMEOUT, or check the collector's load";
  } else {
    check = likelyCause(url, outcome);
  }
  return `OTLP export to ${shown} failed: ${what}${check ? `; ${check}` : ""}`;
}
