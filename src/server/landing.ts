/**
 * The landing page is a status page: what is wrong first (each problem with its reason, since when
 * and its runbook entry), then every part at a glance, healthy ones quiet. Plain HTML with one inline
 * style (allowed by its hash in the Content-Security-Policy), no script, nothing loaded from
 * elsewhere; it reloads itself every 30 seconds. `/-/status` is the same as JSON.
 */
import type { Health, Part, StatusReport } from "./status.js";

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

function since(at: string | undefined): string {
  return at ? ` <small>since ${esc(at)}</small>` : "";
}

/** One row of the overview: a part's name, its state, what it says and its last error. */
function row(name: string, p: Part, extra = ""): string {
  const error = p.lastError ? `<br><small>${esc(p.lastError)}</small>` : "";
  return `<tr><td>${esc(name)}</td><td>${state(p.health)}</td><td>${esc(p.summary)}${extra}${error}${since(p.since)}</td></tr>`;
}

function problems(r: StatusReport): string {
  if (r.problems.length === 0) return `<p class="state h-ok">Everything works.</p>`;
  return r.problems
    .map(
      (p) =>
        `<div class="problem h-${p.health}">${state(p.health)} <strong>${esc(p.subject)}</strong>` +
        `<p>${esc(p.reason)}</p>` +
        `<p><small>${p.since ? `since ${esc(p.since)}` : ""}${p.runbook ? `${p.since ? " &middot; " : ""}<a href="${esc(p.runbook)}">runbook</a>` : ""}</small></p></div>`,
    )
    .join("\n");
}

function table(head: string[], rows: string[]): string {
  if (rows.length === 0) return `<p class="quiet">none</p>`;
  return `<table><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead><tbody>\n${rows.join("\n")}\n</tbody></table>`;
}

export function renderLanding(r: StatusReport): string {
  const ready = r.ready.ready
    ? `ready${r.ready.reason ? ` (${esc(r.ready.reason)})` : ""}`
    : `not ready: ${esc(r.ready.reason ?? "starting")}`;
  const overview = [
    row("API access", r.api, ` <small>(${esc(r.api.url)})</small>`),
    row("Clock", r.clock),
    row("Site discovery", r.discovery),
    row("Log shipping", r.logs, r.logs.endpoint ? ` <small>(${esc(r.logs.endpoint)})</small>` : ""),
    row("Log streams", r.logStreams),
    row("Checkpoint directory", r.checkpointDir),
    row("Checkpoint lock", r.lock, ` <small>(shard ${esc(r.shard)})</small>`),
    row("Request budget", r.budget),
    row(
      "Webhooks",
      r.webhooks,
      r.webhooks.queued !== undefined ? ` <small>(${r.webhooks.queued} queued)</small>` : "",
    ),
  ];
  const collectors = r.collectors.map(
    (c) =>
      `<tr><td>${esc(c.name)}</td><td>${state(c.health)}</td><td><code>${esc(c.schedule)}</code></td><td>${c.lastRun ? esc(c.lastRun) : "not yet"}${c.result ? ` <small>${esc(c.result)}</small>` : ""}</td><td>${esc(c.summary)}${c.lastError ? `<br><small>${esc(c.lastError)}</small>` : ""}${since(c.since)}</td></tr>`,
  );
  const streams = r.logs.streams.map((s) => row(s.stream, s));
  const stalled = r.logStreams.first.map(
    (s) =>
      `<tr><td>${esc(s.site)}${s.siteId ? ` <small>(${s.siteId})</small>` : ""}</td><td>${esc(s.stream)}</td><td><code>${esc(s.reason)}</code></td><td>${esc(s.since)}</td><td><small>${esc(s.detail)}</small></td></tr>`,
  );
  const more = r.logStreams.stalled - stalled.length;
  const plan = (r.budget.sources ?? []).map(
    (s) =>
      `<tr><td>${esc(s.source)}</td><td>${s.requestsPerSecond.toFixed(3)}</td><td>${s.perSiteHour.toFixed(1)}</td><td>${s.measuredPerSiteHour?.toFixed(1) ?? ""}</td></tr>`,
  );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="30">
<title>sitehost-exporter: ${WORDS[r.health]}</title>
<style>${LANDING_STYLE}</style>
</head><body>
<h1>sitehost-exporter ${state(r.health)}</h1>
<p class="quiet">Version ${esc(r.version)} &middot; ${r.discovery.sites} sites &middot; ${ready} &middot; ${esc(r.generatedAt)}</p>
<nav><a href="${esc(r.telemetryPath)}">Metrics</a><a href="/-/status">Status (JSON)</a><a href="/-/ready">Readiness</a><a href="/-/healthy">Health</a></nav>
<h2>What is wrong</h2>
${problems(r)}
<h2>Overview</h2>
${table(["part", "state", "details"], overview)}
<h2>Collectors</h2>
${table(["collector", "state", "schedule", "last run", "details"], collectors)}
<h2>Log shipping by stream</h2>
${table(["stream", "state", "details"], streams)}
<h2>Stalled log streams</h2>
${table(["site", "stream", "reason", "since", "details"], stalled)}${more > 0 ? `\n<p class="quiet">and ${more} more (counted by reason above)</p>` : ""}
<h2>Request plan</h2>
${table(["source", "planned requests/s", "planned per site-hour", "measured per site-hour (last 30 minutes; a slower schedule: one period of it)"], plan)}
</body></html>
`;
}
