/**
 * The platform's clock against the exporter's on the status page: a skew beyond 30 s is a problem
 * that says which way, by how much and where to fix it; within it, or not measured yet, none.
 */
import { describe, expect, it } from "vitest";
import { renderLanding } from "../../../src/server/landing.js";
import { statusOf } from "./helpers.js";

const AT = Date.UTC(2026, 0, 31, 12, 4, 58);

describe("the clock on the status page", () => {
  it("an exporter an hour behind the platform: a warning naming the skew, the fix and the runbook", () => {
    const s = statusOf({ clock: { offsetMs: 3_600_250, samples: 15, atMs: AT } });
    expect(s.clock).toMatchObject({ health: "warning", skewSeconds: 3600.3, samples: 15 });
    expect(s.health).toBe("warning");
    expect(s.problems).toEqual([
      {
        subject: "Clock",
        count: 1,
        health: "warning",
        reason: expect.stringMatching(
          /^the exporter's clock is 3600\.3 s behind the platform's \(more than 30 s\).*NTP, chrony/,
        ),
        since: "2026-01-31T12:04:58.000Z",
        runbook: expect.stringMatching(/runbook\.md#sitehostexporterclockskewed$/),
      },
    ]);
    expect(renderLanding(s)).toContain("the exporter&#39;s clock is 3600.3 s behind the platform&#39;s");
  });

  it("an exporter 45 s ahead is a warning too; 20 s is within the bound", () => {
    const ahead = statusOf({ clock: { offsetMs: -45_000, samples: 3, atMs: AT } });
    expect(ahead.problems.map((p) => p.reason)).toEqual([
      expect.stringContaining("the exporter's clock is 45 s ahead of the platform's"),
    ]);
    const close = statusOf({ clock: { offsetMs: -20_000, samples: 15, atMs: AT } });
    expect(close.clock).toMatchObject({ health: "ok", skewSeconds: -20 });
    expect(close.problems).toEqual([]);
  });

  it("before the first answer with a Date header: pending, not a problem", () => {
    const s = statusOf({ clock: undefined });
    expect(s.clock.health).toBe("pending");
    expect(s.clock.skewSeconds).toBeUndefined();
    expect(s.problems).toEqual([]);
  });
});
