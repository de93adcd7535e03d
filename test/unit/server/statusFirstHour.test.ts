/**
 * The status page in the first hour: one error several parts fail with is one problem with its count
 * (said once on the page), times read "… UTC (3 min ago)", a request plan that has only measured the
 * first runs says so instead of comparing, and the budget says how many sites it covers.
 */
import { describe, expect, it } from "vitest";
import { summarizeStalls } from "../../../src/logs/stall.js";
import type { RequestPlan } from "../../../src/scheduling/plan.js";
import type { CollectorStatus } from "../../../src/scheduling/runner.js";
import { renderLanding } from "../../../src/server/landing.js";
import { statusOf } from "./helpers.js";

const NOW = Date.UTC(2026, 0, 31, 12, 5, 0);
const AT = new Date(NOW - 3 * 60_000);
const DENIED =
  "POST https://api.example/oauth/token: HTTP 401 Unauthorized: the platform refuses the client credentials (api.clientId, api.clientSecret)";

function collector(over: Partial<CollectorStatus> & Pick<CollectorStatus, "name">): CollectorStatus {
  return { enabled: true, schedule: "0 * * * * *", running: false, completedRuns: 1, ...over };
}

const DISCOVERED = collector({
  name: "inventory",
  lastRun: { startedAt: AT, durationSeconds: 0.4, result: "success" },
  lastSuccessAt: AT,
});

function failed(name: CollectorStatus["name"], message: string, at = AT): CollectorStatus {
  return collector({
    name,
    lastRun: { startedAt: at, durationSeconds: 0.1, result: "failure" },
    lastError: { reason: "http_401", message, at },
  });
}

function refusedToken() {
  const stalls = summarizeStalls([
    {
      site: { id: 7, name: "site-7" },
      stream: "php",
      stall: { reason: "read_failures", sinceMs: NOW - 4 * 60_000, detail: DENIED },
    },
  ]);
  return statusOf({
    auth: { ok: false, lastError: DENIED, at: NOW - 5 * 60_000 },
    logs: { enabled: true, shipping: true, streams: ["php"] },
    active: {
      sitesDiscovered: 1,
      collectors: [DISCOVERED, failed("backups", DENIED), failed("domains", DENIED)],
      logStalls: stalls,
    },
  });
}

describe("one error, one problem", () => {
  it("a refused token: API access, two collectors and the log streams are one problem with a count of 4", () => {
    const s = refusedToken();
    expect(s.problems).toHaveLength(1);
    expect(s.problems[0]).toMatchObject({
      subject: "API access",
      health: "critical",
      count: 4,
      subjects: ["API access", "Collector backups", "Collector domains", "Log streams stalled"],
      error: DENIED,
      reason: expect.stringContaining(DENIED),
      // The earliest of the parts' times.
      since: new Date(NOW - 5 * 60_000).toISOString(),
      runbook: expect.stringMatching(/#sitehostexporterapiauthfailing$/),
    });
    // Each part still says its own error in JSON.
    expect(s.collectors[0]?.lastError).toBe(`http_401: ${DENIED}`);
    expect(s.api.lastError).toBe(DENIED);
  });

  it("the page writes the error once, with the count, and each part's row points to it", () => {
    const page = renderLanding(refusedToken());
    const escaped = DENIED.replace(/'/g, "&#39;");
    expect(page.split(escaped)).toHaveLength(2);
    expect(page).toContain(
      "<strong>API access</strong> &times;4 <small>(4 parts: API access, Collector backups",
    );
    expect(page).toContain("the error under What is wrong (API access &times;4)");
  });

  it("different errors stay separate problems, each with a count of 1", () => {
    const s = statusOf({
      active: {
        sitesDiscovered: 1,
        collectors: [DISCOVERED, failed("backups", "HTTP 500"), failed("domains", "HTTP 503")],
      },
    });
    expect(s.problems.map((p) => [p.subject, p.count])).toEqual([
      ["Collector backups", 1],
      ["Collector domains", 1],
    ]);
    expect(s.problems[0]).not.toHaveProperty("subjects");
    const page = renderLanding(s);
    expect(page).toContain("HTTP 500");
    expect(page).toContain("HTTP 503");
    expect(page).not.toContain("&times;");
  });
});

describe("times on the page", () => {
  it("each absolute time in UTC with how long ago, from the page's own time", () => {
    const page = renderLanding(refusedToken());
    expect(page).toContain("since 2026-01-31 12:00:00 UTC (5 min ago)");
    // The collectors' last run.
    expect(page).toContain("<td>2026-01-31 12:02:00 UTC (3 min ago) <small>failure</small></td>");
    // The stalled stream's since.
    expect(page).toContain("<td>2026-01-31 12:01:00 UTC (4 min ago)</td>");
    // The page's own time, without a distance to itself.
    expect(page).toContain("&middot; 2026-01-31 12:05:00 UTC</p>");
  });
});

function plan(over: Partial<RequestPlan> & Pick<RequestPlan, "sources">): RequestPlan {
  const total = over.sources.reduce((sum, s) => sum + s.requestsPerSecond, 0);
  return { total, budget: 20, fits: total <= 20, sites: 100, ...over };
}

describe("the request plan", () => {
  it("a collector measured only over its first runs: 'starting (first runs)' with why, not a comparison", () => {
    const s = statusOf({
      active: {
        sitesDiscovered: 100,
        collectors: [DISCOVERED],
        plan: plan({
          sources: [
            // Planned 0.2 per site-hour; its first run read every site: 15 so far.
            {
              source: "backups",
              requestsPerSecond: 100 / 18_000,
              measuredRequestsPerSecond: 100 / 240,
              measuredStarting: true,
            },
            { source: "domains", requestsPerSecond: 0.1, measuredRequestsPerSecond: 0.1 },
          ],
        }),
      },
    });
    expect(s.budget.sources?.[0]).toMatchObject({
      source: "backups",
      perSiteHour: 0.2,
      measuredPerSiteHour: 15,
      measuredStarting: true,
    });
    expect(s.budget.sources?.[1]).not.toHaveProperty("measuredStarting");
    const page = renderLanding(s);
    expect(page).toContain("<td>starting (first runs) <small>15.0 so far</small></td>");
    expect(page).toContain("has not been measured over a whole period of its schedule");
    // At steady state, the measurement as it is.
    expect(page).toContain("<td>domains</td><td>0.100</td><td>3.6</td><td>3.6</td>");
  });

  it("while first runs are pending: which, at most how many requests, when complete, and the log streams after them", () => {
    const s = statusOf({
      active: {
        sitesDiscovered: 1000,
        collectors: [DISCOVERED],
        plan: plan({ sources: [{ source: "backups", requestsPerSecond: 0.8 }], sites: 1000 }),
        startup: [
          { source: "backups", requests: 3000, withinSeconds: 300 },
          { source: "certificates", requests: 2800, withinSeconds: 300 },
          { source: "logs", requests: 3001, withinSeconds: 20 },
        ],
      },
    });
    expect(s.budget.firstPicture).toEqual({
      collectorsPending: ["backups", "certificates"],
      requests: 5800,
      expectedInSeconds: 290,
      logStreamsUnread: 3001,
    });
    expect(s.budget.summary).toContain(
      "first runs of backups, certificates pending (at most 5800 requests, complete in about 5 minutes at the budget, then the first reads of 3001 log streams)",
    );
    expect(renderLanding(s)).toContain("first runs of backups, certificates pending");
  });

  it("at steady state: no start-up note, the measured cost beside the plan", () => {
    const s = statusOf({
      active: {
        sitesDiscovered: 100,
        collectors: [DISCOVERED],
        plan: plan({
          sources: [{ source: "backups", requestsPerSecond: 0.1, measuredRequestsPerSecond: 0.11 }],
        }),
      },
    });
    const page = renderLanding(s);
    expect(page).toContain("<td>backups</td><td>0.100</td><td>3.6</td><td>4.0</td>");
    expect(page).not.toContain("first runs");
  });
});

describe("what the budget covers", () => {
  it("far from it: OK, and how many sites the budget covers at this mix", () => {
    const s = statusOf({
      active: {
        sitesDiscovered: 100,
        collectors: [DISCOVERED],
        plan: plan({
          sources: [
            { source: "inventory", requestsPerSecond: 0.5 },
            { source: "traffic", requestsPerSecond: 1.5 },
          ],
        }),
      },
    });
    // 1.5 requests/s for 100 sites: 0.015 a site; (20 - 0.5) / 0.015 = 1300.
    expect(s.budget).toMatchObject({ health: "ok", sitesCovered: 1300 });
    expect(s.budget.coverage).toBe(
      "the budget of 20 requests/s (api.maxRequestsPerSecond) covers about 1300 sites at this account's current mix (100 discovered)",
    );
    expect(s.problems).toEqual([]);
    expect(renderLanding(s)).toContain(
      "<p>The budget of 20 requests/s (api.maxRequestsPerSecond) covers about 1300 sites",
    );
  });

  it("over 80 % of it: a warning naming the ways to make room", () => {
    const s = statusOf({
      shard: { index: 0, count: 1 },
      active: {
        sitesDiscovered: 1100,
        collectors: [DISCOVERED],
        plan: plan({
          sites: 1100,
          sources: [
            { source: "inventory", requestsPerSecond: 0.5 },
            { source: "traffic", requestsPerSecond: 16.5 },
          ],
        }),
      },
    });
    expect(s.budget.health).toBe("warning");
    expect(s.budget.sitesCovered).toBe(1300);
    for (const way of [
      "raise api.maxRequestsPerSecond",
      "collectors.<name>.schedule",
      "sites.shard",
      "split the account",
    ])
      expect(s.budget.coverage).toContain(way);
    expect(s.problems[0]).toMatchObject({
      subject: "Request budget",
      reason: expect.stringContaining("over 80 % of it"),
    });
    // Said under What is wrong and in the overview, not a third time above the plan.
    const page = renderLanding(s);
    expect(page.split("covers about 1300 sites")).toHaveLength(3);
  });

  it("no site known yet: nothing claimed about coverage", () => {
    const s = statusOf({
      active: {
        sitesDiscovered: 0,
        collectors: [DISCOVERED],
        plan: plan({ sites: 0, sources: [{ source: "inventory", requestsPerSecond: 0.01 }] }),
      },
    });
    expect(s.budget.health).toBe("ok");
    expect(s.budget).not.toHaveProperty("coverage");
  });
});
