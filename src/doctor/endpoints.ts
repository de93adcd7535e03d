/**
 * Each endpoint the enabled collectors and log streams use, asked once about one site (or zone, or
 * record): its status, latency, and its answer compared with what the exporter expects. A site not
 * enrolled in git (422) and a record without SSL details (400) are counted facts, not failures.
 */
import type { ApiClient } from "../api/client.js";
import { ENDPOINTS, type EndpointName, type InputOf } from "../api/endpoints.js";
import { apiBaseHint } from "../api/failure.js";
import type { ProbeAnswer } from "../api/probe.js";
import { ROUTES } from "../routes.js";
import type { DnsRecord, Site, Zone } from "../api/schemas.js";
import { refusedStatus, trafficQuery } from "../collectors/trafficStartAt.js";
import type { Config } from "../config/schema.js";
import { filterSites } from "../discovery/filter.js";
import { schemaFindings, type SchemaFindings } from "./schema.js";
import { checkTrafficStartAt } from "./trafficStartAt.js";
import type { Finding, Verdict } from "./types.js";
import { endpointsInUse } from "./usage.js";

/** Records asked of list endpoints: enough to compare shapes, few enough to be cheap. */
const SAMPLE_PAGE = 10;

interface Target {
  site?: Site;
  zone?: Zone;
  record?: DnsRecord;
}

/** What to send to each endpoint, for the target found so far; undefined when there is nothing to ask about. */
function inputFor(name: EndpointName, t: Target): unknown {
  const site = t.site ? { id: t.site.id } : undefined;
  switch (name) {
    case "account":
    case "zones":
      return {};
    case "sites":
      return { page: 1, perPage: 100 } satisfies InputOf<"sites">;
    case "accountActivity":
      return { page: 1, perPage: SAMPLE_PAGE } satisfies InputOf<"accountActivity">;
    case "restores":
    case "gitHistory":
    case "siteActivity":
      return site && { ...site, page: 1, perPage: SAMPLE_PAGE };
    case "trafficMetrics":
      return site && { ...site, query: trafficQuery("phrase", Date.now()) };
    case "phpLogs":
    case "serverLogs":
      return site && { ...site, scrollId: null };
    case "zoneRecords":
      return t.zone && { zoneId: t.zone.id };
    case "recordSsl":
      return t.zone && t.record && { zoneId: t.zone.id, recordId: t.record.id };
    default:
      return site;
  }
}

/** Answers that are facts to count, not failures. */
function countedFact(name: EndpointName, status: number): string | undefined {
  if (name === "gitHistory" && status === 422)
    return "the site is not enrolled in the git integration (422): counted in sitehost_exporter_git_sites_not_enrolled, not a failure";
  if (name === "recordSsl" && status === 400)
    return "no SSL details for that record (400): such records publish no certificate series, not a failure";
  if (status === 404 && ROUTES[ENDPOINTS[name].route].template.startsWith("/sites/{id}/"))
    return "no such data for this site (404): the collector publishes nothing for it, not a failure";
  return undefined;
}

function schemaVerdict(s: SchemaFindings): { verdict: Verdict; summary: string; fix?: string } {
  const drift = Object.entries(s.drift).map(([field, n]) => `${field} (${n} of ${s.records})`);
  const problems = [
    s.unusable && `the answer does not fit: ${s.unusable}`,
    s.rejected > 0 && `${s.rejected} of ${s.records} records would be skipped: ${s.firstRejected}`,
    drift.length > 0 && `fields missing or unreadable: ${drift.join(", ")}`,
  ].filter((x): x is string => typeof x === "string");
  const notes = [
    s.otherCase.length > 0 && `fields in the other case (read all the same): ${s.otherCase.join(", ")}`,
  ].filter((x): x is string => typeof x === "string");
  if (problems.length === 0) {
    // Fields the exporter does not read are many and harmless (they are in the JSON output).
    return { verdict: "pass", summary: [`${s.records} record(s) as expected`, ...notes].join("; ") };
  }
  // Beside a missing field, a field the exporter does not know is likely its new name.
  if (s.unknown.length > 0)
    notes.push(`fields the exporter does not know (a rename?): ${s.unknown.join(", ")}`);
  return {
    verdict: "fail",
    summary: [...problems, ...notes].join("; "),
    fix: "the platform's answer has drifted from what the exporter reads: report it to the exporter's maintainers with this report (the exporter keeps what it can read meanwhile)",
  };
}

function statusFinding(name: EndpointName, users: string[], a: ProbeAnswer, apiUrl: string) {
  const { status } = a;
  const fact = countedFact(name, status);
  if (fact) return { verdict: "info" as const, summary: fact };
  const disable = `or disable what uses it (${users.join(", ")})`;
  if (status === 401)
    return {
      verdict: "fail" as const,
      summary: "HTTP 401: the token was refused",
      fix: `check the API application's access, ${disable}`,
    };
  if (status === 403)
    return {
      verdict: "fail" as const,
      summary: "HTTP 403: the API application lacks a scope or role this endpoint needs",
      fix: `grant the API application access to ${ROUTES[ENDPOINTS[name].route].template} on the platform, ${disable}`,
    };
  if (status === 429)
    return {
      verdict: "warn" as const,
      summary: "HTTP 429: rate limited while checking",
      fix: "lower api.maxRequestsPerSecond if this repeats",
    };
  if (status >= 500)
    return {
      verdict: "fail" as const,
      summary: `HTTP ${status}: the platform failed (after retries)`,
      fix: "try again later; if it persists, it is the platform's to fix",
    };
  // Judged by the start_at finding, which asks the other forms: it fails when none is taken.
  if (name === "trafficMetrics" && refusedStatus(status))
    return {
      verdict: "warn" as const,
      summary: `HTTP ${status}: the metrics endpoint refuses start_at ${JSON.stringify(trafficQuery("phrase", Date.now()).startAt)}`,
      fix: "see the traffic start_at finding: which other form the platform takes",
    };
  const hint = status === 404 ? apiBaseHint(apiUrl) : undefined;
  return {
    verdict: "fail" as const,
    summary: `HTTP ${status}`,
    fix: hint ?? `report it with this report, ${disable}`,
  };
}

async function checkOne(api: ApiClient, config: Config, name: EndpointName, users: string[], t: Target) {
  const template = ROUTES[ENDPOINTS[name].route].template;
  const id = `endpoint:${template}`;
  const title = `${ROUTES[ENDPOINTS[name].route].method} ${template}`;
  const input = inputFor(name, t);
  if (input === undefined) {
    return {
      finding: {
        id,
        section: "endpoints" as const,
        title,
        verdict: "info" as const,
        summary: "not asked: nothing to ask about (no site, zone or record found)",
        details: { usedBy: users },
      },
    };
  }
  let answer: ProbeAnswer;
  try {
    answer = await api.probe(name, input as never);
  } catch (err) {
    return {
      finding: {
        id,
        section: "endpoints" as const,
        title,
        verdict: "fail" as const,
        summary: (err as Error).message,
        fix: "see the message: it names the URL",
        details: { usedBy: users },
      },
    };
  }
  const details: Record<string, unknown> = {
    request: answer.where,
    status: answer.status,
    latencyMs: Math.round(answer.latencyMs),
    usedBy: users,
  };
  const verdict = await answerVerdict(name, users, answer, template, config.api.url, details);
  return { answer, finding: { id, section: "endpoints" as const, title, ...verdict, details } };
}

/** An answer's verdict: its status when not a success, else how its body fits the schema. */
async function answerVerdict(
  name: EndpointName,
  users: string[],
  answer: ProbeAnswer,
  template: string,
  apiUrl: string,
  details: Record<string, unknown>,
): Promise<Pick<Finding, "verdict" | "summary" | "fix">> {
  if (answer.status < 200 || answer.status >= 300) return statusFinding(name, users, answer, apiUrl);
  const schema = await schemaFindings(ENDPOINTS[name].decode, answer.json, template);
  details.schema = schema;
  const judged = schemaVerdict(schema);
  return { ...judged, summary: `${answer.status} in ${Math.round(answer.latencyMs)} ms; ${judged.summary}` };
}

/** The decoded items of a list answer (for the next targets). */
async function itemsOf<N extends EndpointName>(name: N, json: unknown): Promise<unknown[]> {
  try {
    const out = (await ENDPOINTS[name].decode(json, {
      endpoint: name,
      redact: (t) => t,
      reportRejected: () => undefined,
    })) as { items?: unknown[]; zone?: unknown };
    return out.items ?? [];
  } catch {
    return [];
  }
}

export interface EndpointChecks {
  findings: Finding[];
  answers: ProbeAnswer[];
  /** Sites the account has (the listing's total, before filters), when known. */
  siteCount?: number;
}

/** Ask each endpoint in use once, in an order that finds a site, a zone and an A record to ask about. */
export async function checkEndpoints(api: ApiClient, config: Config): Promise<EndpointChecks> {
  const inUse = endpointsInUse(config);
  const order: EndpointName[] = [
    "sites",
    ...[...inUse.keys()].filter((n) => n !== "sites" && n !== "zoneRecords" && n !== "recordSsl"),
  ];
  if (inUse.has("zoneRecords")) order.push("zoneRecords");
  if (inUse.has("recordSsl")) order.push("recordSsl");
  const t: Target = {};
  const out: EndpointChecks = { findings: [], answers: [] };
  for (const name of order) {
    const { finding, answer } = await checkOne(
      api,
      config,
      name,
      inUse.get(name) ?? ["collectors.inventory"],
      t,
    );
    out.findings.push(finding);
    if (name === "trafficMetrics" && t.site) {
      const startAt = await checkTrafficStartAt(api, t.site.id, answer);
      out.findings.push(startAt.finding);
      out.answers.push(...startAt.answers);
    }
    if (!answer || answer.status >= 300) continue;
    out.answers.push(answer);
    if (name === "sites") {
      const sites = (await itemsOf("sites", answer.json)) as Site[];
      const selected = filterSites(sites, config.sites);
      t.site = selected.find((s) => s.state === "live") ?? selected[0];
      const total = (answer.json as { page?: { totalItems?: unknown } } | null)?.page?.totalItems;
      out.siteCount = typeof total === "number" ? total : sites.length;
    } else if (name === "zones") {
      t.zone = ((await itemsOf("zones", answer.json)) as Zone[])[0];
    } else if (name === "zoneRecords") {
      const records = ((await itemsOf("zoneRecords", answer.json)) as DnsRecord[]).filter(
        (r) => r.type === "A",
      );
      t.record = records.find((r) => r.siteId === t.site?.id) ?? records[0];
    }
  }
  return out;
}
