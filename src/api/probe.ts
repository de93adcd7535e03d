/**
 * What `sitehost-exporter doctor` asks of the API client: one request of an endpoint with its answer as
 * it came (any status, latency, headers, the parsed body), and what the token endpoint answered. The
 * requests go through the same token, budget and retries as every other; only reads exist in the
 * endpoint table, so a probe never changes anything on the platform.
 */
import type { IncomingHttpHeaders } from "node:http";

export interface ProbeAnswer {
  /** The request as messages name it (method and URL, no credentials). */
  where: string;
  status: number;
  latencyMs: number;
  headers: IncomingHttpHeaders;
  /** The body parsed as JSON; undefined when it is not JSON (or empty). */
  json: unknown;
}

export interface TokenReport {
  where: string;
  latencyMs: number;
  expiresInSeconds: number | undefined;
  /** `scopes` (a list) or `scope` (space-separated), as granted. */
  scopes: string[] | undefined;
  /** The answer's Date header, for the clock skew. */
  serverDate: string | undefined;
}

/** The fields doctor reads from a token answer's body (never the token itself). */
export function tokenFacts(body: string): Pick<TokenReport, "expiresInSeconds" | "scopes"> {
  try {
    const parsed = JSON.parse(body) as { expires_in?: unknown; scopes?: unknown; scope?: unknown } | null;
    const expires = Number(parsed?.expires_in);
    const scopes = Array.isArray(parsed?.scopes)
      ? parsed.scopes.filter((s): s is string => typeof s === "string")
      : typeof parsed?.scope === "string"
        ? parsed.scope.split(/\s+/).filter(Boolean)
        : undefined;
    return { expiresInSeconds: Number.isFinite(expires) ? expires : undefined, scopes };
  } catch {
    return { expiresInSeconds: undefined, scopes: undefined };
  }
}

/** A body as JSON, or undefined. */
export function jsonOrUndefined(text: string): unknown {
  try {
    return text.trim() === "" ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined;
  }
}
