/**
 * The token endpoint (credentials, expires_in, scopes), the platform's clock, and what the endpoint
 * checks found about access (403s), as findings.
 */
import type { ApiClient } from "../api/client.js";
import { CLOCK_SKEW_WARN_SECONDS } from "../api/clockSkew.js";
import { describeNotice, type DeprecationNotice } from "../api/deprecation.js";
import type { TokenReport } from "../api/probe.js";
import type { Finding } from "./types.js";

export async function checkToken(api: ApiClient): Promise<{ findings: Finding[]; report?: TokenReport }> {
  let report: TokenReport;
  try {
    report = await api.tokenReport();
  } catch (err) {
    return {
      findings: [
        {
          id: "token",
          section: "platform",
          title: "Token endpoint and credentials",
          verdict: "fail",
          summary: (err as Error).message,
          fix: "fix what the message names; the endpoint checks need a token and were not run",
        },
      ],
    };
  }
  const findings: Finding[] = [];
  const lifetime = report.expiresInSeconds;
  const short = lifetime !== undefined && lifetime < 600;
  findings.push({
    id: "token",
    section: "platform",
    title: "Token endpoint and credentials",
    verdict: short ? "warn" : "pass",
    summary: `credentials accepted by ${report.where} in ${Math.round(report.latencyMs)} ms; tokens last ${lifetime ?? "?"} s`,
    ...(short
      ? { fix: "tokens this short are used, but cost a token request every half-life: ask the platform why" }
      : {}),
    details: { expiresInSeconds: lifetime, latencyMs: Math.round(report.latencyMs) },
  });
  if (report.serverDate) {
    // The client's own estimate (the daemon's too): the token answer's Date, corrected by half its round trip.
    const offset = api.clockOffset();
    const skewS = offset ? -offset.offsetMs / 1000 : Number.NaN;
    const bad = Number.isFinite(skewS) && Math.abs(skewS) > CLOCK_SKEW_WARN_SECONDS;
    findings.push({
      id: "clock",
      section: "platform",
      title: "Clock against the platform's",
      verdict: bad ? "warn" : "pass",
      summary: Number.isFinite(skewS)
        ? `this machine's clock is ${Math.abs(Math.round(skewS))} s ${skewS >= 0 ? "ahead of" : "behind"} the platform's (Date header)`
        : `the platform's Date header is unreadable (${JSON.stringify(report.serverDate)})`,
      ...(bad
        ? {
            fix: "synchronise this machine's clock (NTP, chrony; a container has its node's clock): the log tailers correct for the skew, the exporter's own timestamps do not",
          }
        : {}),
      details: { skewSeconds: Math.round(skewS) },
    });
  }
  return { findings, report };
}

/** Whether any answer of the checks said its endpoint is deprecated or sunset (Deprecation, Sunset headers). */
export function deprecationFinding(notices: readonly DeprecationNotice[]): Finding {
  const title = "Endpoints the platform says are going away";
  if (notices.length === 0)
    return {
      id: "deprecations",
      section: "platform",
      title,
      verdict: "pass",
      summary: "no answer carried a Deprecation or Sunset header",
    };
  return {
    id: "deprecations",
    section: "platform",
    title,
    verdict: "warn",
    summary: `deprecated or sunset: ${notices.map(describeNotice).join(", ")}`,
    fix: "nothing breaks before the sunset date; upgrade the exporter when a release reads the replacement (sitehost_exporter_api_endpoint_sunset_timestamp_seconds has the dates)",
    details: { endpoints: notices.map((n) => n.endpoint) },
  };
}

/** The scopes granted, against what the endpoint checks found: a 403 is a scope or role missing. */
export function scopesFinding(
  report: TokenReport | undefined,
  endpoints: readonly Finding[],
): Finding | undefined {
  if (!report) return undefined;
  const forbidden = endpoints.filter((f) => f.details?.status === 403);
  const granted = report.scopes?.join(", ") || "none listed";
  if (forbidden.length === 0) {
    return {
      id: "scopes",
      section: "platform",
      title: "Scopes granted against what the enabled collectors need",
      verdict: "pass",
      summary: `scopes: ${granted}; every endpoint in use answered (no 403)`,
      details: { scopes: report.scopes },
    };
  }
  const users = [...new Set(forbidden.flatMap((f) => (f.details?.usedBy as string[] | undefined) ?? []))];
  return {
    id: "scopes",
    section: "platform",
    title: "Scopes granted against what the enabled collectors need",
    verdict: "fail",
    summary: `scopes: ${granted}; refused (403): ${forbidden.map((f) => f.title).join(", ")}`,
    fix: `grant the API application the scope or role those endpoints need on the platform, or disable ${users.join(", ")}`,
    details: { scopes: report.scopes, forbidden: forbidden.map((f) => f.title) },
  };
}
