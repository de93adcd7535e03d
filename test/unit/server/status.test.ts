/**
 * The status report a user reads in the first hour: each failing part says why and since when, the
 * worst first with its runbook entry; healthy and disabled parts raise no problem.
 */
import { describe, expect, it } from "vitest";
import { renderLanding } from "../../../src/server/landing.js";
import type { CollectorStatus } from "../../../src/scheduling/runner.js";
import { statusOf } from "./helpers.js";

const AT = new Date(Date.UTC(2026, 0, 31, 12, 0, 0));

function collector(over: Partial<CollectorStatus> & Pick<CollectorStatus, "name">): CollectorStatus {
  return { enabled: true, schedule: "0 * * * * *", running: false, completedRuns: 1, ...over };
}

const DISCOVERED = collector({
  name: "inventory",
  lastRun: { startedAt: AT, durationSeconds: 0.4, result: "success" },
  lastSuccessAt: AT,
});

describe("the status report", () => {
  it("a collector whose last run failed: a warning naming the collector, the reason and when", () => {
    const s = statusOf({
      active: {
        sitesDiscovered: 4,
        collectors: [
          DISCOVERED,
          collector({
            name: "backups",
            lastRun: { startedAt: AT, durationSeconds: 2, result: "failure" },
            lastError: {
              reason: "http_403",
              message: "GET https://api.example/v1/sites/7/backups: HTTP 403",
              at: AT,
            },
          }),
          collector({ name: "domains", lastRun: { startedAt: AT, durationSeconds: 1, result: "success" } }),
          collector({ name: "git", enabled: false }),
        ],
      },
    });
    expect(s.health).toBe("warning");
    expect(s.problems).toEqual([
      {
        subject: "Collector backups",
        count: 1,
        health: "warning",
        reason:
          "last run failed; its series keep their last values: http_403: GET https://api.example/v1/sites/7/backups: HTTP 403",
        since: "2026-01-31T12:00:00.000Z",
        runbook: expect.stringMatching(/runbook\.md#sitehostexportercollectorstale$/),
      },
    ]);
    expect(s.collectors.map((c) => [c.name, c.health])).toEqual([
      ["backups", "warning"],
      ["domains", "ok"],
      ["git", "off"],
    ]);
    expect(s.discovery).toMatchObject({ health: "ok", sites: 4 });
  });

  it("a checkpoint directory that takes no writes: critical, with the error, since when and the runbook", () => {
    const s = statusOf({
      logs: { enabled: true, shipping: true, streams: ["php"] },
      lock: { held: true, reason: "", dir: "/var/lib/sitehost" },
      volume: {
        writable: false,
        reason: "read_only",
        code: "EROFS",
        kind: "journal",
        path: "/var/lib/sitehost/journal/1.log",
        sinceMs: AT.getTime(),
        failures: 3,
        message:
          "cannot write the checkpoint journal /var/lib/sitehost/journal/1.log under logs.checkpointDir",
      },
    });
    expect(s.checkpointDir.health).toBe("critical");
    expect(s.problems[0]).toMatchObject({
      subject: "Checkpoint directory",
      health: "critical",
      reason: expect.stringContaining("log shipping paused"),
      since: "2026-01-31T12:00:00.000Z",
      runbook: expect.stringMatching(/#sitehostexportercheckpointwritesfailing$/),
    });
    expect(s.problems[0]?.reason).toContain("/var/lib/sitehost/journal/1.log under logs.checkpointDir");
    expect(renderLanding(s)).toContain("<strong>Checkpoint directory</strong>");
  });

  it("standing by: the lock's holder is the reason, not a problem, and nothing of the active parts is claimed", () => {
    const reason = "standby: the checkpoint lock on /data is held by exporter x (host node-a, pid 7)";
    const s = statusOf({
      logs: { enabled: true, shipping: true, streams: ["php"] },
      lock: { held: false, reason, dir: "/data" },
      volume: { writable: true },
      ready: { ready: false, reason },
    });
    // Standing by for another replica is how a pair works: said, not raised as a problem.
    expect(s.problems).toEqual([]);
    expect(s.lock).toEqual({ health: "pending", summary: reason });
    expect(s.discovery).toMatchObject({ health: "off", summary: "standing by" });
    expect(s.collectors).toEqual([]);
    expect(renderLanding(s)).toContain(`not ready: ${reason}`);
  });

  it("over the request budget: the planner's ways out, and the cost per site-hour by source", () => {
    const s = statusOf({
      active: {
        sitesDiscovered: 100,
        collectors: [DISCOVERED],
        plan: {
          sources: [
            { source: "traffic", requestsPerSecond: 25, measuredRequestsPerSecond: 20 },
            { source: "logs", requestsPerSecond: 5 },
          ],
          total: 30,
          budget: 20,
          fits: false,
          sites: 100,
        },
        budgetAdvice: "the schedules plan 30.0 API requests/s but the budget is 20. Ways out: …",
      },
    });
    expect(s.budget).toMatchObject({
      health: "warning",
      plannedRequestsPerSecond: 30,
      budgetRequestsPerSecond: 20,
      sources: [
        { source: "traffic", requestsPerSecond: 25, perSiteHour: 900, measuredPerSiteHour: 720 },
        { source: "logs", requestsPerSecond: 5, perSiteHour: 180 },
      ],
    });
    expect(s.problems[0]).toMatchObject({
      subject: "Request budget",
      reason: "the schedules plan 30.0 API requests/s but the budget is 20. Ways out: …",
      runbook: expect.stringMatching(/#sitehostexporterapibudgetexceeded$/),
    });
  });

  it("logs read but not shipped (logs.ship: false): no claim about an OTLP endpoint", () => {
    const s = statusOf({
      logs: { enabled: true, shipping: false, streams: ["php"] },
      export: {
        endpoint: "http://localhost:4318/v1/logs",
        state: "ok",
        lastSuccessMs: AT.getTime(),
        lasting: false,
        streams: { php: { lastSuccessMs: AT.getTime() } },
      },
      webhooks: { path: "/webhook", accepting: true, queued: undefined },
    });
    expect(s.logs).toEqual({
      health: "off",
      summary: "logs are read and counted, not shipped (logs.ship: false)",
      streams: [],
    });
    expect(renderLanding(s)).not.toContain("localhost:4318");
  });

  it("an OTLP endpoint that refuses every export: a problem with the endpoint and likely cause, linking its own runbook entry, on the page too", () => {
    const lastError =
      "OTLP export to http://collector:4318/v1/logs/v1/logs failed: HTTP 400: Bad Request; the endpoint refused every record: usually a wrong path (the path repeats /v1/logs: …)";
    const s = statusOf({
      logs: { enabled: true, shipping: true, streams: ["php"] },
      ready: { ready: false, reason: `the OTLP endpoint has refused every export for 2 min: ${lastError}` },
      export: {
        endpoint: "http://collector:4318/v1/logs/v1/logs",
        state: "failing",
        failingSinceMs: AT.getTime(),
        refusingSinceMs: AT.getTime(),
        lastError,
        lastSuccessMs: AT.getTime() - 60_000,
        lasting: true,
        streams: {
          php: {
            lastSuccessMs: AT.getTime() - 60_000,
            lastFailureMs: AT.getTime(),
            lastError,
            refused: true,
          },
        },
      },
    });
    expect(s.logs).toMatchObject({ health: "critical", refusing: true, since: AT.toISOString() });
    expect(s.logs.streams[0]).toMatchObject({
      health: "critical",
      summary: expect.stringContaining("refused"),
    });
    expect(s.problems[0]).toEqual({
      count: 1,
      subject: "Log shipping to http://collector:4318/v1/logs/v1/logs",
      health: "critical",
      reason: expect.stringMatching(
        /^the OTLP endpoint answers but refuses every export .*: OTLP export to .* failed: HTTP 400: Bad Request; the endpoint refused every record/,
      ),
      since: AT.toISOString(),
      runbook: expect.stringMatching(/runbook\.md#sitehostexporterlogexportsrefused$/),
    });
    const page = renderLanding(s);
    expect(page).toContain("refuses every export");
    expect(page).toContain("the path repeats /v1/logs");
    expect(page).not.toContain("the OTLP collector takes exports");
  });

  it("with logs and traffic off there is no lock nor checkpoint directory to worry about", () => {
    const plan = {
      sources: [{ source: "domains" as const, requestsPerSecond: 0.1 }],
      total: 0.1,
      budget: 20,
      fits: true,
      sites: 1,
    };
    const s = statusOf({ active: { sitesDiscovered: 1, collectors: [DISCOVERED], plan } });
    expect(s.lock.health).toBe("off");
    expect(s.checkpointDir.health).toBe("off");
    expect(s.logs.health).toBe("off");
    expect(s.problems).toEqual([]);
    expect(s.health).toBe("ok");
  });
});
