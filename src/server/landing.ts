/**
 * The landing page is a status page: what is wrong first (each problem with its reason, since when
 * and its runbook entry), then every part at a glance, healthy ones quiet. Plain HTML with one inline
 * style (allowed by its hash in the Content-Security-Policy), no script, nothing loaded from
 * elsewhere; it reloads itself every 30 seconds. `/-/status` is the same as JSON. Times show in UTC
 * with how long ago (or how soon) from the page's own time, so the page needs no script; an error
 * several parts share is written once, under "What is wrong", with their count.
 */
import type { Health, Part, Problem, StatusReport } from "./status.js";
import { errorKey } from "./statusProblems.js";
import { utcTime, utcWithRelative } from "../util/relativeTime.js";

/** The page's only style; the Content-Security-Policy allows exactly this text by its hash. */
export const LANDING_STYLE = [
  "body{font-family:system-ui,sans-serif;margin:1.5em 2em;color:#222;max-width:75em}",
  "h1{margin:0 0 .2em}h2{margin:1.4em 0 .5em;font-size:1.15em}",
  "table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:5px 8px;text-align:left;vertical-align:top}",
  "th{font-weight:600;color:#555}code{font-size:.95em}small,.quiet{color:#666}",
  ".state{display:inline-block;min-width:5.5em;padding:1px 6px;border-radius:3px;font-size:.85em;font-weight:600;text-align:center}",
  ".h-ok{background:#e3f4e6;color:#1b6b2a}.h-warning{background:#fff1cc;color:#7a5200}.h-critical{background:#fde2e1;color:#a3120b}",
  ".h-off{background:#eee;color:#666}.h-pending{background:#e6eef8;color:#2b4f7a}",
  ".problem{border-left:6px solid;padding:.6em .9em;margin:.5em 0;border-radius:3px}",
  ".problem.h-warning{border-color:#e0a800}.problem.h-critical{border-color:#d93025}",
  ".problem p{margin:.25em 0;color:#222}nav a{margin-right:1em}",
].join("");

function esc(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string,
  );
}

const WORDS: Record<Health, string> = {
  ok: "OK",
  warning: "WARNING",
  critical: "FAILING",
  off: "off",
  pending: "pending",
};

function state(health: Health): string {
  return `<span class="state h-${health}">${WORDS[health]}</span>`;
}

/** What a render needs besides the report: its time, and the errors written once under "What is wrong". */
interface Page {
  nowMs: number;
  shared: ReadonlyMap<string, Problem>;
}

/** An ISO time as "2026-11-29 06:40:12 UTC (3 min ago)". */
function time(at: string, page: Page): string {
  return esc(utcWithRelative(at, page.nowMs));
}

function since(at: string | undefined, page: Page): string {
  return at ? ` <small>since ${time(at, page)}</small>` : "";
}

/** An error as written, or, when several parts share it, where it is written. */
function errorText(text: string, page: Page): string {
  const shared = page.shared.get(errorKey(text));
  return shared ? `the error under What is wrong (${esc(shared.subject)} &times;${shared.count})` : esc(text);
}

/** A part's last error, on a line of its own. */
function lastError(text: string | undefined, page: Page): string {
  return text ? `<br><small>${errorText(text, page)}</small>` : "";
}

/** One row of the overview: a part's name, its state, what it says and its last error. */
function row(name: string, p: Part, page: Page, extra = ""): string {
  return `<tr><td>${esc(name)}</td><td>${state(p.health)}</td><td>${esc(p.summary)}${extra}${lastError(p.lastError, page)}${since(p.since, page)}</td></tr>`;
}

function problems(r: StatusReport, page: Page): string {
  if (r.problems.length === 0) return `<p class="state h-ok">Everything works.</p>`;
  return r.problems
    .map((p) => {
      const count =
        p.count > 1
          ? ` &times;${p.count} <small>(${p.count} parts: ${esc((p.subjects ?? []).join(", "))})</small>`
          : "";
      const when = p.since ? `since ${time(p.since, page)}` : "";
      const runbook = p.runbook ? `${when ? " &middot; " : ""}<a href="${esc(p.runbook)}">runbook</a>` : "";
      return (
        `<div class="problem h-${p.health}">${state(p.health)} <strong>${esc(p.subject)}</strong>${count}` +
        `<p>${esc(p.reason)}</p><p><small>${when}${runbook}</small></p></div>`
      );
    })
    .join("\n");
}

/** A source's measured cost per site-hour; while it holds only the first runs, said so instead. */
function measured(s: NonNullable<StatusReport["budget"]["sources"]>[number]): string {
  if (s.measuredPerSiteHour === undefined) return "";
  if (s.measuredStarting)
    return `starting (first runs) <small>${s.measuredPerSiteHour.toFixed(1)} so far</small>`;
  return s.measuredPerSiteHour.toFixed(1);
}

const STARTING_NOTE =
  "starting (first runs): the source has not been measured over a whole period of its schedule (or the first 30 minutes) yet; " +
  "what it took so far holds its first runs, which read every site at once, so it reads high. Compare with the plan once a whole period has passed.";

function table(head: string[], rows: string[]): string {
  if (rows.length === 0) return `<p class="quiet">none</p>`;
  return `<table><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead><tbody>\n${rows.join("\n")}\n</tbody></table>`;
}

export function renderLanding(r: StatusReport): string {
  const nowMs = Date.parse(r.generatedAt);
  const shared = new Map<string, Problem>();
  for (const p of r.problems) if (p.error !== undefined && p.count > 1) shared.set(p.error, p);
  const page: Page = { nowMs: Number.isNaN(nowMs) ? Date.now() : nowMs, shared };
  const ready = r.ready.ready
    ? `ready${r.ready.reason ? ` (${esc(r.ready.reason)})` : ""}`
    : `not ready: ${esc(r.ready.reason ?? "starting")}`;
  const overview = [
    row("API access", r.api, page, ` <small>(${esc(r.api.url)})</small>`),
    row("Clock", r.clock, page),
    row("API endpoints", r.apiEndpoints, page),
    row("Site discovery", r.discovery, page),
    row("Log shipping", r.logs, page, r.logs.endpoint ? ` <small>(${esc(r.logs.endpoint)})</small>` : ""),
    row("Log streams", r.logStreams, page),
    row("Checkpoint directory", r.checkpointDir, page),
    row("Checkpoint lock", r.lock, page, ` <small>(shard ${esc(r.shard)})</small>`),
    row("Request budget", r.budget, page),
    row(
      "Webhooks",
      r.webhooks,
      page,
      r.webhooks.queued !== undefined ? ` <small>(${r.webhooks.queued} queued)</small>` : "",
    ),
  ];
  const collectors = r.collectors.map(
    (c) =>
      `<tr><td>${esc(c.name)}</td><td>${state(c.health)}</td><td><code>${esc(c.schedule)}</code></td><td>${c.lastRun ? time(c.lastRun, page) : "not yet"}${c.result ? ` <small>${esc(c.result)}</small>` : ""}</td><td>${esc(c.summary)}${lastError(c.lastError, page)}${since(c.since, page)}</td></tr>`,
  );
  const streams = r.logs.streams.map((s) => row(s.stream, s, page));
  const stalled = r.logStreams.first.map(
    (s) =>
      `<tr><td>${esc(s.site)}${s.siteId ? ` <small>(${s.siteId})</small>` : ""}</td><td>${esc(s.stream)}</td><td><code>${esc(s.reason)}</code></td><td>${time(s.since, page)}</td><td><small>${errorText(s.detail, page)}</small></td></tr>`,
  );
  const more = r.logStreams.stalled - stalled.length;
  const plan = (r.budget.sources ?? []).map(
    (s) =>
      `<tr><td>${esc(s.source)}</td><td>${s.requestsPerSecond.toFixed(3)}</td><td>${s.perSiteHour.toFixed(1)}</td><td>${measured(s)}</td></tr>`,
  );
  const starting = (r.budget.sources ?? []).some((s) => s.measuredStarting);
  // What the budget covers, unless the budget's own summary (shown above) already says it.
  const coverage =
    r.budget.coverage && !r.budget.summary.includes(r.budget.coverage) ? r.budget.coverage : "";
  const budgetNotes = [
    coverage ? `<p>${esc(coverage.charAt(0).toUpperCase() + coverage.slice(1))}</p>` : "",
    starting ? `<p class="quiet"><small>${esc(STARTING_NOTE)}</small></p>` : "",
  ].join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="30">
<title>sitehost-exporter: ${WORDS[r.health]}</title>
<style>${LANDING_STYLE}</style>
</head><body>
<h1>sitehost-exporter ${state(r.health)}</h1>
<p class="quiet">Version ${esc(r.version)} &middot; ${r.discovery.sites} sites &middot; ${ready} &middot; ${esc(utcTime(r.generatedAt))}</p>
<nav><a href="${esc(r.telemetryPath)}">Metrics</a><a href="/-/status">Status (JSON)</a><a href="/-/ready">Readiness</a><a href="/-/healthy">Health</a></nav>
<h2>What is wrong</h2>
${problems(r, page)}
<h2>Overview</h2>
${table(["part", "state", "details"], overview)}
<h2>Collectors</h2>
${table(["collector", "state", "schedule", "last run", "details"], collectors)}
<h2>Log shipping by stream</h2>
${table(["stream", "state", "details"], streams)}
<h2>Stalled log streams</h2>
${table(["site", "stream", "reason", "since", "details"], stalled)}${more > 0 ? `\n<p class="quiet">and ${more} more (counted by reason above)</p>` : ""}
<h2>Request plan</h2>
${budgetNotes}
${table(["source", "planned requests/s", "planned per site-hour", "measured per site-hour (last 30 minutes; a slower schedule: one period of it)"], plan)}
</body></html>
`;
}
