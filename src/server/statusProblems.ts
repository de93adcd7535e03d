/**
 * The status report's problems: each part that is not well, worst first, with its runbook entry;
 * parts that fail with the same error (a refused token fails API access, every collector and every
 * log stream alike) are one problem with a count, so the page says each error once.
 */
import { runbookUrl } from "../util/runbook.js";
import type { Health, Part, Problem, StatusReport } from "./statusTypes.js";

export const RANK: Record<Health, number> = { critical: 4, warning: 3, pending: 2, ok: 1, off: 0 };

/**
 * What makes two parts' errors the same: the text, without the short reason code a collector puts
 * first (`http_401: …`), and spaces trimmed.
 */
export function errorKey(lastError: string): string {
  return lastError.replace(/^[a-z][a-z0-9_]*: /, "").trim();
}

interface Raised extends Problem {
  key: string;
}

function raise(subject: string, p: Part, alert?: string): Raised | undefined {
  if (p.health !== "warning" && p.health !== "critical") return undefined;
  const reason = p.lastError ? `${p.summary}: ${p.lastError}` : p.summary;
  return {
    subject,
    health: p.health,
    reason,
    count: 1,
    ...(p.since ? { since: p.since } : {}),
    ...(alert ? { runbook: runbookUrl(alert) } : {}),
    key: p.lastError ? errorKey(p.lastError) : reason,
  };
}

/** Problems with the same error as one: the worst part's words, every part named, the earliest since. */
export function mergeProblems(raised: readonly Raised[]): Problem[] {
  const groups = new Map<string, Raised[]>();
  for (const p of raised) groups.set(p.key, [...(groups.get(p.key) ?? []), p]);
  return [...groups.values()].map((group) => {
    const [first, ...rest] = group as [Raised, ...Raised[]];
    const { key, ...problem } = first;
    if (rest.length === 0) return problem;
    const since = group
      .map((p) => p.since)
      .filter((s): s is string => s !== undefined)
      .sort()[0];
    return {
      ...problem,
      count: group.length,
      subjects: group.map((p) => p.subject),
      error: key,
      ...(since ? { since } : {}),
    };
  });
}

/** Each part that is not well, as a problem: worst first, with its runbook entry; one per error. */
export function problemsOf(r: Omit<StatusReport, "problems" | "health">): Problem[] {
  const raised = [
    raise("API access", r.api, "SitehostExporterApiAuthFailing"),
    raise("Clock", r.clock, "SitehostExporterClockSkewed"),
    raise("API endpoints going away", r.apiEndpoints),
    raise("Site discovery", r.discovery, "SitehostExporterDown"),
    ...r.collectors.map((c) => raise(`Collector ${c.name}`, c, "SitehostExporterCollectorStale")),
    raise(
      `Log shipping to ${r.logs.endpoint ?? "OTLP"}`,
      r.logs,
      r.logs.refusing ? "SitehostExporterLogExportsRefused" : "SitehostExporterLogExportFailing",
    ),
    raise("Log streams stalled", r.logStreams, "SitehostExporterLogStreamsStalled"),
    raise("Checkpoint directory", r.checkpointDir, "SitehostExporterCheckpointWritesFailing"),
    raise("Checkpoint lock", r.lock),
    raise("Request budget", r.budget, "SitehostExporterApiBudgetExceeded"),
    raise("Webhooks", r.webhooks),
  ].filter((p): p is Raised => p !== undefined);
  return mergeProblems(raised.sort((a, b) => RANK[b.health] - RANK[a.health]));
}
