/**
 * Log streams that cannot advance, as the status page and /-/status show them: by reason with since
 * when, the longest stalled by name, and at fleet scale counts instead of thousands of rows. A stalled
 * stream is a problem with its runbook entry, never "everything works".
 */
import { describe, expect, it } from "vitest";
import type { LogStream } from "../../../src/api/schemas.js";
import { type StallReason, summarizeStalls } from "../../../src/logs/stall.js";
import { renderLanding } from "../../../src/server/landing.js";
import { statusOf } from "./helpers.js";

const AT = Date.UTC(2026, 0, 31, 12, 0, 0);
const LOGS = { enabled: true, shipping: true, streams: ["php", "server", "activity"] } as const;

interface Fake {
  site: { id: number; name: string };
  stream: LogStream;
  stall?: { reason: StallReason; sinceMs: number; detail: string };
}

function stalled(id: number, reason: StallReason, minutesAgo: number, detail = "HTTP 503"): Fake {
  return {
    site: { id, name: `site-${id}` },
    stream: "php",
    stall: { reason, sinceMs: AT - minutesAgo * 60_000, detail },
  };
}

function withStreams(streams: Fake[]) {
  return statusOf({
    logs: LOGS,
    active: { sitesDiscovered: streams.length, collectors: [], logStalls: summarizeStalls(streams) },
  });
}

describe("stalled log streams on the status page", () => {
  it("a page over the size limit: the stream, its reason and since when, a warning linking the runbook", () => {
    const s = withStreams([
      { site: { id: 1, name: "quiet" }, stream: "server" },
      stalled(
        7,
        "too_large",
        12,
        "GET https://api.example/v1/sites/7/logs/php: response body larger than 33554432 bytes (api.maxResponseSize)",
      ),
    ]);
    expect(s.health).toBe("warning");
    expect(s.logStreams).toMatchObject({
      health: "warning",
      stalled: 1,
      byReason: { too_large: 1 },
      first: [
        {
          siteId: 7,
          site: "site-7",
          stream: "php",
          reason: "too_large",
          since: "2026-01-31T11:48:00.000Z",
          detail: expect.stringContaining("api.maxResponseSize"),
        },
      ],
    });
    expect(s.problems).toEqual([
      {
        subject: "Log streams stalled",
        count: 1,
        health: "warning",
        reason: expect.stringMatching(
          /^1 log stream cannot advance: 1 by a log page over api\.maxResponseSize \(too_large\); the longest: site-7 php/,
        ),
        since: "2026-01-31T11:48:00.000Z",
        runbook: expect.stringMatching(/runbook\.md#sitehostexporterlogstreamsstalled$/),
      },
    ]);
    const page = renderLanding(s);
    expect(page).toContain("Stalled log streams");
    expect(page).toContain("<td>site-7 <small>(7)</small></td><td>php</td><td><code>too_large</code></td>");
  });

  it("a corrupt checkpoint: critical, naming the file and what to do", () => {
    const detail =
      "checkpoint /var/lib/sitehost/site-7-php.json is unreadable (not JSON); this stream is stopped so nothing is shipped twice or skipped. To reset it, stop the exporter, delete the file (and its .journal), …";
    const s = withStreams([stalled(7, "checkpoint_corrupt", 3, detail)]);
    expect(s.health).toBe("critical");
    expect(s.problems[0]).toMatchObject({
      subject: "Log streams stalled",
      health: "critical",
      reason: expect.stringContaining("/var/lib/sitehost/site-7-php.json"),
    });
    expect(renderLanding(s)).toContain("delete the file (and its .journal)");
  });

  it("thousands of stalled streams (a revoked token): counts by reason and the ten longest stalled, not a row each", () => {
    const streams: Fake[] = [];
    for (let id = 1; id <= 5000; id++) streams.push(stalled(id, "read_failures", (id * 7919) % 600));
    streams.push(stalled(9001, "malformed", 700), { ...stalled(0, "too_large", 800), stream: "activity" });
    const s = withStreams(streams);
    expect(s.logStreams.stalled).toBe(5002);
    expect(s.logStreams.byReason).toEqual({ read_failures: 5000, malformed: 1, too_large: 1 });
    expect(s.logStreams.first).toHaveLength(10);
    // The longest stalled first: the account's activity log (800 min), then the malformed one (700).
    expect(s.logStreams.first.slice(0, 2).map((f) => [f.site, f.stream, f.reason])).toEqual([
      ["account", "activity", "too_large"],
      ["site-9001", "php", "malformed"],
    ]);
    const since = s.logStreams.first.map((f) => f.since);
    expect([...since].sort()).toEqual(since);
    expect(s.logStreams.summary).toContain(
      "5002 log streams cannot advance: 1 by a log page over api.maxResponseSize (too_large), 1 by nothing but malformed entries (malformed), 5000 by reads that keep failing (read_failures)",
    );
    const page = renderLanding(s);
    expect(page.match(/<code>read_failures<\/code>/g)).toHaveLength(8);
    expect(page).toContain("and 4992 more (counted by reason above)");
    expect(JSON.stringify(s).length).toBeLessThan(20_000);
  });

  it("no stalled stream: no problem; standing by or logs off: nothing claimed", () => {
    const healthy = withStreams([{ site: { id: 1, name: "a" }, stream: "php" }]);
    expect(healthy.logStreams).toMatchObject({ health: "ok", stalled: 0, first: [] });
    expect(healthy.problems).toEqual([]);
    expect(statusOf({ logs: LOGS }).logStreams.health).toBe("pending");
    expect(statusOf().logStreams.health).toBe("off");
  });
});
