/**
 * Response headers: security defaults, the web config's `http_server_config.headers`, and which
 * of them the server keeps for itself.
 */
import { createHash } from "node:crypto";
import { LANDING_STYLE } from "./landing.js";
import { validateHeaderName, validateHeaderValue } from "../util/nodeHttp.js";

/** On every response. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "X-Content-Type-Options": "nosniff",
};

/**
 * The landing page loads nothing but its own inline style (allowed by its hash), is not framed,
 * and submits no forms.
 */
export const LANDING_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash("sha256").update(LANDING_STYLE).digest("base64")}'`,
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * Headers that describe the response itself (framing, encoding, authentication, methods): the
 * server sets them per response and a configured value would break responses.
 */
const RESERVED = new Set([
  "allow",
  "connection",
  "content-encoding",
  "content-length",
  "content-type",
  "date",
  "keep-alive",
  "proxy-connection",
  "retry-after",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "vary",
  "www-authenticate",
]);

/** One line per invalid configured header, naming it; header values are never secret. */
export function headerProblems(headers: Readonly<Record<string, string>>): string[] {
  const problems: string[] = [];
  const seen = new Map<string, string>();
  for (const [name, value] of Object.entries(headers)) {
    const at = `http_server_config.headers.${name}`;
    try {
      validateHeaderName(name);
    } catch {
      problems.push(
        `${at}: ${JSON.stringify(name)} is not a valid header name (letters, digits and !#$%&'*+-.^_\`|~ only)`,
      );
      continue;
    }
    const lower = name.toLowerCase();
    if (RESERVED.has(lower)) {
      problems.push(`${at}: set by the server for each response; it cannot be configured`);
      continue;
    }
    const twin = seen.get(lower);
    if (twin !== undefined) problems.push(`${at}: the same header as ${twin} (names are case-insensitive)`);
    seen.set(lower, name);
    try {
      validateHeaderValue(name, value);
    } catch {
      problems.push(`${at}: the value contains a line break or another control character`);
    }
  }
  return problems;
}

/**
 * The headers of a response: `defaults` overridden by `configured` (same name, any case), where
 * an empty configured value removes the header.
 */
export function mergeHeaders(
  defaults: Readonly<Record<string, string>>,
  configured: Readonly<Record<string, string>>,
): Array<[string, string]> {
  const out = new Map<string, [string, string]>();
  for (const [name, value] of Object.entries(defaults)) out.set(name.toLowerCase(), [name, value]);
  for (const [name, value] of Object.entries(configured)) {
    if (value === "") out.delete(name.toLowerCase());
    else out.set(name.toLowerCase(), [name, value]);
  }
  return [...out.values()];
}
