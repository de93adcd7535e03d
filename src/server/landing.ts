export interface LandingInfo {
  version: string;
  sitesDiscovered: number;
  telemetryPath: string;
  collectors: Array<{
    name: string;
    enabled: boolean;
    schedule: string;
    lastRun?: { startedAt: Date; durationSeconds: number; result: "success" | "partial" | "failure" };
  }>;
  /** The API request plan against the budget. */
  plan?: {
    sources: Array<{ source: string; requestsPerSecond: number; measuredRequestsPerSecond?: number }>;
    total: number;
    budget: number;
    fits: boolean;
    /** Selected sites, for the cost per site-hour. */
    sites?: number;
  };
}

/** The page's only style; the Content-Security-Policy allows exactly this text by its hash. */
export const LANDING_STYLE =
  "body{font-family:system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}.warn{color:#a00}";

function esc(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string,
  );
}

function renderPlan(plan: NonNullable<LandingInfo["plan"]>): string {
  const sites = Math.max(1, plan.sites ?? 0);
  const siteHour = (perSecond: number | undefined) =>
    perSecond === undefined ? "" : ((perSecond * 3600) / sites).toFixed(1);
  const rows = plan.sources
    .map(
      (s) =>
        `<tr><td>${esc(s.source)}</td><td>${s.requestsPerSecond.toFixed(2)}</td><td>${siteHour(s.requestsPerSecond)}</td><td>${siteHour(s.measuredRequestsPerSecond)}</td></tr>`,
    )
    .join("\n");
  const verdict = plan.fits
    ? `<p>Planned ${plan.total.toFixed(1)} requests/s of a budget of ${plan.budget} (api.maxRequestsPerSecond).</p>`
    : `<p class="warn"><strong>Over budget:</strong> the schedules and log streams plan ${plan.total.toFixed(1)} requests/s, ` +
      `the budget (api.maxRequestsPerSecond) is ${plan.budget}. Collector runs stretch and are skipped, and logs are read late. ` +
      `Poll traffic less often (collectors.traffic.schedule, collectors.traffic.maxInterval), raise the budget, slow the other schedules down, split the sites with sites.shard, or lengthen logs.maxPollInterval.</p>`;
  return `<h2>API request budget</h2>
${verdict}
<table><thead><tr><th>source</th><th>planned requests/s</th><th>planned per site-hour</th><th>measured per site-hour (last 30 minutes; a slower schedule: one period of it)</th></tr></thead>
<tbody>
${rows}
</tbody></table>`;
}

export function renderLanding(info: LandingInfo): string {
  const rows = info.collectors
    .map((c) => {
      const run = c.lastRun;
      return `<tr><td>${esc(c.name)}</td><td>${c.enabled ? "yes" : "no"}</td><td><code>${esc(c.schedule)}</code></td><td>${
        run ? esc(run.startedAt.toISOString()) : "not yet"
      }</td><td>${run ? run.durationSeconds.toFixed(2) + " s" : ""}</td><td>${run ? esc(run.result) : ""}</td></tr>`;
    })
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>sitehost-exporter</title>
<style>${LANDING_STYLE}</style>
</head><body>
<h1>sitehost-exporter</h1>
<p>Version ${esc(info.version)} &middot; ${info.sitesDiscovered} sites discovered</p>
<ul>
<li><a href="${esc(info.telemetryPath)}">Metrics</a></li>
<li><a href="/-/healthy">Health</a></li>
<li><a href="/-/ready">Readiness</a></li>
</ul>
<h2>Collectors</h2>
<table><thead><tr><th>collector</th><th>enabled</th><th>schedule</th><th>last run</th><th>duration</th><th>result</th></tr></thead>
<tbody>
${rows}
</tbody></table>
${info.plan ? renderPlan(info.plan) : ""}
</body></html>
`;
}
