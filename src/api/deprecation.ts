/**
 * The platform's word that an endpoint is going away: the `Deprecation` (RFC 9745) and `Sunset`
 * (RFC 8594) response headers, remembered per route template from every answer. The platform's
 * documentation says nothing of them, so any form is read: `Deprecation: @1767225600` (a structured
 * date), the older drafts' `true` or HTTP-date, and `Sunset` as an HTTP-date; a `Link` with
 * `rel="deprecation"` or `rel="sunset"` is where the platform explains.
 */
import type { IncomingHttpHeaders } from "node:http";
import { httpDateMs } from "../util/httpDate.js";
import { displayUrl } from "./redact.js";

export interface DeprecationNotice {
  /** The route template, as the API metrics' `endpoint` label. */
  endpoint: string;
  /** When the endpoint was (or will be) deprecated, ms; undefined when the header gives no date. */
  deprecatedAtMs?: number;
  /** When the platform says it stops answering, ms. */
  sunsetAtMs?: number;
  /** Where the platform explains (a Link with rel deprecation or sunset). */
  link?: string;
  /** The last answer that said so, ms. */
  lastSeenMs: number;
}

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const v = headers[name];
  const text = Array.isArray(v) ? v[0] : v;
  return text === undefined || text.trim() === "" ? undefined : text.trim();
};

/**
 * The Deprecation header: `@<seconds>` (RFC 9745), or an HTTP-date or `true` (drafts). `null`: the
 * header says the endpoint is deprecated without a usable date; undefined: no such header.
 */
export function deprecationOf(headers: IncomingHttpHeaders): number | null | undefined {
  const text = header(headers, "deprecation");
  if (text === undefined) return undefined;
  const structured = /^@(-?\d+(?:\.\d+)?)$/.exec(text);
  if (structured) return Number(structured[1]) * 1000;
  if (text.toLowerCase() === "false") return undefined;
  return httpDateMs(text) ?? null;
}

/** The Sunset header's HTTP-date, ms; undefined when absent or unreadable. */
export function sunsetOf(headers: IncomingHttpHeaders): number | undefined {
  const text = header(headers, "sunset");
  return text === undefined ? undefined : httpDateMs(text);
}

/** The target of a `Link` whose rel is deprecation or sunset (without credentials, as URLs are shown). */
export function noticeLinkOf(headers: IncomingHttpHeaders): string | undefined {
  const text = header(headers, "link");
  if (text === undefined) return undefined;
  for (const part of text.split(/,(?=\s*<)/)) {
    const m = /^\s*<([^>]*)>(.*)$/.exec(part);
    if (m && /;\s*rel="?[^";]*\b(deprecation|sunset)\b/i.test(m[2] as string))
      return displayUrl(m[1] as string);
  }
  return undefined;
}

/** Every endpoint the platform said is deprecated or sunset, by route template. */
export class DeprecationNotices {
  private readonly byEndpoint = new Map<string, DeprecationNotice>();

  constructor(
    /** Called for each answer that carries either header (the metrics). */
    private readonly onNotice?: (notice: DeprecationNotice) => void,
  ) {}

  /** One answer's headers; returns whether they said the endpoint is going away. */
  observe(endpoint: string, headers: IncomingHttpHeaders, nowMs: number): boolean {
    const deprecated = deprecationOf(headers);
    const sunsetAtMs = sunsetOf(headers);
    if (deprecated === undefined && sunsetAtMs === undefined) return false;
    const link = noticeLinkOf(headers);
    const notice: DeprecationNotice = {
      endpoint,
      ...(typeof deprecated === "number" ? { deprecatedAtMs: deprecated } : {}),
      ...(sunsetAtMs !== undefined ? { sunsetAtMs } : {}),
      ...(link !== undefined ? { link } : {}),
      lastSeenMs: nowMs,
    };
    this.byEndpoint.set(endpoint, notice);
    this.onNotice?.(notice);
    return true;
  }

  /** The notices, soonest sunset first (those without one last), then by endpoint. */
  list(): DeprecationNotice[] {
    return [...this.byEndpoint.values()].sort(
      (a, b) =>
        (a.sunsetAtMs ?? Infinity) - (b.sunsetAtMs ?? Infinity) || a.endpoint.localeCompare(b.endpoint),
    );
  }
}

/** One notice in words: "/sites/{id}/backups (sunset 2027-01-31; deprecated from 2026-10-01; see <link>)". */
export function describeNotice(n: DeprecationNotice): string {
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const facts = [
    n.sunsetAtMs !== undefined ? `sunset ${day(n.sunsetAtMs)}` : undefined,
    n.deprecatedAtMs !== undefined ? `deprecated from ${day(n.deprecatedAtMs)}` : undefined,
    n.link !== undefined ? `see ${n.link}` : undefined,
  ].filter((f): f is string => f !== undefined);
  return facts.length > 0 ? `${n.endpoint} (${facts.join("; ")})` : n.endpoint;
}
