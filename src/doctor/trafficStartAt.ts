/**
 * The traffic request's `start_at`, checked against the live API: whether the platform takes the form
 * the collector sends first and answers a window of about an hour (every period is counted from an
 * answer that covers the time since the last one), and when it refuses it, which other form it takes
 * (the collector moves to it by itself).
 */
import type { ApiClient } from "../api/client.js";
import { ENDPOINTS } from "../api/endpoints.js";
import type { ProbeAnswer } from "../api/probe.js";
import type { MetricsResult } from "../api/schemas.js";
import {
  refusedStatus,
  START_AT_FORM_NAMES,
  START_AT_FORMS,
  trafficQuery,
  type StartAtForm,
} from "../collectors/trafficStartAt.js";
import type { Finding } from "./types.js";

/** A window shorter than this loses periods of a site asked every collectors.traffic.maxInterval (up to 45 m). */
const SHORTEST_WINDOW_SECONDS = 55 * 60;

const ok = (status: number) => status >= 200 && status < 300;

async function windowOf(answer: ProbeAnswer): Promise<number | undefined> {
  try {
    const result = (await ENDPOINTS.trafficMetrics.decode(answer.json, {
      endpoint: "trafficMetrics",
      redact: (t) => t,
      reportRejected: () => undefined,
    })) as MetricsResult;
    const { startAt, endAt } = result.search ?? {};
    if (typeof startAt !== "number" || typeof endAt !== "number") return undefined;
    // Epoch seconds or milliseconds, as the periods.
    const scale = endAt > 1e11 ? 1000 : 1;
    return (endAt - startAt) / scale;
  } catch {
    return undefined;
  }
}

function finding(
  verdict: Finding["verdict"],
  summary: string,
  fix?: string,
  details?: Record<string, unknown>,
): Finding {
  return {
    id: "traffic-start-at",
    section: "endpoints",
    title: "Traffic start_at form and window",
    verdict,
    summary,
    ...(fix ? { fix } : {}),
    ...(details ? { details } : {}),
  };
}

/** What the window of an accepted form says. */
async function judgeWindow(
  form: StartAtForm,
  answer: ProbeAnswer,
  movedFrom?: StartAtForm,
): Promise<Finding> {
  const sent = JSON.stringify(START_AT_FORMS[form](Date.now()));
  const seconds = await windowOf(answer);
  const moved = movedFrom
    ? `the platform refuses start_at ${JSON.stringify(START_AT_FORMS[movedFrom](Date.now()))} but takes ${sent}; the traffic collector moves to it by itself (sitehost_exporter_traffic_start_at_form{form="${form}"})`
    : `start_at ${sent} is taken`;
  const details = { form, ...(seconds === undefined ? {} : { windowSeconds: Math.round(seconds) }) };
  if (seconds === undefined)
    return finding(
      "warn",
      `${moved}; the answer does not say its window (search.startAt, endAt)`,
      "report it with this report: the traffic counters rely on the window",
      details,
    );
  if (seconds < SHORTEST_WINDOW_SECONDS)
    return finding(
      "warn",
      `${moved}, but the answer covers ${Math.round(seconds / 60)} minutes, not an hour`,
      "lower collectors.traffic.maxInterval below that window less a few minutes, or report it: periods between two answers farther apart are counted as missed",
      details,
    );
  return finding(
    movedFrom ? "warn" : "pass",
    `${moved}; the answer covers ${Math.round(seconds / 60)} minutes`,
    movedFrom ? "nothing to do; report the form the platform takes" : undefined,
    details,
  );
}

/** The finding for `first`, the endpoint check's answer to the form sent first; other forms asked when refused. */
export async function checkTrafficStartAt(
  api: ApiClient,
  siteId: number,
  first: ProbeAnswer | undefined,
): Promise<{ finding: Finding; answers: ProbeAnswer[] }> {
  const [firstForm, ...others] = START_AT_FORM_NAMES as [StartAtForm, ...StartAtForm[]];
  if (!first)
    return { finding: finding("info", "not asked: the traffic request could not be made"), answers: [] };
  if (ok(first.status)) return { finding: await judgeWindow(firstForm, first), answers: [] };
  if (!refusedStatus(first.status))
    return {
      finding: finding("info", `not judged: the traffic request answered HTTP ${first.status}`),
      answers: [],
    };
  const answers: ProbeAnswer[] = [];
  for (const form of others) {
    const answer = await api.probe("trafficMetrics", { id: siteId, query: trafficQuery(form, Date.now()) });
    answers.push(answer);
    if (ok(answer.status)) return { finding: await judgeWindow(form, answer, firstForm), answers };
    if (!refusedStatus(answer.status)) break;
  }
  return {
    finding: finding(
      "fail",
      `the platform refuses every start_at form the exporter knows (${START_AT_FORM_NAMES.map((f) => JSON.stringify(START_AT_FORMS[f](Date.now()))).join(", ")})`,
      "disable collectors.traffic and report it with this report: the traffic collector cannot ask for the last hour",
    ),
    answers,
  };
}
